package damage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// A published dataset with a deleted or garbled Parquet file is never
// "up to date": the next `curate dataset` rebuilds it, and --check names
// what is wrong without panicking.
func TestDamagedDatasetIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	shards, _ := filepath.Glob(dir + "/ds/data/*.parquet")
	if len(shards) == 0 {
		t.Fatal("no shards")
	}
	good := clitest.TreeDigest(t, dir+"/ds")
	damages := []struct {
		name   string
		damage func(string) error
		want   string
	}{
		{"deleted", os.Remove, "missing"},
		{"garbled", func(p string) error { return os.WriteFile(p, []byte("PAR1 garbage PAR1"), 0o644) }, "unreadable"},
		{"truncated", func(p string) error { return os.Truncate(p, 100) }, "unreadable"},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			if err := d.damage(shards[0]); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := clitest.Run(t, nil, "dataset", "--check", dir+"/ds")
			if code == 0 || strings.Contains(stderr, "panic") || !strings.Contains(out+stderr, filepath.Base(shards[0])) || !strings.Contains(out+stderr, d.want) {
				t.Errorf("check of a dataset with a %s shard: exit %d\n%s%s", d.name, code, out, stderr)
			}
			for _, args := range [][]string{{"export", "--out", dir + "/x", dir + "/ds"}, {"report", dir + "/ds"}} {
				if code, _, stderr := clitest.Run(t, nil, args...); code == 0 || !strings.Contains(stderr, "damaged") {
					t.Errorf("curate %s of a damaged dataset: exit %d, %q", args[0], code, stderr)
				}
			}
			code, _, stderr = clitest.Run(t, env, "dataset", "--out", dir+"/ds")
			if code != 0 || strings.Contains(stderr, "up to date") {
				t.Fatalf("dataset after damage: exit %d\n%s", code, stderr)
			}
			if code, out, stderr := clitest.Run(t, nil, "dataset", "--check", dir+"/ds"); code != 0 {
				t.Fatalf("after the rebuild: exit %d\n%s%s", code, out, stderr)
			}
			if clitest.TreeDigest(t, dir+"/ds") != good {
				t.Error("the rebuilt dataset differs from the original")
			}
		})
	}
}
