package publishing

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// buildVersion builds curate with its version set as the Makefile sets it
// ("" keeps the default), into a temporary directory.
func buildVersion(t *testing.T, version string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "curate")
	args := []string{"build", "-o", bin}
	if version != "" {
		args = append(args, "-ldflags", "-X github.com/groundwork/curate/cmd/curate/internal/cli.version="+version)
	}
	out, err := exec.Command("go", append(args, "github.com/groundwork/curate/cmd/curate")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// parquetFiles reads the Parquet files under dir by their path in it.
func parquetFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no Parquet file in %s", dir)
	}
	return out
}

func createdBy(t *testing.T, b []byte) string {
	t.Helper()
	f, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f.Metadata().CreatedBy
}

// TestBuildsWriteTheSameBytes: a dataset and an export written by curate
// run in this test binary and by the binary go build makes, at the same
// version, are the same bytes: Parquet's created_by names curate and its
// version, not what the build information gives (parquet-go's default:
// its module version in a built binary, its bare name in a test binary).
// A binary built with another version says that version.
func TestBuildsWriteTheSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate twice")
	}
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	store := env["CURATE_STORE"]
	write := func(name string, run func(args ...string) (int, string)) map[string][]byte {
		t.Helper()
		out := filepath.Join(dir, name)
		for _, args := range [][]string{
			{"dataset", "--store", store, "--out", filepath.Join(out, "ds")},
			{"export", "--format", "innoeval", "--out", filepath.Join(out, "innoeval"), filepath.Join(out, "ds")},
		} {
			if code, stderr := run(args...); code != 0 {
				t.Fatalf("%s %v: exit %d\n%s", name, args, code, stderr)
			}
		}
		return parquetFiles(t, out)
	}
	inProcess := write("in-process", func(args ...string) (int, string) {
		code, _, stderr := clitest.Run(t, env, args...)
		return code, stderr
	})
	binary := func(bin string) func(args ...string) (int, string) {
		return func(args ...string) (int, string) {
			p := clitest.Start(t, bin, args...)
			if !p.Wait(10 * time.Minute) {
				t.Fatalf("%v did not exit", args)
			}
			return p.Code, p.Stderr.String()
		}
	}
	built := write("built", binary(buildVersion(t, "")))
	for name, b := range inProcess {
		if got := createdBy(t, b); !strings.HasPrefix(got, "curate version ") {
			t.Errorf("%s: created_by %q", name, got)
		}
		if string(built[name]) != string(b) {
			t.Errorf("%s differs between the test binary (created_by %q) and the built one (%q)", name, createdBy(t, b), createdBy(t, built[name]))
		}
	}
	for name, b := range write("other-version", binary(buildVersion(t, "9.9.9-test"))) {
		if got := createdBy(t, b); got != "curate version 9.9.9-test" {
			t.Errorf("%s written at version 9.9.9-test: created_by %q", name, got)
		}
	}
}
