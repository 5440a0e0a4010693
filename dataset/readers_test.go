package dataset

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/record"
)

// TestReadersReadEveryOutput writes the dataset and every Parquet export
// with each codec and reads them back with Arrow's Go reader, hyparquet
// and DuckDB: each must read exactly the rows written, and the files must
// carry the codec asked for (Snappy by default).
func TestReadersReadEveryOutput(t *testing.T) {
	targets := corpus()
	// Nulls in optional columns, and text that JSON escapes.
	targets[0].Graph.Edges[1].DOI, targets[0].Graph.Edges[1].S2PaperID, targets[0].Graph.Edges[1].Year = nil, nil, nil
	targets[1].Gold.CoreClaim = `We claim that <tags> & "quotes" — and ünïcode — survive.`
	r := mustBuild(t, targets, fixedOptions())
	for _, codec := range append([]string{""}, parquetcodec.Names()...) {
		name := codec
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			c, err := parquetcodec.Parse(codec)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ToUpper(c.String())
			if c == parquetcodec.None {
				want = "UNCOMPRESSED"
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "ds")
			writeTestDataset(t, out, r, WriteOptions{RowGroupRows: 2, Compression: c})
			var files []readback.File
			for _, split := range []string{record.SplitTrain, record.SplitTest} {
				var rows []record.Instance
				for _, in := range r.Instances {
					if in.Split == split {
						rows = append(rows, in)
					}
				}
				files = append(files, readback.File{Path: filepath.Join(out, DataDir, shardName(split, 0, 1)), Rows: rows, Codec: want})
			}
			for _, format := range ExportFormats() {
				exp := filepath.Join(dir, "export-"+format)
				if _, err := WriteExport(context.Background(), exp, r.Instances, ExportDirOptions{
					ExportOptions: ExportOptions{Compression: c}, Format: format, Split: SplitAll,
				}); err != nil {
					t.Fatal(err)
				}
				ins, splits := assign(r.Instances, SplitAll, 0)
				rows, err := exportRows(ins, splits, format, ExportOptions{})
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, readback.File{Path: filepath.Join(exp, "all.parquet"), Rows: rows, Codec: want})
			}
			readback.Check(t, files...)
		})
	}
}
