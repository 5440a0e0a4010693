package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/knowledgecut"
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
	includeSuspect  bool // set from the stage flags' --include-suspect, or dataset's own
	compression     string
	codec           parquetcodec.Codec // compression, parsed by options
	// cut is --knowledge-cut: the stage flags' when the command has them,
	// else the dataset's own.
	cut *flag.Flag
}

func (d *datasetFlags) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.IntVar(&d.numIdeas, "num-ideas", dataset.DefaultNumIdeas, "K: ideas the model input asks for (1 or more)")
	fs.StringVar(&d.testFrom, "test-from", dataset.DefaultTestFrom, "first arXiv v1 date of the test split (that day is test)")
	fs.StringVar(&d.trainCategories, "train-categories", "", "comma-separated categories or archives kept in train (e.g. cs.CL); empty keeps all")
	fs.StringVar(&d.testCategories, "test-categories", "", "comma-separated categories or archives kept in test; empty keeps all")
	fs.StringVar(&d.policy, "contamination", string(dataset.PolicyDropTrain), "what to do with contamination: drop-train, drop-test or fail")
	fs.IntVar(&d.shardRows, "shard-rows", 0, "rows per Parquet file (0: the stage's default of 10,000)")
	fs.BoolVar(&d.jsonl, "jsonl", false, "also write instances.jsonl")
	fs.StringVar(&d.createdAt, "created-at", "", "creation date recorded in provenance (RFC 3339 or YYYY-MM-DD; default SOURCE_DATE_EPOCH, else today), so reruns write identical rows")
	addCompressionFlag(fs, &d.compression)
	if d.cut = fs.Lookup("knowledge-cut"); d.cut == nil {
		fs.String("knowledge-cut", string(knowledgecut.DefaultMode), "how the knowledge cut is applied to the sources the versions stage pinned: flag (keep a source read after its target's v1, marked revised_after_cutoff), strict (keep only sources read at a version dated on or before it), off; a source first published after its target's v1 is dropped unless off")
		d.cut = fs.Lookup("knowledge-cut")
	}
}

// options turns the flags into dataset.Options, refusing any value the
// help does not allow (commands call it before they open anything).
func (d *datasetFlags) options(getenv func(string) string) (dataset.Options, error) {
	o := dataset.Options{NumIdeas: d.numIdeas, PipelineVersion: version, IncludeSuspect: d.includeSuspect}
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
	o.KnowledgeCut = knowledgecut.DefaultMode
	if d.cut != nil {
		if o.KnowledgeCut, err = knowledgecut.ParseMode(d.cut.Value.String()); err != nil {
			return o, fmt.Errorf("%w: %v", errUsage, err)
		}
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

// build returns the app's options of a dataset build into out of keys.
func (d *datasetFlags) build(out string, keys []string, o dataset.Options) app.DatasetOptions {
	return app.DatasetOptions{Out: out, Keys: keys, Options: o, ShardRows: d.shardRows, JSONL: d.jsonl, Report: !d.noReport, Compression: d.codec}
}

// datasetCmd is `curate dataset`: build and publish the dataset from the
// store, or --check a published one.
type datasetCmd struct {
	store   storeFlags
	data    datasetFlags
	out     string
	check   string
	targets string
	from    targetsFrom
	report  bool
}

func (c *datasetCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	c.data.AddFlags(fs, env)
	fs.StringVar(&c.out, "out", "", "dataset directory to write (default STORE/dataset)")
	fs.StringVar(&c.check, "check", "", "re-verify a published dataset directory and exit non-zero on any violation")
	fs.StringVar(&c.targets, "targets", "", "only these targets (file of arXiv IDs); default every target in the store")
	c.from.AddFlags(fs, env)
	fs.BoolVar(&c.report, "report", true, "also write report.html and report.json into the dataset")
	addSuspectFlag(fs, &c.data.includeSuspect)
}

func (c *datasetCmd) Run(ctx context.Context, env *Env, args []string) error {
	if c.check != "" {
		if len(args) > 0 {
			return fmt.Errorf("%w: --check takes no IDs (got %s)", errUsage, strings.Join(args, " "))
		}
		return runCheck(ctx, env, c.check)
	}
	o, err := c.options(env, args)
	if err != nil {
		return err
	}
	out, err := app.PublishDataset(ctx, c.store.store, version, o)
	if err != nil {
		return err
	}
	printDataset(env, out)
	return nil
}

// options checks the flags and makes the build's options of them.
func (c *datasetCmd) options(env *Env, args []string) (app.DatasetOptions, error) {
	if err := c.store.validate(); err != nil {
		return app.DatasetOptions{}, err
	}
	dopts, err := c.data.options(env.Getenv)
	if err != nil {
		return app.DatasetOptions{}, err
	}
	ids := args
	if c.targets != "" {
		more, err := readTargets(c.targets, env.stdinReader())
		if err != nil {
			return app.DatasetOptions{}, err
		}
		ids = append(ids, more...)
	}
	more, bad, err := c.from.read()
	if err != nil {
		return app.DatasetOptions{}, err
	}
	keys, badIDs := app.Targets(append(ids, more...))
	if bad = append(bad, badIDs...); len(bad) > 0 {
		return app.DatasetOptions{}, fmt.Errorf("%w: invalid target IDs:\n  %s", errUsage, strings.Join(bad, "\n  "))
	}
	c.data.noReport = !c.report
	return c.data.build(c.out, keys, dopts), nil
}

// runCheck re-verifies a published dataset.
func runCheck(ctx context.Context, env *Env, dir string) error {
	rep, err := app.CheckDataset(ctx, dir)
	printCheck(env, rep)
	if err == nil {
		fmt.Fprintf(env.Stdout, "%s: ok\n", dir)
	}
	return err
}

func printCheck(env *Env, rep *dataset.CheckReport) {
	if rep == nil {
		return
	}
	data, _ := json.Marshal(rep.Counts)
	fmt.Fprintf(env.Stdout, "%s: counts %s, %d problems, %d violations\n", rep.Dir, data, len(rep.Problems), len(rep.Violations))
	for _, p := range rep.Problems {
		fmt.Fprintf(env.Stdout, "  problem: %s\n", p)
	}
	for _, v := range rep.Violations {
		b, _ := json.Marshal(v)
		fmt.Fprintf(env.Stdout, "  violation: %s\n", b)
	}
}

// reportCmd is `curate report`: the report of a published dataset, into
// the dataset itself by default (republished with the new report, never
// edited in place), or into --out.
type reportCmd struct{ out string }

func (c *reportCmd) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.StringVar(&c.out, "out", "", "directory report.html and report.json are published in (default: the dataset, republished)")
}

func (c *reportCmd) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: give one dataset directory", errUsage)
	}
	path, err := app.Report(ctx, args[0], c.out, version)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "curate report: %s\n", path)
	return nil
}

// exportCmd is `curate export`: trainer formats from a published
// dataset, one file per split by default, so that a trainer's train file
// never holds a test target unless --split names it.
type exportCmd struct {
	format, out, encoding, split, compression, tokenizer string
	valSize                                              int
}

func (c *exportCmd) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.StringVar(&c.format, "format", dataset.FormatVerlRL, strings.Join(dataset.Formats(), ", ")+": verl RL and SFT (legacy prompt/response), chat messages (verl's multi-turn SFT), TRL prompt-completion SFT and prompt-only GRPO; innoeval: idea-evaluation rows (the idea tuple, its cutoff, pre- and post-knowledge)")
	fs.StringVar(&c.out, "out", "", "directory to publish the export in: train.EXT, validation.EXT and test.EXT, or the one file --split names (stdout: only with --split)")
	fs.StringVar(&c.encoding, "encoding", dataset.EncodingParquet, "parquet or jsonl")
	fs.StringVar(&c.split, "split", "", "train, validation (held out of the dataset's train split), test, or all (every row in one file, each keeping its split); default one file per split")
	fs.IntVar(&c.valSize, "val-size", holdout.DefaultSize, "train instances held out as the validation split, as curate sft draws them (at most half; 0: none)")
	fs.StringVar(&c.tokenizer, "tokenizer", "", "Hugging Face tokenizer.json to count the longest rows' tokens with, for the trainer settings in the export's README (default: an estimate on the long side)")
	addCompressionFlag(fs, &c.compression)
}

func (c *exportCmd) Run(ctx context.Context, env *Env, args []string) error {
	o, err := c.options(env, args)
	if err != nil {
		return err
	}
	files, err := app.Export(ctx, o)
	if err != nil || o.Out == "" {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(env.Stdout, "curate export: %d %s rows of %s in %s%s\n", f.Rows, f.Split, c.format, filepath.Join(c.out, f.Name), lengthsText(f.Lengths))
	}
	fmt.Fprintf(env.Stdout, "curate export: %s says %s\n", filepath.Join(c.out, dataset.ReadmeFile), dataset.ReadmeSays(c.format))
	return nil
}

// lengthsText is what an export file's line says of its longest rows
// (nothing for a format without prompts).
func lengthsText(l dataset.ExportLengths) string {
	if l.Total == 0 {
		return ""
	}
	return fmt.Sprintf(" (longest prompt %d, completion %d, total %d tokens)", l.Prompt, l.Completion, l.Total)
}

// options checks the flags and makes the export's options of them.
func (c *exportCmd) options(env *Env, args []string) (app.ExportOptions, error) {
	o := app.ExportOptions{Out: c.out, Format: c.format, Encoding: c.encoding, Split: c.split, ValSize: c.valSize,
		Tokenizer: c.tokenizer, Version: version, Stdout: env.Stdout}
	var err error
	if err := dataset.CheckFormat(c.format); err != nil {
		return o, fmt.Errorf("%w: --format: %v", errUsage, err)
	}
	if c.encoding != dataset.EncodingParquet && c.encoding != dataset.EncodingJSONL {
		return o, fmt.Errorf("%w: --encoding %q: want %s or %s", errUsage, c.encoding, dataset.EncodingParquet, dataset.EncodingJSONL)
	}
	if o.Compression, err = parseCompression(c.compression); err != nil {
		return o, err
	}
	if _, err := dataset.ExportSplits(c.split); err != nil {
		return o, fmt.Errorf("%w: --%v", errUsage, err)
	}
	if c.out == "" && c.split == "" {
		return o, fmt.Errorf("%w: give --out DIR (a file per split), or --split train|validation|test|all to write one split to stdout", errUsage)
	}
	if c.valSize < 0 {
		return o, fmt.Errorf("%w: --val-size %d: want 0 (none) or more", errUsage, c.valSize)
	}
	if c.valSize == 0 {
		o.ValSize = -1 // none; the options' zero is the default
	}
	if len(args) != 1 {
		return o, fmt.Errorf("%w: give one dataset directory", errUsage)
	}
	o.Dataset = args[0]
	return o, nil
}
