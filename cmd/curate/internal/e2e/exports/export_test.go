package exports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/reward"
)

// TestGateAcceptsOwnExports: `curate gate --strict` passes every row of
// curate's own SFT exports, in Parquet and JSONL, at the K each row
// carries; the RL exports hold prompts and are refused with a reason.
func TestGateAcceptsOwnExports(t *testing.T) {
	ds := demoDataset(t)
	dir := t.TempDir()
	for _, format := range dataset.ExportFormats() {
		for _, enc := range []string{"parquet", "jsonl"} {
			out := filepath.Join(dir, format+"-"+enc)
			if code, _, stderr := clitest.Run(t, nil, "export", "--format", format, "--encoding", enc, "--out", out, ds); code != 0 {
				t.Fatalf("export %s %s: exit %d\n%s", format, enc, code, stderr)
			}
			file := filepath.Join(out, "train."+enc)
			code, stdout, stderr := clitest.Run(t, nil, "gate", "--strict", file)
			switch format {
			case dataset.FormatVerlRL, dataset.FormatTRLGRPO:
				if code == 0 || !strings.Contains(stderr, "hold prompts, not completions") {
					t.Errorf("gate on the %s export: exit %d, %q", format, code, stderr)
				}
				if b, err := os.ReadFile(filepath.Join(out, reward.ExportName)); err != nil || len(b) == 0 {
					t.Errorf("the %s export ships no reward: %v", format, err)
				}
			default:
				if code != 0 || !strings.Contains(stdout, "passed (100.0%), 0 failed") {
					t.Errorf("gate --strict on the %s %s export: exit %d\n%s%s", format, enc, code, stdout, stderr)
				}
			}
		}
	}
}
