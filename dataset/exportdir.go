package dataset

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/reward"
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
	// Counter counts the tokens of the lengths the card gives trainers'
	// settings for, CounterName saying what it is ("tokenizer
	// tokenizer.json"); nil counts with TokenEstimate.
	Counter     TokenCounter
	CounterName string
	// Version (curate's) and Inputs (what the export was made from) go
	// into the manifest.
	Version, Inputs string
}

// ExportFile is one file of an export and the rows it holds.
type ExportFile struct {
	Name  string
	Split string // a dataset split or SplitAll
	Rows  int
	// Lengths are the longest rows' token counts, which the trainers'
	// length settings must allow.
	Lengths ExportLengths
}

// WriteExport publishes an export of instances at out, through
// publish.Dir: one file per split by default (train.parquet and
// test.parquet; .jsonl with EncodingJSONL), so a trainer pointed at the
// train file never sees a test target; or the one split asked; or, with
// SplitAll, one all.parquet whose rows keep their split and whose
// extra_info.index is unique in the file. A README.md says which splits
// the export draws on, which trainer each file is for with the exact
// config keys, and the lengths its longest rows need; the RL formats ship
// the reward (reward.py) that scores them. The manifest names the splits.
func WriteExport(ctx context.Context, out string, instances []record.Instance, o ExportDirOptions) ([]ExportFile, error) {
	parts, err := ExportSplits(o.Split)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", out, err)
	}
	if err := CheckFormat(o.Format); err != nil {
		return nil, fmt.Errorf("export %s: %w", out, err)
	}
	enc := cmp.Or(o.Encoding, EncodingParquet)
	counter, counterName := o.Counter, o.CounterName
	if counter == nil {
		counter, counterName = TokenEstimate{}, ""
	}
	var files []ExportFile
	rows := map[string]any{}
	drew := map[string]bool{}
	for _, p := range parts {
		var ins []record.Instance
		for _, in := range instances {
			if p == SplitAll || in.Split == p {
				ins = append(ins, in)
				drew[in.Split] = true
			}
		}
		r, err := exportRows(ins, o.Format, o.ExportOptions)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", out, err)
		}
		rows[p] = r
		files = append(files, ExportFile{Name: p + "." + enc, Split: p, Rows: len(ins), Lengths: measure(r, counter)})
	}
	var splits []string
	for _, s := range []string{record.SplitTrain, record.SplitTest} {
		if drew[s] {
			splits = append(splits, s)
		}
	}
	card := exportCard(exportCardData{Format: o.Format, Files: files, Splits: splits, Counter: counterName, Encoding: enc})
	_, err = publish.Dir(ctx, out, publish.Options{
		Kind: ExportKind, Version: o.Version, Inputs: o.Inputs, Splits: splits,
		Describe: "an export (no " + publish.ManifestFile + " of kind export)",
	}, func(tmp string) error {
		for _, f := range files {
			if err := atomicdir.WriteFileFunc(filepath.Join(tmp, f.Name), func(w io.Writer) error {
				return encodeAny(w, enc, o.Compression, rows[f.Split])
			}); err != nil {
				return err
			}
		}
		if isRL(o.Format) {
			if err := atomicdir.WriteFileSync(filepath.Join(tmp, reward.ExportName), reward.Source()); err != nil {
				return err
			}
		}
		return atomicdir.WriteFileSync(filepath.Join(tmp, ReadmeFile), []byte(card))
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", out, err)
	}
	return files, nil
}

// isRL reports whether format's rows are prompts for RL, scored by the
// shipped reward.
func isRL(format string) bool { return format == FormatVerlRL || format == FormatTRLGRPO }
