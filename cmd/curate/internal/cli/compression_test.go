package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// TestCompressionFlag: every command that writes Parquet takes
// --compression and refuses an unknown codec before it reads or writes
// anything.
func TestCompressionFlag(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"dataset", "--store", filepath.Join(dir, "nostore"), "--out", out},
		{"run", "--store", filepath.Join(dir, "nostore"), "--out", out, "2401.00001"},
		{"export", "--out", out, filepath.Join(dir, "nodataset")},
		{"sft", "--dataset", filepath.Join(dir, "nodataset"), "--out", out},
		{"topics", "--store", filepath.Join(dir, "nostore"), "--out", out},
		{"pairs", "--store", filepath.Join(dir, "nostore"), "--out", out},
	} {
		code, _, stderr := clitest.Run(t, nil, append(args, "--compression", "lz4")...)
		if code != 2 || !strings.Contains(stderr, `--compression "lz4": want snappy, zstd, gzip, none`) {
			t.Errorf("curate %v --compression lz4: exit %d, stderr %q; want exit 2 naming the codecs", args, code, stderr)
		}
		for _, p := range []string{out, filepath.Join(dir, "nostore")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("curate %v --compression lz4 created %s", args, p)
			}
		}
	}
}
