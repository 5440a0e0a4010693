package cli

import (
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/sft"
)

// sftCmd is `curate sft`: SFT hindsight traces over a published dataset.
type sftCmd struct {
	store        storeFlags
	net          netFlags
	llm          llmFlags
	dataset      string
	out          string
	numIdeas     int
	think        bool
	noThink      bool
	thinkSet     bool
	maxTokens    int
	tokenizer    string
	valSize      int
	splits       string
	limit        int
	workers      int
	budget       string
	retryRejects bool
	temperature  float64
	shardRows    int
	compression  string
	codec        parquetcodec.Codec // compression, parsed by validate
}

func (c *sftCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	c.net.AddFlags(fs, env)
	c.llm.AddFlags(fs, env)
	fs.StringVar(&c.dataset, "dataset", "", "published dataset directory to read (curate dataset's output)")
	fs.StringVar(&c.out, "out", "", "SFT output directory to write (replaced atomically; the previous one is kept as OUT.prev)")
	fs.IntVar(&c.numIdeas, "num-ideas", sft.DefaultNumIdeas, "K: idea cards per completion; another K than the dataset's re-renders the model input")
	c.think = true
	fs.Var(&setBool{v: &c.think, set: &c.thinkSet}, "think", "write the hindsight trace into the think block")
	fs.BoolVar(&c.noThink, "no-think", false, "write an empty think block with the same answers (no trace calls)")
	fs.IntVar(&c.maxTokens, "max-tokens", sft.DefaultMaxTokens, "drop rows whose prompt + completion exceed this many tokens (0: no limit)")
	fs.StringVar(&c.tokenizer, "tokenizer", "", "Hugging Face tokenizer.json to count tokens with (default: an estimate of one token per 3 bytes, on the long side)")
	fs.IntVar(&c.valSize, "val-size", sft.DefaultValSize, "rows held out as the validation split (at most half the train rows; 0: none)")
	fs.StringVar(&c.splits, "splits", "train", "comma-separated dataset splits to use (train, test); test targets are for evaluation: asked for here, they become the SFT test split, apart from train and validation")
	fs.IntVar(&c.limit, "limit", 0, "only the first N instances by ID (0: all), to try a teacher cheaply")
	fs.IntVar(&c.workers, "workers", sft.DefaultWorkers, "instances with the teacher at once (1 or more)")
	fs.StringVar(&c.budget, "budget", "", "stop starting teacher calls once this run has spent this many dollars, e.g. 5 or $5 (needs --price for the model)")
	fs.BoolVar(&c.retryRejects, "retry-rejects", false, "ask the teacher again for answers it was rejected for in an earlier run")
	fs.Float64Var(&c.temperature, "temperature", sft.DefaultTemperature, "teacher sampling temperature")
	fs.IntVar(&c.shardRows, "shard-rows", 0, "rows per Parquet file (0: 10,000)")
	addCompressionFlag(fs, &c.compression)
}

// validate checks the flags before anything is read, requested or written.
func (c *sftCmd) validate() error {
	for _, v := range []func() error{c.store.validate, c.net.validate, c.llm.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	switch {
	case c.dataset == "" || c.out == "":
		return fmt.Errorf("%w: give --dataset DIR and --out DIR", errUsage)
	case c.noThink && c.thinkSet && c.think:
		return fmt.Errorf("%w: --think and --no-think together", errUsage)
	case len(splitList(c.splits)) == 0:
		return fmt.Errorf("%w: --splits %q names no split (want train, test)", errUsage, c.splits)
	case c.numIdeas < 1:
		return fmt.Errorf("%w: --num-ideas %d: want at least 1", errUsage, c.numIdeas)
	case c.maxTokens < 0:
		return fmt.Errorf("%w: --max-tokens %d: want 0 (no limit) or more", errUsage, c.maxTokens)
	case c.valSize < 0:
		return fmt.Errorf("%w: --val-size %d: want 0 (none) or more", errUsage, c.valSize)
	case c.limit < 0:
		return fmt.Errorf("%w: --limit %d: want 0 (all) or more", errUsage, c.limit)
	case c.shardRows < 0:
		return fmt.Errorf("%w: --shard-rows %d: want 0 (the default) or more", errUsage, c.shardRows)
	case c.temperature < 0 || math.IsNaN(c.temperature) || math.IsInf(c.temperature, 0):
		return fmt.Errorf("%w: --temperature %v: want 0 or more", errUsage, c.temperature)
	}
	for _, s := range splitList(c.splits) {
		if s != "train" && s != "test" {
			return fmt.Errorf("%w: --splits: unknown split %q (want train, test)", errUsage, s)
		}
	}
	if err := positive("--workers", c.workers); err != nil {
		return err
	}
	var err error
	if c.codec, err = parseCompression(c.compression); err != nil {
		return err
	}
	_, err = parseBudget(c.budget)
	return err
}

// Run regenerates the SFT data of a dataset and prints what it did.
func (c *sftCmd) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, args)
	}
	cfg, o, err := c.options(env)
	if err != nil {
		return err
	}
	out, err := app.SFT(ctx, cfg, o)
	if out == nil || out.Result == nil {
		return err
	}
	printSFT(env, out.Result, c.out)
	printUsage(env.Stderr, out.Usage.Meter, out.Usage.Prices)
	printBatches(env.Stderr, out.Batches)
	if out.Result.Stopped {
		fmt.Fprintf(env.Stderr, "curate sft: stopped before the end; nothing written. Run again to resume: answers so far are cached.\n")
	}
	return err
}

// options checks the flags and makes the App's configuration and the
// generation's options of them.
func (c *sftCmd) options(env *Env) (app.Config, app.SFTOptions, error) {
	if err := c.validate(); err != nil {
		return app.Config{}, app.SFTOptions{}, err
	}
	log, _ := c.store.logger(env.Stderr)
	lc := c.llm.config(env)
	budget, _ := parseBudget(c.budget)
	if budget > 0 && !lc.Heuristic {
		if _, ok := lc.Prices.Lookup(c.llm.model); !ok {
			return app.Config{}, app.SFTOptions{}, fmt.Errorf("%w: --budget needs a price for %s (--price %s=INPUT/OUTPUT)", errUsage, c.llm.model, c.llm.model)
		}
	}
	if lc.Mode == llm.ModeBatch {
		// Batches are checked against the budget before they go, with
		// what is submitted and not answered yet counted.
		lc.BudgetUSD = budget
	}
	o := app.SFTOptions{Dataset: c.dataset, Out: c.out, Tokenizer: c.tokenizer, Temperature: tempFlag(c.temperature), RetryRejects: c.retryRejects,
		Options: sft.Options{NumIdeas: c.numIdeas, NoThink: c.noThink || !c.think, MaxTokens: c.maxTokens, ValSize: c.valSize,
			Splits: splitList(c.splits), Limit: c.limit, Workers: c.workers, Prices: lc.Prices, Budget: budget,
			Stop: env.Drain, Logger: log, CounterName: "estimate (one token per 3 bytes)"},
		Write: sft.WriteOptions{ShardRows: c.shardRows, Version: version, Compression: c.codec}}
	if c.maxTokens == 0 {
		o.Options.MaxTokens = -1
	}
	if c.valSize == 0 {
		o.Options.ValSize = -1
	}
	cfg := app.Config{Version: version, Log: log, Store: c.store.store, Lock: true, Net: c.net.config(env), LLM: lc, Drain: env.Drain}
	return cfg, o, nil
}

// setBool is a boolean flag that remembers whether it was given.
type setBool struct{ v, set *bool }

func (b *setBool) String() string {
	if b.v == nil {
		return "false"
	}
	return strconv.FormatBool(*b.v)
}

func (b *setBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	*b.v, *b.set = v, true
	return err
}

func (b *setBool) IsBoolFlag() bool { return true }

// tempFlag maps the --temperature flag to LLMConfig, where 0 means the
// default: an explicit 0 becomes "negative", which sends 0.
func tempFlag(t float64) float64 {
	if t == 0 {
		return -1
	}
	return t
}

// parseBudget reads --budget: dollars, with or without "$".
func parseBudget(s string) (float64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f {
		return 0, fmt.Errorf("%w: --budget %q: want dollars, e.g. 5 or $5", errUsage, s)
	}
	return f, nil
}

// printSFT writes the run's summary: rows, the gate's pass rate, rejects by
// reason, openings, the length filter and cost.
func printSFT(env *Env, r *sft.Result, out string) {
	rep := &r.Report
	w := env.Stderr
	if !r.Stopped {
		fmt.Fprintf(env.Stdout, "curate sft: %d train and %d validation rows in %s (teacher %s, K=%d, %s)\n",
			rep.Rows[sft.SplitTrain], rep.Rows[sft.SplitValidation], out, rep.Teacher, rep.NumIdeas, map[bool]string{true: "think", false: "no-think"}[rep.Think])
		if n := rep.Rows[sft.SplitTest]; n > 0 {
			fmt.Fprintf(env.Stdout, "curate sft: and %d rows of the dataset's test targets, asked for with --splits, in the SFT test split (never train or validation)\n", n)
		}
	}
	rate := "n/a"
	if rep.Gate.Checked > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*rep.Gate.PassRate)
	}
	fmt.Fprintf(w, "gate: %s pass rate (%d of %d answers, %d on the first attempt)\n", rate, rep.Gate.Passed, rep.Gate.Checked, rep.Gate.FirstAttempt)
	if len(r.Rejects) > 0 {
		var parts []string
		for _, k := range sortedReasons(rep.Rejects) {
			parts = append(parts, fmt.Sprintf("%s %d", k, rep.Rejects[k]))
		}
		fmt.Fprintf(w, "rejects: %d (%s); see %s/%s\n", len(r.Rejects), strings.Join(parts, ", "), out, sft.RejectsFile)
	} else {
		fmt.Fprintln(w, "rejects: 0")
	}
	if rep.Think {
		fmt.Fprintf(w, "openings: %d distinct of %d traces\n", rep.Openings.Distinct, rep.Openings.Rows)
	}
	limit := "no limit"
	if rep.Length.MaxTokens > 0 {
		limit = fmt.Sprintf("max %d tokens", rep.Length.MaxTokens)
	}
	fmt.Fprintf(w, "length: %s by %s, %d dropped, longest kept %d\n", limit, rep.Length.Counter, rep.Length.Dropped, rep.Length.Longest)
	switch {
	case rep.Cost != nil:
		fmt.Fprintf(w, "cost: $%.4f spent, $%.4f saved by the cache\n", *rep.Cost, *rep.Saved)
	default:
		fmt.Fprintln(w, "cost: unpriced (give --price to estimate it)")
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "not generated: %d instances (budget or stop); a re-run continues where this one stopped\n", rep.Skipped)
	}
	if rep.Pending > 0 {
		fmt.Fprintf(w, "not generated yet: %d instances whose teacher answers wait in LLM batches; a later run adds them\n", rep.Pending)
	}
}

// sortedReasons orders reasons as the gate checks them, then the others
// alphabetically.
func sortedReasons(m map[string]int) []string {
	order := app.GateReasons()
	var out []string
	for k := range m {
		out = append(out, k)
	}
	rank := func(k string) int {
		for i, r := range order {
			if r == k {
				return i
			}
		}
		return len(order)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}
