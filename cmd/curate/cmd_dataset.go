package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/stages"
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
	// fresh says out is a new directory (refresh's next version), so no
	// earlier build there can be reused and no inputs digest is kept.
	fresh bool
}

func addDatasetFlags(fs *flag.FlagSet, d *datasetFlags) {
	fs.IntVar(&d.numIdeas, "num-ideas", dataset.DefaultNumIdeas, "K: ideas the model input asks for")
	fs.StringVar(&d.testFrom, "test-from", "2026-01-01", "first arXiv v1 date of the test split (that day is test)")
	fs.StringVar(&d.trainCategories, "train-categories", "", "comma-separated categories or archives kept in train (e.g. cs.CL); empty keeps all")
	fs.StringVar(&d.testCategories, "test-categories", "", "comma-separated categories or archives kept in test; empty keeps all")
	fs.StringVar(&d.policy, "contamination", string(dataset.PolicyDropTrain), "what to do with contamination: drop-train, drop-test or fail")
	fs.IntVar(&d.shardRows, "shard-rows", 0, "rows per Parquet file (0: the stage's default)")
	fs.BoolVar(&d.jsonl, "jsonl", false, "also write instances.jsonl")
	fs.StringVar(&d.createdAt, "created-at", "", "creation date recorded in provenance (RFC 3339 or YYYY-MM-DD; default SOURCE_DATE_EPOCH, else today), so reruns write identical rows")
}

// options turns the flags into dataset.Options.
func (d *datasetFlags) options(getenv func(string) string) (dataset.Options, error) {
	o := dataset.Options{NumIdeas: d.numIdeas, PipelineVersion: version}
	var err error
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
		if err != nil {
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
	fs := newFlagSet(env, "dataset", "[--store DIR] --out DIR [--targets FILE] [ID...] | --check DIR")
	addGlobalFlags(fs, env, &opt.global)
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
		return runCheck(ctx, env, opt.check)
	}
	ids := rest
	if opt.targets != "" {
		more, err := readTargets(opt.targets, env.stdinReader())
		if err != nil {
			return err
		}
		ids = append(ids, more...)
	}
	return buildDataset(ctx, env, &opt.global, &opt.data, opt.out, ids)
}

// buildDataset consolidates the stored targets (ids; every target with
// edges when empty), writes the dataset atomically, checks it and writes
// its report.
func buildDataset(ctx context.Context, env *cmdEnv, g *globalOptions, d *datasetFlags, out string, ids []string) error {
	log, err := g.logger(env.stderr)
	if err != nil {
		return err
	}
	opts, err := d.options(env.getenv)
	if err != nil {
		return err
	}
	var keys []string
	for _, in := range ids {
		k, err := stages.Key(in)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		keys = append(keys, k)
	}
	st, err := g.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if out == "" {
		out = filepath.Join(st.Dir(), "dataset")
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	digestKey, digest := "dataset/inputs/"+absOut, ""
	if !d.fresh {
		if digest, err = inputsDigest(ctx, st, keys, opts); err != nil {
			return err
		}
		if prev, err := st.Value(ctx, digestKey); err == nil && string(prev) == digest {
			if _, err := os.Stat(filepath.Join(out, "README.md")); err == nil {
				fmt.Fprintf(env.stderr, "curate dataset: %s is up to date (no input changed since it was written)\n", out)
				return nil
			}
		}
	}
	targets, dropped, err := dataset.LoadTargets(ctx, st, keys)
	if err != nil {
		return err
	}
	res, err := dataset.Build(targets, opts)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	res.Dropped = append(res.Dropped, dropped...)
	if err := dataset.Write(ctx, out, res, dataset.WriteOptions{ShardRows: d.shardRows, JSONL: d.jsonl}); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if _, err := dataset.Report(res.Instances, res.Dropped, res.Contamination, out); err != nil {
		return fmt.Errorf("dataset report: %w", err)
	}
	rep, checkErr := dataset.Check(ctx, out)
	if checkErr == nil && digest != "" {
		if err := st.SetValue(ctx, digestKey, []byte(digest)); err != nil {
			log.Warn("could not remember the dataset's inputs", "err", err)
		}
	}
	train, test := 0, 0
	for _, in := range res.Instances {
		if in.Split == "test" {
			test++
		} else {
			train++
		}
	}
	fmt.Fprintf(env.stderr, "curate dataset: %d train and %d test instances in %s; %d targets dropped (see dropped.json); contamination: %s\n",
		train, test, out, len(res.Dropped), contaminationLine(res.Contamination))
	log.Debug("dataset written", "dir", out)
	if checkErr != nil {
		printCheck(env, rep)
		return fmt.Errorf("dataset: the written dataset fails its own check: %w", checkErr)
	}
	return nil
}

// inputsDigest identifies everything a dataset is built from: for each
// target, the records the dataset stage reads and how its last stages
// ended, plus the options, the model-input template and the pipeline
// version. Equal digests mean an identical dataset, so it is not rebuilt.
func inputsDigest(ctx context.Context, st *store.Store, keys []string, opts dataset.Options) (string, error) {
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
	fmt.Fprintf(h, "%s\n%s\n%s\n", version, tmpl.Version(), o)
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

// runReportCmd writes the report of a published dataset.
func runReportCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var out string
	fs := newFlagSet(env, "report", "[--out DIR] DATASET")
	fs.StringVar(&out, "out", "", "where report.html and report.json go (default: the dataset directory)")
	pub, err := readDatasetArg(ctx, fs, args)
	if err != nil {
		return err
	}
	if out == "" {
		out = pub.Dir
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := dataset.Report(pub.Instances, pub.Dropped, pub.Contamination, out); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "curate report: %s\n", filepath.Join(out, "report.html"))
	return nil
}

// runExportCmd writes trainer formats from a published dataset.
func runExportCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var format, out, encoding, split string
	fs := newFlagSet(env, "export", "--format verl-rl|verl-sft|messages [--split train|test] [--jsonl] --out FILE DATASET")
	fs.StringVar(&format, "format", "verl-rl", "verl-rl, verl-sft or messages")
	fs.StringVar(&out, "out", "", "output file (default stdout)")
	fs.StringVar(&encoding, "encoding", dataset.EncodingParquet, "parquet or jsonl")
	fs.StringVar(&split, "split", "", "only this split (default both)")
	pub, err := readDatasetArg(ctx, fs, args)
	if err != nil {
		return err
	}
	instances := pub.Instances[:0:0]
	for _, in := range pub.Instances {
		if split == "" || in.Split == split {
			instances = append(instances, in)
		}
	}
	opts := dataset.ExportOptions{Encoding: encoding}
	if out == "" {
		return dataset.Export(instances, format, env.stdout, opts)
	}
	// Written beside out and renamed over it: never a half-written file.
	tmp := out + ".partial"
	os.Remove(tmp) // left by an earlier crash
	if err := atomicdir.WriteFileFunc(tmp, func(w io.Writer) error { return dataset.Export(instances, format, w, opts) }); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(env.stderr, "curate export: %d rows of %s to %s\n", len(instances), format, out)
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
