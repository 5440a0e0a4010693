package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/sft/tokenizer"
)

// What the commands that work from a store's dataset or a published one
// call: build and publish it (Dataset), re-verify it (CheckDataset),
// report on it (Report), export it for a trainer (Export).

// PublishDataset builds the dataset of the store in dir (which must be there)
// and publishes it, under the store's lock (see BuildDataset).
func PublishDataset(ctx context.Context, dir, version string, opt DatasetOptions) (*DatasetOutcome, error) {
	st, err := OpenStore(ctx, dir, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	unlock, err := LockStore(st)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return BuildDataset(ctx, st, version, opt)
}

// CheckDataset re-verifies the published dataset in dir from its files
// alone. A dataset that breaks a rule (contamination, an invalid row) is
// ErrIncomplete; one that cannot be read is ErrCannotRun. The report is
// there whenever the files could be read.
func CheckDataset(ctx context.Context, dir string) (*dataset.CheckReport, error) {
	rep, err := dataset.Check(ctx, dir)
	switch {
	case err == nil:
		return rep, nil
	case errors.Is(err, dataset.ErrContaminated), errors.Is(err, dataset.ErrInvalid):
		return rep, Fail(ErrIncomplete, err)
	}
	return rep, Fail(ErrCannotRun, err)
}

// Report writes the HTML report of the published dataset in dir into
// out, or into the dataset itself (republished with the new report, never
// edited in place) when out is empty or the dataset, and returns the
// report's path.
func Report(ctx context.Context, dir, out, version string) (string, error) {
	pub, err := ReadDataset(ctx, dir)
	if err != nil {
		return "", err
	}
	guards, err := dataset.ReadGuards(pub.Dir)
	if err != nil {
		return "", err
	}
	write := func(dir string) error {
		_, err := dataset.ReportGuards(pub.Instances, pub.Dropped, pub.Contamination, guards, dir)
		return err
	}
	if out == "" || sameDir(out, pub.Dir) {
		out = pub.Dir
		err = publish.Amend(ctx, pub.Dir, dataset.ManifestKind, write)
	} else {
		_, err = publish.Dir(ctx, out, publish.Options{Kind: "report", Version: version, Describe: "a report directory"}, write)
	}
	if errors.Is(err, publish.ErrLocked) {
		return "", Fail(ErrCannotRun, err)
	}
	if err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return filepath.Join(out, dataset.ReportHTML), nil
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// ExportOptions configure Export.
type ExportOptions struct {
	Dataset string
	// Out is the directory the export is published in; empty writes the
	// one split Split names to Stdout.
	Out, Format, Encoding, Split string
	// ValSize is the train instances held out as validation (negative:
	// none; 0: the default).
	ValSize     int
	Compression parquetcodec.Codec
	// Tokenizer is a Hugging Face tokenizer.json to count the longest
	// rows' tokens with.
	Tokenizer string
	Version   string
	Stdout    io.Writer
}

// Export writes the published dataset in a trainer's format, one file
// per split (or the one o.Split names), and returns the files written.
func Export(ctx context.Context, o ExportOptions) ([]dataset.ExportFile, error) {
	var counter dataset.TokenCounter
	counterName := ""
	if o.Tokenizer != "" {
		tok, err := tokenizer.Load(o.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("%w: --tokenizer: %v", ErrUsage, err)
		}
		counter, counterName = tok, "the tokenizer "+filepath.Base(o.Tokenizer)
	}
	pub, err := ReadDataset(ctx, o.Dataset)
	if err != nil {
		return nil, err
	}
	// The stages' columns the format reads (innoeval's idea and
	// post-knowledge), which ReadDataset leaves out.
	missing, err := dataset.ReadFields(ctx, pub, dataset.FormatFields(o.Format))
	if err != nil {
		return nil, Fail(ErrCannotRun, err)
	}
	if len(missing) > 0 {
		return nil, Fail(ErrCannotRun, fmt.Errorf("export %s: the dataset %s has no %s column: it was built before the stages that add them (tuples, post-knowledge); run them (curate run) and build the dataset again",
			o.Format, o.Dataset, strings.Join(missing, ", ")))
	}
	opts := dataset.ExportOptions{Encoding: o.Encoding, Compression: o.Compression, Version: o.Version}
	if o.Out == "" {
		return nil, dataset.ExportSplit(pub.Instances, o.Split, o.ValSize, o.Format, o.Stdout, opts)
	}
	manifest, err := os.ReadFile(filepath.Join(pub.Dir, publish.ManifestFile))
	if err != nil {
		return nil, err
	}
	tokDigest := ""
	if o.Tokenizer != "" {
		b, err := os.ReadFile(o.Tokenizer)
		if err != nil {
			return nil, err
		}
		tokDigest = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	inputs := sha256.Sum256(fmt.Appendf(manifest, "\n%s %s %s %s %s %d", o.Format, o.Encoding, o.Split, o.Compression, tokDigest, o.ValSize))
	files, err := dataset.WriteExport(ctx, o.Out, pub.Instances, dataset.ExportDirOptions{
		ExportOptions: opts, Format: o.Format, Split: o.Split, ValSize: o.ValSize, Inputs: hex.EncodeToString(inputs[:]),
		Counter: counter, CounterName: counterName,
	})
	if errors.Is(err, publish.ErrLocked) {
		return nil, Fail(ErrCannotRun, err)
	}
	return files, err
}
