package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sft/tokenizer"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// datasetFlags configure the dataset stage.
type datasetFlags struct {
	numIdeas        int
	testFrom        string
	trainCategories string
	testCategories  string
	policy          string
	shardRows       int
	jsonl           bool
	createdAt       string
	noReport        bool
	compression     string
	codec           parquetcodec.Codec // compression, parsed by options
}

func addDatasetFlags(fs *flag.FlagSet, d *datasetFlags) {
	fs.IntVar(&d.numIdeas, "num-ideas", dataset.DefaultNumIdeas, "K: ideas the model input asks for (1 or more)")
	fs.StringVar(&d.testFrom, "test-from", "2026-01-01", "first arXiv v1 date of the test split (that day is test)")
	fs.StringVar(&d.trainCategories, "train-categories", "", "comma-separated categories or archives kept in train (e.g. cs.CL); empty keeps all")
	fs.StringVar(&d.testCategories, "test-categories", "", "comma-separated categories or archives kept in test; empty keeps all")
	fs.StringVar(&d.policy, "contamination", string(dataset.PolicyDropTrain), "what to do with contamination: drop-train, drop-test or fail")
	fs.IntVar(&d.shardRows, "shard-rows", 0, "rows per Parquet file (0: the stage's default of 10,000)")
	fs.BoolVar(&d.jsonl, "jsonl", false, "also write instances.jsonl")
	fs.StringVar(&d.createdAt, "created-at", "", "creation date recorded in provenance (RFC 3339 or YYYY-MM-DD; default SOURCE_DATE_EPOCH, else today), so reruns write identical rows")
	addCompressionFlag(fs, &d.compression)
}

// options turns the flags into dataset.Options, refusing any value the
// help does not allow (commands call it before they open anything).
func (d *datasetFlags) options(getenv func(string) string) (dataset.Options, error) {
	o := dataset.Options{NumIdeas: d.numIdeas, PipelineVersion: version}
	var err error
	if d.numIdeas < 1 {
		return o, fmt.Errorf("%w: --num-ideas %d: want 1 or more", errUsage, d.numIdeas)
	}
	if d.shardRows < 0 {
		return o, fmt.Errorf("%w: --shard-rows %d: want 0 (the default) or more", errUsage, d.shardRows)
	}
	if d.codec, err = parseCompression(d.compression); err != nil {
		return o, err
	}
	if o.TestFrom, err = time.Parse("2006-01-02", d.testFrom); err != nil {
		return o, fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, d.testFrom)
	}
	o.TrainCategories, o.TestCategories = splitList(d.trainCategories), splitList(d.testCategories)
	if o.Policy, err = dataset.ParsePolicy(d.policy); err != nil {
		return o, fmt.Errorf("%w: --contamination: %v", errUsage, err)
	}
	switch {
	case d.createdAt != "":
		t, err := time.Parse(time.RFC3339, d.createdAt)
		if err != nil {
			if t, err = time.Parse("2006-01-02", d.createdAt); err != nil {
				return o, fmt.Errorf("%w: --created-at %q: want RFC 3339 or YYYY-MM-DD", errUsage, d.createdAt)
			}
		}
		o.CreatedAt = t.UTC()
	case getenv("SOURCE_DATE_EPOCH") != "":
		sec, err := strconv.ParseInt(getenv("SOURCE_DATE_EPOCH"), 10, 64)
		if err != nil || sec < 0 {
			return o, fmt.Errorf("%w: SOURCE_DATE_EPOCH %q: want seconds", errUsage, getenv("SOURCE_DATE_EPOCH"))
		}
		o.CreatedAt = time.Unix(sec, 0).UTC()
	default:
		// A day, not a moment: a run resumed after a crash the same day
		// writes the same rows as an uninterrupted one.
		o.CreatedAt = time.Now().UTC().Truncate(24 * time.Hour)
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type datasetOptions struct {
	global  globalOptions
	data    datasetFlags
	out     string
	check   string
	targets string
	report  bool
}

func runDatasetCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt datasetOptions
	fs := newFlagSet(env, "dataset", "[--store DIR] [--out DIR] [--targets FILE] [ID...] | --check DIR")
	addStoreFlags(fs, env, &opt.global)
	addDatasetFlags(fs, &opt.data)
	fs.StringVar(&opt.out, "out", "", "dataset directory to write (default STORE/dataset)")
	fs.StringVar(&opt.check, "check", "", "re-verify a published dataset directory and exit non-zero on any violation")
	fs.StringVar(&opt.targets, "targets", "", "only these targets (file of arXiv IDs); default every target in the store")
	fs.BoolVar(&opt.report, "report", true, "also write report.html and report.json into the dataset")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if opt.check != "" {
		if len(rest) > 0 {
			return fmt.Errorf("%w: --check takes no IDs (got %s)", errUsage, strings.Join(rest, " "))
		}
		return runCheck(ctx, env, opt.check)
	}
	log, err := opt.global.logger(env.stderr)
	if err != nil {
		return err
	}
	dopts, err := opt.data.options(env.getenv)
	if err != nil {
		return err
	}
	ids := rest
	if opt.targets != "" {
		more, err := readTargets(opt.targets, env.stdinReader())
		if err != nil {
			return err
		}
		ids = append(ids, more...)
	}
	keys, bad := targetKeys(ids)
	if len(bad) > 0 {
		return fmt.Errorf("%w: invalid target IDs:\n  %s", errUsage, strings.Join(bad, "\n  "))
	}
	st, err := opt.global.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	unlock, err := st.Lock()
	if err != nil {
		return lockError(err, st.Dir())
	}
	defer unlock()
	opt.data.noReport = !opt.report
	return buildDataset(ctx, env, log, st, dopts, &opt.data, opt.out, keys)
}

// buildDataset consolidates the stored targets (keys; every target with
// edges when empty) of a store the caller has locked and publishes the
// dataset at out (STORE/dataset when empty), checked and with its report,
// unless out already holds the dataset of the same inputs.
func buildDataset(ctx context.Context, env *cmdEnv, log *slog.Logger, st *store.Store, opts dataset.Options, d *datasetFlags, out string, keys []string) error {
	if out == "" {
		out = filepath.Join(st.Dir(), "dataset")
	}
	digest, err := inputsDigest(ctx, st, keys, opts, d.codec)
	if err != nil {
		return err
	}
	if publish.UpToDate(out, dataset.ManifestKind, version, digest) {
		fmt.Fprintf(env.stderr, "curate dataset: %s is up to date (no input changed since it was written, and its files match its manifest)\n", out)
		return nil
	}
	res, err := loadAndBuild(ctx, st, keys, opts)
	if err != nil {
		return err
	}
	published, err := dataset.Write(ctx, out, res, dataset.WriteOptions{
		ShardRows: d.shardRows, JSONL: d.jsonl, Report: !d.noReport, Version: version, Inputs: digest, Compression: d.codec,
	})
	if errors.Is(err, publish.ErrLocked) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	if !published {
		fmt.Fprintf(env.stderr, "curate dataset: %s is up to date (another curate published the same inputs)\n", out)
		return nil
	}
	printDatasetSummary(env, res, out)
	log.Debug("dataset written", "dir", out)
	return nil
}

// loadAndBuild reads the dataset stage's inputs from the store and builds
// the dataset in memory.
func loadAndBuild(ctx context.Context, st *store.Store, keys []string, opts dataset.Options) (*dataset.Result, error) {
	targets, dropped, err := dataset.LoadTargets(ctx, st, keys)
	if err != nil {
		return nil, err
	}
	res, err := dataset.Build(targets, opts)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	res.Dropped = append(res.Dropped, dropped...)
	return res, nil
}

// printDatasetSummary says what a published dataset holds.
func printDatasetSummary(env *cmdEnv, res *dataset.Result, out string) {
	train, test := 0, 0
	for _, in := range res.Instances {
		if in.Split == record.SplitTest {
			test++
		} else {
			train++
		}
	}
	fmt.Fprintf(env.stderr, "curate dataset: %d train and %d test instances in %s; %s dropped (see dropped.json); contamination: %s\n",
		train, test, out, plural(len(res.Dropped), "target"), contaminationLine(res.Contamination))
}

// inputsDigest identifies everything a dataset is built from: for each
// target, the records the dataset stage reads and how its last stages
// ended, plus the options, the model-input template and the pipeline
// version, and the Parquet codec. Equal digests mean an identical dataset,
// so it is not rebuilt.
func inputsDigest(ctx context.Context, st *store.Store, keys []string, opts dataset.Options, codec parquetcodec.Codec) (string, error) {
	if len(keys) == 0 {
		var err error
		if keys, err = st.Items(ctx, citegraph.KindGraph); err != nil {
			return "", err
		}
	}
	keys = append([]string(nil), keys...)
	sort.Strings(keys)
	h := sha256.New()
	tmpl, err := dataset.LoadTemplate()
	if err != nil {
		return "", err
	}
	o, err := json.Marshal(opts)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n%s\n%s\ncompression %s\n", version, tmpl.Version(), o, codec)
	used := map[string]bool{citegraph.KindGraph: true, classify.KindSelections: true, summarize.KindResult: true, fetch.KindDocument: true}
	for _, k := range keys {
		recs, err := st.Records(ctx, k)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "target %s\n", k)
		for _, r := range recs {
			switch {
			case r.Kind == summarize.KindResult:
				// The summary also counts cards written versus reused,
				// which differs between runs with the same cards.
				var res summarize.Result
				if _, err := st.GetJSON(ctx, k, r.Kind, &res); err != nil {
					return "", err
				}
				type card struct {
					Key, TextLevel, Failure string
					Card                    *record.Card
					Unsummarizable          bool
				}
				cards := []card{{Key: res.Gold.Key, Card: res.Gold.Card, Failure: res.Gold.Failure}}
				for _, c := range res.Sources {
					cards = append(cards, card{c.Key, c.TextLevel, c.Failure, c.Card, c.Unsummarizable})
				}
				b, err := json.Marshal(cards)
				if err != nil {
					return "", err
				}
				fmt.Fprintf(h, "%s %x\n", r.Kind, sha256.Sum256(b))
			case used[r.Kind]:
				fmt.Fprintf(h, "%s %s\n", r.Kind, r.Blob)
			}
		}
		entries, err := st.Entries(ctx, k)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			fmt.Fprintf(h, "%s %s\n", e.Stage, e.Status)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func contaminationLine(c *dataset.Contamination) string {
	if c == nil {
		return "not checked"
	}
	data, err := json.Marshal(c.Counts)
	if err != nil {
		return "see contamination.json"
	}
	return string(data) + " (see contamination.json)"
}

// runCheck re-verifies a published dataset.
func runCheck(ctx context.Context, env *cmdEnv, dir string) error {
	rep, err := dataset.Check(ctx, dir)
	if rep != nil {
		printCheck(env, rep)
	}
	if err != nil {
		code := 1
		if !errors.Is(err, dataset.ErrContaminated) && !errors.Is(err, dataset.ErrInvalid) {
			code = 2
		}
		return &exitError{code: code, err: err}
	}
	fmt.Fprintf(env.stdout, "%s: ok\n", dir)
	return nil
}

func printCheck(env *cmdEnv, rep *dataset.CheckReport) {
	data, _ := json.Marshal(rep.Counts)
	fmt.Fprintf(env.stdout, "%s: counts %s, %d problems, %d violations\n", rep.Dir, data, len(rep.Problems), len(rep.Violations))
	for _, p := range rep.Problems {
		fmt.Fprintf(env.stdout, "  problem: %s\n", p)
	}
	for _, v := range rep.Violations {
		b, _ := json.Marshal(v)
		fmt.Fprintf(env.stdout, "  violation: %s\n", b)
	}
}

// runReportCmd writes the report of a published dataset: into the dataset
// itself by default (republished with the new report, never edited in
// place), or into --out.
func runReportCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var out string
	fs := newFlagSet(env, "report", "[--out DIR] DATASET")
	fs.StringVar(&out, "out", "", "directory report.html and report.json are published in (default: the dataset, republished)")
	pub, err := readDatasetArg(ctx, fs, args)
	if err != nil {
		return err
	}
	write := func(dir string) error {
		_, err := dataset.Report(pub.Instances, pub.Dropped, pub.Contamination, dir)
		return err
	}
	if out == "" || sameDir(out, pub.Dir) {
		out = pub.Dir
		err = publish.Amend(ctx, pub.Dir, dataset.ManifestKind, write)
	} else {
		_, err = publish.Dir(ctx, out, publish.Options{Kind: "report", Version: version, Describe: "a report directory"}, write)
	}
	if errors.Is(err, publish.ErrLocked) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(env.stderr, "curate report: %s\n", filepath.Join(out, dataset.ReportHTML))
	return nil
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// exportOptions are the flags of curate export.
type exportOptions struct {
	format, out, encoding, split, compression, tokenizer string
	codec                                                parquetcodec.Codec
}

// runExportCmd writes trainer formats from a published dataset: one file
// per split by default, so that a trainer's train file never holds a test
// target unless --split names it.
func runExportCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var o exportOptions
	formats := strings.Join(dataset.ExportFormats(), "|")
	fs := newFlagSet(env, "export", "--format "+formats+" [--split train|test|all] [--encoding parquet|jsonl] [--compression snappy|zstd|gzip|none] [--tokenizer tokenizer.json] --out DIR DATASET")
	fs.StringVar(&o.format, "format", dataset.FormatVerlRL, strings.Join(dataset.ExportFormats(), ", ")+": verl RL and SFT (legacy prompt/response), chat messages (verl's multi-turn SFT), TRL prompt-completion SFT and prompt-only GRPO")
	fs.StringVar(&o.out, "out", "", "directory to publish the export in: train.EXT and test.EXT, or the one file --split names (stdout: only with --split)")
	fs.StringVar(&o.encoding, "encoding", dataset.EncodingParquet, "parquet or jsonl")
	fs.StringVar(&o.split, "split", "", "train, test, or all (both in one file, each row keeping its split); default one file per split")
	fs.StringVar(&o.tokenizer, "tokenizer", "", "Hugging Face tokenizer.json to count the longest rows' tokens with, for the trainer settings in the export's README (default: an estimate on the long side)")
	addCompressionFlag(fs, &o.compression)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := dataset.CheckFormat(o.format); err != nil {
		return fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	if o.encoding != dataset.EncodingParquet && o.encoding != dataset.EncodingJSONL {
		return fmt.Errorf("%w: --encoding %q: want %s or %s", errUsage, o.encoding, dataset.EncodingParquet, dataset.EncodingJSONL)
	}
	if o.codec, err = parseCompression(o.compression); err != nil {
		return err
	}
	if _, err := dataset.ExportSplits(o.split); err != nil {
		return fmt.Errorf("%w: --%v", errUsage, err)
	}
	if o.out == "" && o.split == "" {
		return fmt.Errorf("%w: give --out DIR (a file per split), or --split train|test|all to write one split to stdout", errUsage)
	}
	if len(rest) != 1 {
		fs.Usage()
		return fmt.Errorf("%w: give one dataset directory", errUsage)
	}
	return runExport(ctx, env, &o, rest[0])
}

func runExport(ctx context.Context, env *cmdEnv, o *exportOptions, dir string) error {
	var counter dataset.TokenCounter
	counterName := ""
	if o.tokenizer != "" {
		tok, err := tokenizer.Load(o.tokenizer)
		if err != nil {
			return fmt.Errorf("%w: --tokenizer: %v", errUsage, err)
		}
		counter, counterName = tok, "the tokenizer "+filepath.Base(o.tokenizer)
	}
	pub, err := dataset.ReadDataset(ctx, dir)
	if err != nil {
		return err
	}
	opts := dataset.ExportOptions{Encoding: o.encoding, Compression: o.codec}
	if o.out == "" {
		var rows []record.Instance
		for _, in := range pub.Instances {
			if o.split == dataset.SplitAll || in.Split == o.split {
				rows = append(rows, in)
			}
		}
		return dataset.Export(rows, o.format, env.stdout, opts)
	}
	manifest, err := os.ReadFile(filepath.Join(pub.Dir, publish.ManifestFile))
	if err != nil {
		return err
	}
	tokDigest := ""
	if o.tokenizer != "" {
		b, err := os.ReadFile(o.tokenizer)
		if err != nil {
			return err
		}
		tokDigest = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	inputs := sha256.Sum256(fmt.Appendf(manifest, "\n%s %s %s %s %s", o.format, o.encoding, o.split, o.codec, tokDigest))
	files, err := dataset.WriteExport(ctx, o.out, pub.Instances, dataset.ExportDirOptions{
		ExportOptions: opts, Format: o.format, Split: o.split, Version: version, Inputs: hex.EncodeToString(inputs[:]),
		Counter: counter, CounterName: counterName,
	})
	if errors.Is(err, publish.ErrLocked) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(env.stderr, "curate export: %d %s rows of %s in %s (longest prompt %d, completion %d, total %d tokens)\n",
			f.Rows, f.Split, o.format, filepath.Join(o.out, f.Name), f.Lengths.Prompt, f.Lengths.Completion, f.Lengths.Total)
	}
	fmt.Fprintf(env.stderr, "curate export: %s says which trainer reads it and with which settings\n", filepath.Join(o.out, dataset.ReadmeFile))
	return nil
}

// readDatasetArg parses a command's flags and reads the one published
// dataset directory its arguments name.
func readDatasetArg(ctx context.Context, fs *flag.FlagSet, args []string) (*dataset.Published, error) {
	rest, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) != 1 {
		fs.Usage()
		return nil, fmt.Errorf("%w: give one dataset directory", errUsage)
	}
	return dataset.ReadDataset(ctx, rest[0])
}
