package damage

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// tinyDisk mounts a tmpfs of size bytes and returns its path, skipping
// when that is not possible (it needs root).
func tinyDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// fill writes a file into dir until its disk is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if f == nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				// Whatever a page or two still takes.
				for len(buf) > 1 {
					buf = buf[:len(buf)/2]
					f.Write(buf)
				}
				return
			}
			t.Fatal(err)
		}
	}
}

// A full disk is one exit status wherever it strikes: 2 (the command could
// not go on; nothing is published), with a message saying the disk is
// full, whether it is the store's disk (during the stages, while the
// dataset is built) or the output's (while a dataset, export, SFT data or
// report is written). What was published stays as it was.
func TestDiskFullOneStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts file systems and runs the pipeline")
	}
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	ds := dir + "/ds"
	tests := []struct {
		name string
		// args runs with mnt, a full disk (seeded by setup before it fills).
		setup func(t *testing.T, mnt string)
		args  func(mnt string) []string
	}{
		{name: "dataset onto a full disk", args: func(mnt string) []string {
			return []string{"dataset", "--out", mnt + "/ds", "--test-from", "2025-09-01"}
		}},
		{name: "run onto a full disk", args: func(mnt string) []string {
			return clitest.DemoRunArgs(dir, "--out", mnt+"/ds", "--test-from", "2025-09-01")
		}},
		{name: "republish onto a full disk",
			setup: func(t *testing.T, mnt string) {
				if code, _, stderr := clitest.Run(t, env, "dataset", "--out", mnt+"/ds"); code != 0 {
					t.Fatalf("first publish: exit %d\n%s", code, stderr)
				}
			},
			args: func(mnt string) []string {
				return []string{"dataset", "--out", mnt + "/ds", "--test-from", "2025-09-01"}
			}},
		{name: "export onto a full disk", args: func(mnt string) []string { return []string{"export", "--out", mnt + "/x", ds} }},
		{name: "report onto a full disk", args: func(mnt string) []string { return []string{"report", "--out", mnt + "/r", ds} }},
		{name: "sft onto a full disk", args: func(mnt string) []string { return []string{"sft", "--dataset", ds, "--out", mnt + "/f"} }},
		{name: "dataset from a store on a full disk",
			setup: func(t *testing.T, mnt string) { copyDir(t, dir+"/store", mnt+"/store") },
			args: func(mnt string) []string {
				return []string{"dataset", "--store", mnt + "/store", "--out", dir + "/elsewhere", "--test-from", "2025-09-01"}
			}},
		{name: "run from a store on a full disk",
			setup: func(t *testing.T, mnt string) { copyDir(t, dir+"/store", mnt+"/store") },
			args: func(mnt string) []string {
				return clitest.DemoRunArgs(dir, "--store", mnt+"/store", "--out", dir+"/elsewhere2", "--test-from", "2025-09-01")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mnt := tinyDisk(t, "4m")
			if tt.setup != nil {
				tt.setup(t, mnt)
			}
			before := clitest.TreeDigest(t, mnt+"/ds", mnt+"/ds.prev")
			fill(t, mnt)
			code, _, stderr := clitest.Run(t, env, tt.args(mnt)...)
			if code != 2 || !strings.Contains(stderr, "a disk is full") && !strings.Contains(stderr, "the disk holding the store") {
				t.Errorf("exit %d, want 2 saying the disk is full:\n%s", code, stderr)
			}
			if after := clitest.TreeDigest(t, mnt+"/ds", mnt+"/ds.prev"); after != before {
				t.Error("the published dataset changed")
			}
			if strings.Count(strings.TrimSpace(lastLine(stderr)), "\n") > 0 {
				t.Errorf("the message spans lines: %q", lastLine(stderr))
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// copyDir copies the tree src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
