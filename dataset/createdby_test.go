package dataset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// footerCreatedBy returns the created_by of the Parquet file at path.
func footerCreatedBy(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pf.Metadata().CreatedBy
}

// TestCreatedBy: every Parquet file of a dataset and of an export names
// curate at the version that wrote it, not what parquet-go reads from the
// binary's build information (a test binary has no module versions, so
// its files differed in bytes from the built binary's); the dataset's
// version defaults to the rows' pipeline version, as the manifest's does.
func TestCreatedBy(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		opts    WriteOptions
		want    string
		exports string
	}{
		{"given", WriteOptions{Version: "1.2.3"}, "curate version 1.2.3", "1.2.3"},
		{"pipeline", WriteOptions{}, "curate version " + r.Options.PipelineVersion, ""},
	} {
		out := filepath.Join(dir, tt.name)
		writeTestDataset(t, out, r, tt.opts)
		shards, _ := filepath.Glob(filepath.Join(out, DataDir, "*.parquet"))
		if len(shards) == 0 {
			t.Fatalf("%s: no shard", tt.name)
		}
		for _, s := range shards {
			if got := footerCreatedBy(t, s); got != tt.want {
				t.Errorf("%s: %s created_by %q, want %q", tt.name, filepath.Base(s), got, tt.want)
			}
		}
		exp := filepath.Join(dir, tt.name+"-export")
		files, err := WriteExport(context.Background(), exp, r.Instances, ExportDirOptions{Format: FormatVerlRL, ExportOptions: ExportOptions{Version: tt.exports}})
		if err != nil {
			t.Fatal(err)
		}
		want := "curate"
		if tt.exports != "" {
			want += " version " + tt.exports
		}
		for _, f := range files {
			if got := footerCreatedBy(t, filepath.Join(exp, f.Name)); got != want {
				t.Errorf("%s: export %s created_by %q, want %q", tt.name, f.Name, got, want)
			}
		}
	}
	if r.Options.PipelineVersion == "" {
		t.Fatal("the test's rows have no pipeline version")
	}
}
