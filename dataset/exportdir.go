package dataset

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
)

// ExportKind is the kind an export's manifest names.
const ExportKind = "export"

// SplitAll asks an export for one file holding every split, each row
// keeping its split (extra_info.split, or the split column of messages).
const SplitAll = "all"

// ExportSplits checks the --split of an export: "" (one file per split,
// the default), "train", "test" or SplitAll.
func ExportSplits(split string) ([]string, error) {
	switch split {
	case "":
		return []string{record.SplitTrain, record.SplitTest}, nil
	case record.SplitTrain, record.SplitTest, SplitAll:
		return []string{split}, nil
	}
	return nil, fmt.Errorf("split %q: want %s, %s or %s (default: one file per split)", split, record.SplitTrain, record.SplitTest, SplitAll)
}

// ExportDirOptions configure WriteExport.
type ExportDirOptions struct {
	ExportOptions
	Format string
	// Split is "" (a file per split), "train", "test" or SplitAll.
	Split string
	// Version (curate's) and Inputs (what the export was made from) go
	// into the manifest.
	Version, Inputs string
}

// ExportFile is one file of an export and the rows it holds.
type ExportFile struct {
	Name  string
	Split string // a dataset split or SplitAll
	Rows  int
}

// WriteExport publishes an export of instances at out, through
// publish.Dir: one file per split by default (train.parquet and
// test.parquet; .jsonl with EncodingJSONL), so a trainer pointed at the
// train file never sees a test target; or the one split asked; or, with
// SplitAll, one all.parquet whose rows keep their split and whose
// extra_info.index is unique in the file. A README.md says which splits
// the export draws on, and the manifest names them.
func WriteExport(ctx context.Context, out string, instances []record.Instance, o ExportDirOptions) ([]ExportFile, error) {
	parts, err := ExportSplits(o.Split)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", out, err)
	}
	enc := cmp.Or(o.Encoding, EncodingParquet)
	var files []ExportFile
	rows := map[string][]record.Instance{}
	for _, p := range parts {
		for _, in := range instances {
			if p == SplitAll || in.Split == p {
				rows[p] = append(rows[p], in)
			}
		}
		files = append(files, ExportFile{Name: p + "." + enc, Split: p, Rows: len(rows[p])})
	}
	drew := map[string]bool{}
	for _, f := range files {
		for _, in := range rows[f.Split] {
			drew[in.Split] = true
		}
	}
	var splits []string
	for _, s := range []string{record.SplitTrain, record.SplitTest} {
		if drew[s] {
			splits = append(splits, s)
		}
	}
	_, err = publish.Dir(ctx, out, publish.Options{
		Kind: ExportKind, Version: o.Version, Inputs: o.Inputs, Splits: splits,
		Describe: "an export (no " + publish.ManifestFile + " of kind export)",
	}, func(tmp string) error {
		for _, f := range files {
			if err := atomicdir.WriteFileFunc(filepath.Join(tmp, f.Name), func(w io.Writer) error {
				return Export(rows[f.Split], o.Format, w, o.ExportOptions)
			}); err != nil {
				return err
			}
		}
		return atomicdir.WriteFileSync(filepath.Join(tmp, ReadmeFile), []byte(exportCard(o.Format, files, splits)))
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", out, err)
	}
	return files, nil
}

// exportCard is the README of an export: what each file holds and which
// splits it draws on.
func exportCard(format string, files []ExportFile, splits []string) string {
	var b strings.Builder
	drawn := "none of the dataset's splits (no rows)"
	if len(splits) > 0 {
		drawn = "the dataset's " + strings.Join(splits, " and ") + " split"
		if len(splits) > 1 {
			drawn += "s"
		}
	}
	fmt.Fprintf(&b, "# Groundwork export: %s\n\nDrawn from %s.\n\n| file | split | rows |\n|---|---|---|\n", format, drawn)
	mixed := false
	for _, f := range files {
		fmt.Fprintf(&b, "| `%s` | %s | %d |\n", f.Name, f.Split, f.Rows)
		mixed = mixed || f.Split == SplitAll
	}
	if slices.Contains(splits, record.SplitTest) {
		b.WriteString("\nThe test split holds the targets first published on or after the dataset's cutoff: it is for evaluation only; never train on it.")
		if mixed {
			b.WriteString(" In the `all` file each row keeps its split (`extra_info.split`; `split` in the messages layout).")
		}
		b.WriteString("\n")
	}
	return b.String()
}
