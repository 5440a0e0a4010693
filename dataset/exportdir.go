package dataset

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/reward"
)

// ExportKind is the kind an export's manifest names.
const ExportKind = "export"

// SplitAll asks an export for one file holding every split, each row
// keeping its split (extra_info.split, or the split column of the other
// layouts).
const SplitAll = "all"

// ExportSplits checks the --split of an export and returns the files'
// splits: "" (one file per split, the default), "train", "validation",
// "test" or SplitAll.
func ExportSplits(split string) ([]string, error) {
	switch split {
	case "":
		return []string{record.SplitTrain, holdout.SplitValidation, record.SplitTest}, nil
	case record.SplitTrain, holdout.SplitValidation, record.SplitTest, SplitAll:
		return []string{split}, nil
	}
	return nil, fmt.Errorf("split %q: want %s, %s, %s or %s (default: one file per split)", split, record.SplitTrain, holdout.SplitValidation, record.SplitTest, SplitAll)
}

// assign returns the instances an export file of part holds (a split, or
// SplitAll) and each one's export split: a test instance is test; of the
// train instances, the valSize that package holdout draws (0: its
// default; negative: none) are validation, the others train.
func assign(instances []record.Instance, part string, valSize int) ([]record.Instance, []string) {
	if valSize == 0 {
		valSize = holdout.DefaultSize
	}
	var train []string
	for _, in := range instances {
		if in.Split == record.SplitTrain {
			train = append(train, in.InstanceID)
		}
	}
	val := holdout.Validation(train, valSize)
	var ins []record.Instance
	var splits []string
	for _, in := range instances {
		s := in.Split
		if s == record.SplitTrain && val[in.InstanceID] {
			s = holdout.SplitValidation
		}
		if part == SplitAll || part == s {
			ins, splits = append(ins, in), append(splits, s)
		}
	}
	return ins, splits
}

// ExportDirOptions configure WriteExport.
type ExportDirOptions struct {
	ExportOptions
	Format string
	// Split is "" (a file per split), "train", "validation", "test" or
	// SplitAll.
	Split string
	// ValSize is how many train instances the validation split holds out
	// (package holdout's draw, at most half; 0: holdout.DefaultSize;
	// negative: none).
	ValSize int
	// Counter counts the tokens of the lengths the card gives trainers'
	// settings for, CounterName saying what it is ("tokenizer
	// tokenizer.json"); nil counts with TokenEstimate.
	Counter     TokenCounter
	CounterName string
	// Inputs (what the export was made from) goes into the manifest, as
	// ExportOptions.Version (curate's) does.
	Inputs string
}

// ExportFile is one file of an export and the rows it holds.
type ExportFile struct {
	Name  string
	Split string // an export split (train, validation, test) or SplitAll
	Rows  int
	// Lengths are the longest rows' token counts, which the trainers'
	// length settings must allow.
	Lengths ExportLengths
}

// WriteExport publishes an export of instances at out, through
// publish.Dir: one file per split by default (train.parquet,
// validation.parquet and test.parquet; .jsonl with EncodingJSONL): the
// validation split is held out of the dataset's train split (package
// holdout), so a trainer pointed at the train file never sees a
// validation or test target and chooses checkpoints without the test
// split; or the one split asked; or, with SplitAll, one all.parquet whose
// rows keep their split and whose extra_info.index is unique in the file. A README.md says which splits
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
	var leftOut []string
	if o.Format == FormatInnoEval {
		if leftOut, err = incompleteIdeas(instances); err != nil {
			return nil, fmt.Errorf("export %s: %w", out, err)
		}
	}
	var files []ExportFile
	rows := map[string]any{}
	drew := map[string]bool{}
	valRows := 0
	for _, p := range parts {
		ins, splits := assign(instances, p, o.ValSize)
		for i, in := range ins {
			if slices.Contains(leftOut, in.InstanceID) {
				continue
			}
			drew[in.Split] = true
			if splits[i] == holdout.SplitValidation {
				valRows++
			}
		}
		r, err := exportRows(ins, splits, o.Format, o.ExportOptions)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", out, err)
		}
		rows[p] = r
		files = append(files, ExportFile{Name: p + "." + enc, Split: p, Rows: reflect.ValueOf(r).Len(), Lengths: measure(r, counter)})
	}
	var splits []string
	for _, s := range []string{record.SplitTrain, record.SplitTest} {
		if drew[s] {
			splits = append(splits, s)
		}
	}
	card := exportCard(exportCardData{Format: o.Format, Files: files, Splits: splits, Counter: counterName, Encoding: enc, ValRows: valRows, LeftOut: leftOut})
	_, err = publish.Dir(ctx, out, publish.Options{
		Kind: ExportKind, Version: o.Version, Inputs: o.Inputs, Splits: splits,
		Describe: "an export (no " + publish.ManifestFile + " of kind export)",
	}, func(tmp string) error {
		for _, f := range files {
			if err := atomicdir.WriteFileFunc(filepath.Join(tmp, f.Name), func(w io.Writer) error {
				return encodeAny(w, enc, WriteOptions{Compression: o.Compression, Version: o.Version}, rows[f.Split])
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
