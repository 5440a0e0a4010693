package publishing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/sim/demo"
)

// userFiles are what a user keeps in an output directory beside what
// curate published: a git history, notes, and a symlink to them.
var userFiles = map[string]string{
	".git/HEAD":                   "ref: refs/heads/main\n",
	".git/objects/ab/cdef0123456": "a git object",
	"notes.md":                    "what I learned from this dataset",
	"analysis/plots.py":           "import matplotlib",
}

func plantUserFiles(t *testing.T, dir string) {
	t.Helper()
	for rel, body := range userFiles {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("notes.md", filepath.Join(dir, "NOTES")); err != nil {
		t.Fatal(err)
	}
}

func checkUserFiles(t *testing.T, dir string) {
	t.Helper()
	for rel, body := range userFiles {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil || string(b) != body {
			t.Errorf("%s in %s: %q, %v; want %q", rel, dir, b, err, body)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "NOTES")); err != nil || target != "notes.md" {
		t.Errorf("the NOTES symlink in %s: %q %v", dir, target, err)
	}
}

// Every command that publishes keeps the files a user keeps in its output
// directory across a republish: what the manifest does not list survives
// the atomic swap, and the publication still verifies (and a dataset still
// passes --check). A directory curate did not publish is refused with exit
// 2, naming what it holds, before any request or write.
func TestPublishKeepsUserFiles(t *testing.T) {
	dir := t.TempDir()
	env, requests := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	ds := dir + "/ds"
	ids := demo.TargetIDs()
	topicsArgs := []string{"topics", "--iou", "0.25", "--min-support", "2", "--min-background", "4", "--splits", "train,test"}
	refresh := func(n int) []string {
		return []string{"refresh", "--store", dir + "/rstore", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--targets", clitest.WriteTargets(t, ids[:n])}
	}
	tests := []struct {
		name string
		// first publishes into out; again publishes something else there.
		first, again func(out string) []string
		// dataset: out is a dataset (--check); in names the directory
		// whose user's files to plant (out itself when empty).
		dataset bool
		in      string
	}{
		{name: "dataset", dataset: true,
			first: func(out string) []string { return []string{"dataset", "--out", out} },
			again: func(out string) []string { return []string{"dataset", "--out", out, "--test-from", "2025-09-01"} }},
		{name: "run", dataset: true,
			first: func(out string) []string { return clitest.DemoRunArgs(dir, "--out", out) },
			again: func(out string) []string { return clitest.DemoRunArgs(dir, "--out", out, "--test-from", "2025-09-01") }},
		{name: "report into the dataset", dataset: true,
			first: func(out string) []string { return []string{"dataset", "--out", out} },
			again: func(out string) []string { return []string{"report", out} }},
		{name: "report",
			first: func(out string) []string { return []string{"report", "--out", out, ds} },
			again: func(out string) []string { return []string{"report", "--out", out, ds} }},
		{name: "export",
			first: func(out string) []string { return []string{"export", "--format", "verl-rl", "--out", out, ds} },
			again: func(out string) []string {
				return []string{"export", "--format", "verl-rl", "--encoding", "jsonl", "--out", out, ds}
			}},
		{name: "sft",
			first: func(out string) []string { return []string{"sft", "--dataset", ds, "--out", out} },
			again: func(out string) []string { return []string{"sft", "--dataset", ds, "--out", out, "--no-think"} }},
		{name: "topics",
			first: func(out string) []string { return append(topicsArgs, "--out", out) },
			again: func(out string) []string { return append(topicsArgs, "--out", out, "--iou", "0.3") }},
		{name: "pairs",
			first: func(out string) []string { return []string{"pairs", "--out", out} },
			again: func(out string) []string { return []string{"pairs", "--out", out, "--min-gap", "5"} }},
		// refresh publishes versions beside each other: the user's files
		// in the root and in the latest version stay where they are.
		{name: "refresh", in: "latest",
			first: func(out string) []string { return append(refresh(4), "--out", out) },
			again: func(out string) []string { return append(refresh(6), "--out", out) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if code, _, stderr := clitest.Run(t, env, tt.first(out)...); code != 0 {
				t.Fatalf("first publish: exit %d\n%s", code, stderr)
			}
			plantUserFiles(t, out)
			in := out
			if tt.in != "" {
				var err error
				if in, err = filepath.EvalSymlinks(filepath.Join(out, tt.in)); err != nil {
					t.Fatal(err)
				}
				plantUserFiles(t, in)
			}
			if code, _, stderr := clitest.Run(t, env, tt.again(out)...); code != 0 {
				t.Fatalf("republish: exit %d\n%s", code, stderr)
			}
			checkUserFiles(t, out)
			checkUserFiles(t, in)
			pub := out
			if tt.in != "" {
				pub = filepath.Join(out, tt.in)
				if real, _ := filepath.EvalSymlinks(pub); real == in {
					t.Fatal("republish published no new version")
				}
			}
			if _, problems, err := publish.Verify(pub); err != nil || len(problems) > 0 {
				t.Errorf("the publication does not verify: %v %v", problems, err)
			}
			if tt.dataset || tt.in != "" {
				if code, stdout, stderr := clitest.Run(t, nil, "dataset", "--check", pub); code != 0 {
					t.Errorf("--check: exit %d\n%s%s", code, stdout, stderr)
				}
			}
			if tt.name == "dataset" {
				// The user's files neither damage the dataset nor make it
				// out of date.
				if code, stdout, _ := clitest.Run(t, env, tt.again(out)...); code != 0 || !strings.Contains(stdout, "is up to date") {
					t.Errorf("a third publish with nothing changed: exit %d\n%s", code, stdout)
				}
			}
		})
		// A directory curate did not publish: refused, untouched.
		t.Run(tt.name+"/not curate's", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			plantUserFiles(t, out)
			n := requests.Load()
			args := tt.first(out)
			if tt.name == "run" {
				args = append(args, "--store", filepath.Join(t.TempDir(), "store")) // a store that would ask for everything
			}
			code, _, stderr := clitest.Run(t, env, args...)
			if tt.in != "" {
				// refresh publishes beside what out holds.
				if code != 0 {
					t.Fatalf("refresh into a directory of the user's: exit %d\n%s", code, stderr)
				}
				checkUserFiles(t, out)
				return
			}
			if code != 2 || !strings.Contains(stderr, "refusing to replace") || !strings.Contains(stderr, ".git/") || !strings.Contains(stderr, "notes.md") {
				t.Errorf("exit %d, want 2 naming what the directory holds:\n%s", code, stderr)
			}
			if tt.name == "run" && requests.Load() != n {
				t.Errorf("%d requests before refusing", requests.Load()-n)
			}
			checkUserFiles(t, out)
			if entries, _ := os.ReadDir(out); len(entries) != 4 {
				t.Errorf("the directory holds %d entries, want the user's 4", len(entries))
			}
		})
	}
}

// A file of the user's among the dataset's shards would be read as part
// of it: --check names it, and the next publish refuses (exit 2, naming
// it) rather than delete it; moved away, the dataset publishes again.
func TestUserFileAmongShards(t *testing.T) {
	dir := t.TempDir()
	env, requests := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	stray := dir + "/ds/data/my-notes.txt"
	if err := os.WriteFile(stray, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := clitest.Run(t, nil, "dataset", "--check", dir+"/ds"); code == 0 || !strings.Contains(stdout, "data/my-notes.txt is not in the manifest") {
		t.Errorf("--check: exit %d\n%s", code, stdout)
	}
	n := requests.Load()
	for _, args := range [][]string{{"dataset", "--out", dir + "/ds", "--test-from", "2025-09-01"}, clitest.DemoRunArgs(dir, "--test-from", "2025-09-01")} {
		code, _, stderr := clitest.Run(t, env, args...)
		if code != 2 || !strings.Contains(stderr, "data/my-notes.txt, inside the directories it publishes, is not in its manifest") {
			t.Errorf("curate %s: exit %d, want 2 naming the file:\n%s", args[0], code, stderr)
		}
		if b, err := os.ReadFile(stray); err != nil || string(b) != "mine" {
			t.Fatalf("the user's file: %q %v", b, err)
		}
	}
	if requests.Load() != n {
		t.Errorf("%d requests before refusing", requests.Load()-n)
	}
	if err := os.Rename(stray, dir+"/my-notes.txt"); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := clitest.Run(t, env, "dataset", "--out", dir+"/ds", "--test-from", "2025-09-01"); code != 0 {
		t.Errorf("after moving it away: exit %d\n%s", code, stderr)
	}
}

// refresh switches ROOT/latest by renaming a new symlink over it: a latest
// of the user's (a file or a directory) is refused before any request,
// and kept; a second refresh aimed at the same root is refused before any
// request too.
func TestRefreshRefusesLatestOfUser(t *testing.T) {
	dir := t.TempDir()
	env, requests := clitest.DemoWorld(t, dir)
	args := func(root string) []string {
		return []string{"refresh", "--store", dir + "/rstore", "--arxiv-interval", "1ms", "--s2-interval", "1ms",
			"--targets", clitest.WriteTargets(t, demo.TargetIDs()[:2]), "--out", root}
	}
	root := dir + "/published"
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/latest", []byte("my pointer"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := clitest.Run(t, env, args(root)...)
	if code != 2 || !strings.Contains(stderr, root+"/latest is not the symlink refresh switches") {
		t.Errorf("exit %d, want 2 naming latest:\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(root + "/latest"); string(b) != "my pointer" {
		t.Errorf("latest: %q", b)
	}
	unlock, err := publish.Lock(dir + "/other")
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = clitest.Run(t, env, args(dir+"/other")...)
	unlock()
	if code != 2 || !strings.Contains(stderr, "another curate is publishing there") {
		t.Errorf("a refresh while another holds the root: exit %d\n%s", code, stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests before refusing", n)
	}
}
