package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// DatasetOptions configure BuildDataset.
type DatasetOptions struct {
	// Out is the dataset directory (STORE/dataset when empty).
	Out string
	// Keys are the targets (store keys); nil means every target with
	// edges.
	Keys    []string
	Options dataset.Options
	// ShardRows, JSONL, Report and Compression are dataset.WriteOptions'.
	ShardRows   int
	JSONL       bool
	Report      bool
	Compression parquetcodec.Codec
	// Locked says the caller holds Out's publishing lock (HoldOutput).
	Locked bool
}

// DatasetOutcome is what BuildDataset did.
type DatasetOutcome struct {
	Out string
	// UpToDate says Out already held the dataset of these inputs (its
	// files verified against its manifest): nothing was written.
	UpToDate bool
	Result   *dataset.Result
}

// BuildDataset builds the dataset from the store (which the caller has
// locked) and publishes it at opt.Out through the publish path, checked
// and with its report, unless Out already holds the dataset of the same
// inputs. Another process publishing there is ErrCannotRun.
func BuildDataset(ctx context.Context, st *store.Store, version string, opt DatasetOptions) (*DatasetOutcome, error) {
	return builtin().buildDataset(ctx, st, version, opt)
}

func (t Table) buildDataset(ctx context.Context, st *store.Store, version string, opt DatasetOptions) (*DatasetOutcome, error) {
	out := DatasetDir(st, opt.Out)
	res := &DatasetOutcome{Out: out}
	digest, err := t.inputsDigest(ctx, st, version, opt.Keys, opt.Options, opt.Compression)
	if err != nil {
		return nil, lostInput(err)
	}
	if publish.UpToDate(out, dataset.ManifestKind, version, digest) {
		res.UpToDate = true
		return res, nil
	}
	if res.Result, err = t.loadAndBuild(ctx, st, opt.Keys, opt.Options); err != nil {
		return nil, lostInput(err)
	}
	// The counts, dropped targets and contamination report outlive it.
	defer res.Result.Close()
	if c := res.Result.Counts(); c.Train+c.Test == 0 && publishedDataset(out) {
		// An empty dataset is never better than the one published (every
		// target failed, waits or was dropped): keep it, and say why.
		return nil, Fail(ErrIncomplete, fmt.Errorf("%w (%s); %s is left as it was", ErrNothingToPublish, droppedText(res.Result.Dropped), out))
	}
	lic, err := Licenses(ctx, st, res.Result)
	if err != nil {
		return nil, err
	}
	published, err := dataset.Write(ctx, out, res.Result, dataset.WriteOptions{
		ShardRows: opt.ShardRows, JSONL: opt.JSONL, Report: opt.Report, Version: version, Inputs: digest, Compression: opt.Compression,
		Licenses: lic, Locked: opt.Locked,
	})
	switch {
	case errors.Is(err, publish.ErrLocked):
		return nil, Fail(ErrCannotRun, err)
	case err != nil:
		return nil, err
	}
	res.UpToDate = !published
	return res, nil
}

// lostInput makes a lost or damaged record the dataset reads (which it
// cannot ask for again) ErrCannotRun, saying what makes it again.
func lostInput(err error) error {
	if !errors.Is(err, store.ErrCorrupt) {
		return err
	}
	if !strings.Contains(err.Error(), "curate run") {
		err = fmt.Errorf("%w; curate run makes it again", err)
	}
	return Fail(ErrCannotRun, err)
}

// DatasetDir is where the dataset of a store is published: out, or
// STORE/dataset when out is empty.
func DatasetDir(st *store.Store, out string) string {
	if out == "" {
		return filepath.Join(st.Dir(), "dataset")
	}
	return out
}

// HoldOutput takes the publishing lock of the dataset directory out and
// checks that a dataset can be published there, writing nothing else, so
// that a run is refused before its first request, not after all its
// spending: another process publishing there, or a directory curate
// cannot publish over (publish.ErrNotOurs), is ErrCannotRun. The caller
// holds the lock until it has published (DatasetOptions.Locked).
func HoldOutput(out string) (release func() error, err error) {
	unlock, err := publish.Lock(out)
	if err != nil {
		return nil, Fail(ErrCannotRun, err)
	}
	if err := dataset.CheckOut(out); err != nil {
		unlock()
		return nil, Fail(ErrCannotRun, fmt.Errorf("publish %s: %w", out, err))
	}
	return unlock, nil
}

// withFields is opts with the fields of t's stages.
func (t Table) withFields(opts dataset.Options) dataset.Options {
	opts.Fields = t.Fields()
	return opts
}

// LoadAndBuild reads the dataset stage's inputs from the store one target
// at a time and builds the dataset without holding it: its instances wait
// in a file under STORE/tmp until the Result is closed (the caller closes
// it).
func LoadAndBuild(ctx context.Context, st *store.Store, keys []string, opts dataset.Options) (*dataset.Result, error) {
	return builtin().loadAndBuild(ctx, st, keys, opts)
}

func (t Table) loadAndBuild(ctx context.Context, st *store.Store, keys []string, opts dataset.Options) (*dataset.Result, error) {
	dir, err := spillDir(st)
	if err != nil {
		return nil, err
	}
	res, err := dataset.BuildStream(ctx, func(fn func(*dataset.TargetInputs) error) ([]dataset.Dropped, error) {
		return dataset.EachTarget(ctx, st, keys, t.DatasetInputs(), fn)
	}, t.withFields(opts), dir)
	if err != nil {
		res.Close()
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return res, nil
}

// spillDir is where a dataset build keeps its instances: STORE/tmp, on the
// store's disk rather than a memory-backed /tmp. The caller holds the
// store's lock, so any file there is left by a build that crashed.
func spillDir(st *store.Store) (string, error) {
	dir := filepath.Join(st.Dir(), "tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("dataset: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "dataset-instances-*"))
	for _, f := range stale {
		os.Remove(f)
	}
	return dir, nil
}

// InputsDigest identifies everything a dataset is built from: for each
// target, the records the dataset stage reads (the table's, its recorded
// licence among them, so that a licence learned later rebuilds the card),
// and how the stages writing them last ended, plus the options, the model-input
// template, the pipeline version and the Parquet codec. Equal digests mean
// an identical dataset, so it is not rebuilt.
func InputsDigest(ctx context.Context, st *store.Store, version string, keys []string, opts dataset.Options, codec parquetcodec.Codec) (string, error) {
	return builtin().inputsDigest(ctx, st, version, keys, opts, codec)
}

func (t Table) inputsDigest(ctx context.Context, st *store.Store, version string, keys []string, opts dataset.Options, codec parquetcodec.Codec) (string, error) {
	if len(keys) == 0 {
		var err error
		if keys, err = record.Graphs.Items(ctx, st); err != nil {
			return "", err
		}
	}
	keys = slices.Sorted(slices.Values(keys))
	h := sha256.New()
	tmpl, err := modelinput.Load()
	if err != nil {
		return "", err
	}
	o, err := json.Marshal(opts)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n%s\n%s\ncompression %s\n", version, tmpl.Version(), o, codec)
	fs := t.Fields()
	for _, f := range fs {
		fmt.Fprintf(h, "field %s %s %s\n", f.Name, f.Kind, f.Type)
		if f.Absent != nil {
			fmt.Fprintf(h, "absent %s\n", f.Absent)
		}
	}
	ds := dataset.Decl(fs...)
	used := map[string]bool{}
	for _, k := range append(slices.Clone(ds.Reads), ds.Optional...) {
		used[k] = true
	}
	for _, k := range keys {
		if err := digestTarget(ctx, h, st, k, used); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digestTarget(ctx context.Context, h io.Writer, st *store.Store, k string, used map[string]bool) error {
	recs, err := st.Records(ctx, k)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "target %s\n", k)
	for _, r := range recs {
		switch {
		case r.Kind == record.Summaries.Name():
			// The summary also counts cards written versus reused, which
			// differs between runs with the same cards.
			res, _, err := record.Summaries.Get(ctx, st, k)
			if err != nil {
				return err
			}
			type card struct {
				Key, TextLevel, Failure string
				Card                    *record.Card
				Unsummarizable          bool
				// The version carded, and where (the knowledge cut).
				Version int    `json:",omitempty"`
				Paper   string `json:",omitempty"`
			}
			cards := []card{{Key: res.Gold.Key, Card: res.Gold.Card, Failure: res.Gold.Failure, Version: res.Gold.Version}}
			for _, c := range res.Sources {
				cards = append(cards, card{c.Key, c.TextLevel, c.Failure, c.Card, c.Unsummarizable, c.Version, c.Paper})
			}
			b, err := json.Marshal(cards)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %x\n", r.Kind, sha256.Sum256(b))
		case used[r.Kind]:
			fmt.Fprintf(h, "%s %s\n", r.Kind, r.Blob)
		}
	}
	entries, err := st.Entries(ctx, k)
	if err != nil {
		return err
	}
	for _, e := range entries {
		fmt.Fprintf(h, "%s %s\n", e.Stage, e.Status)
	}
	return nil
}

// ErrNothingToPublish: a build kept no instance, and a dataset is
// published where it would go: it is left as it was.
var ErrNothingToPublish = errors.New("no instance to publish")

// publishedDataset reports whether dir holds a published dataset (its
// manifest says so).
func publishedDataset(dir string) bool {
	m, _, err := publish.Verify(dir)
	return err == nil && m.Kind == dataset.ManifestKind
}

// droppedText counts dropped targets by reason: "2 targets dropped:
// incomplete 2".
func droppedText(dropped []dataset.Dropped) string {
	if len(dropped) == 0 {
		return "no target given"
	}
	n := map[string]int{}
	for _, d := range dropped {
		n[d.Reason]++
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, n[r]))
	}
	return Plural(len(dropped), "target") + " dropped: " + strings.Join(parts, ", ") + "; see curate status"
}
