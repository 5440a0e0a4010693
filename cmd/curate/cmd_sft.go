package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sft/gate"
	"github.com/groundwork/curate/sft/tokenizer"
)

// sftOptions are the flags of `curate sft`.
type sftOptions struct {
	global       globalOptions
	llm          llmOptions
	dataset      string
	out          string
	numIdeas     int
	think        bool
	noThink      bool
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

func runSFTCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt sftOptions
	fs := newFlagSet(env, "sft", "--dataset DIR --out DIR [--num-ideas K] [--think|--no-think] [--llm heuristic|endpoint] [--budget DOLLARS]")
	addGlobalFlags(fs, env, &opt.global)
	addLLMFlags(fs, env, &opt.llm)
	fs.StringVar(&opt.dataset, "dataset", "", "published dataset directory to read (curate dataset's output)")
	fs.StringVar(&opt.out, "out", "", "SFT output directory to write (replaced atomically; the previous one is kept as OUT.prev)")
	fs.IntVar(&opt.numIdeas, "num-ideas", sft.DefaultNumIdeas, "K: idea cards per completion; another K than the dataset's re-renders the model input")
	fs.BoolVar(&opt.think, "think", true, "write the hindsight trace into the think block")
	fs.BoolVar(&opt.noThink, "no-think", false, "write an empty think block with the same answers (no trace calls)")
	fs.IntVar(&opt.maxTokens, "max-tokens", sft.DefaultMaxTokens, "drop rows whose prompt + completion exceed this many tokens (0: no limit)")
	fs.StringVar(&opt.tokenizer, "tokenizer", "", "Hugging Face tokenizer.json to count tokens with (default: an estimate of one token per 3 bytes, on the long side)")
	fs.IntVar(&opt.valSize, "val-size", sft.DefaultValSize, "rows held out as the validation split (at most half the train rows; 0: none)")
	fs.StringVar(&opt.splits, "splits", "train", "comma-separated dataset splits to use (train, test); test targets are for evaluation: asked for here, they become the SFT test split, apart from train and validation")
	fs.IntVar(&opt.limit, "limit", 0, "only the first N instances by ID (0: all), to try a teacher cheaply")
	fs.IntVar(&opt.workers, "workers", sft.DefaultWorkers, "instances with the teacher at once (1 or more)")
	fs.StringVar(&opt.budget, "budget", "", "stop starting teacher calls once this run has spent this many dollars, e.g. 5 or $5 (needs --price for the model)")
	fs.BoolVar(&opt.retryRejects, "retry-rejects", false, "ask the teacher again for answers it was rejected for in an earlier run")
	fs.Float64Var(&opt.temperature, "temperature", sft.DefaultTemperature, "teacher sampling temperature")
	fs.IntVar(&opt.shardRows, "shard-rows", 0, "rows per Parquet file (0: 10,000)")
	addCompressionFlag(fs, &opt.compression)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, rest)
	case opt.dataset == "" || opt.out == "":
		fs.Usage()
		return fmt.Errorf("%w: give --dataset DIR and --out DIR", errUsage)
	}
	thinkSet := false
	fs.Visit(func(f *flag.Flag) { thinkSet = thinkSet || f.Name == "think" })
	if opt.noThink && thinkSet && opt.think {
		return fmt.Errorf("%w: --think and --no-think together", errUsage)
	}
	if err := opt.validate(); err != nil {
		return err
	}
	return runSFT(ctx, env, &opt)
}

// validate checks the flags of `curate sft` before anything is read,
// requested or written.
func (o *sftOptions) validate() error {
	if err := o.global.validate(); err != nil {
		return err
	}
	if err := o.llm.validate(); err != nil {
		return err
	}
	for _, s := range splitList(o.splits) {
		if s != "train" && s != "test" {
			return fmt.Errorf("%w: --splits: unknown split %q (want train, test)", errUsage, s)
		}
	}
	if len(splitList(o.splits)) == 0 {
		return fmt.Errorf("%w: --splits %q names no split (want train, test)", errUsage, o.splits)
	}
	switch {
	case o.numIdeas < 1:
		return fmt.Errorf("%w: --num-ideas %d: want at least 1", errUsage, o.numIdeas)
	case o.maxTokens < 0:
		return fmt.Errorf("%w: --max-tokens %d: want 0 (no limit) or more", errUsage, o.maxTokens)
	case o.valSize < 0:
		return fmt.Errorf("%w: --val-size %d: want 0 (none) or more", errUsage, o.valSize)
	case o.limit < 0:
		return fmt.Errorf("%w: --limit %d: want 0 (all) or more", errUsage, o.limit)
	case o.shardRows < 0:
		return fmt.Errorf("%w: --shard-rows %d: want 0 (the default) or more", errUsage, o.shardRows)
	case o.temperature < 0 || math.IsNaN(o.temperature) || math.IsInf(o.temperature, 0):
		return fmt.Errorf("%w: --temperature %v: want 0 or more", errUsage, o.temperature)
	}
	if err := positive("--workers", o.workers); err != nil {
		return err
	}
	var err error
	if o.codec, err = parseCompression(o.compression); err != nil {
		return err
	}
	_, err = parseBudget(o.budget)
	return err
}

// runSFT regenerates the SFT data of a dataset and prints what it did.
func runSFT(ctx context.Context, env *cmdEnv, opt *sftOptions) error {
	log, err := opt.global.logger(env.stderr)
	if err != nil {
		return err
	}
	heuristic, err := opt.llm.heuristic()
	if err != nil {
		return err
	}
	prices, err := opt.llm.loadPrices()
	if err != nil {
		return err
	}
	budget, err := parseBudget(opt.budget)
	if err != nil {
		return err
	}
	if budget > 0 && !heuristic {
		if _, ok := prices.Lookup(opt.llm.model); !ok {
			return fmt.Errorf("%w: --budget needs a price for %s (--price %s=INPUT/OUTPUT)", errUsage, opt.llm.model, opt.llm.model)
		}
	}
	o := sft.Options{
		NumIdeas: opt.numIdeas, NoThink: opt.noThink || !opt.think,
		MaxTokens: opt.maxTokens, ValSize: opt.valSize, Splits: splitList(opt.splits),
		Limit: opt.limit, Workers: opt.workers, Meter: &llm.Meter{}, Prices: prices, Budget: budget,
		Stop: env.drain, Logger: log, CounterName: "estimate (one token per 3 bytes)",
	}
	if opt.maxTokens == 0 {
		o.MaxTokens = -1
	}
	if opt.valSize == 0 {
		o.ValSize = -1
	}
	if opt.tokenizer != "" {
		tok, err := tokenizer.Load(opt.tokenizer)
		if err != nil {
			return err
		}
		o.Counter, o.CounterName = tok, "tokenizer "+opt.tokenizer
	}

	if heuristic {
		o.Teacher = sft.Heuristic{}
	} else {
		st, err := opt.global.openStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		unlock, err := st.Lock()
		if err != nil {
			return lockError(err, st.Dir())
		}
		defer unlock()
		lcfg := opt.llm.config(env, st, o.Meter, log)
		lcfg.InvalidRetries = 1 // the recipe: retried once with the reason, then rejected
		hc, err := opt.global.httpClient(log, opt.llm.serviceConfigs(lcfg, false)...)
		if err != nil {
			return err
		}
		client, err := llm.New(hc, lcfg)
		if err != nil {
			return err
		}
		if o.Teacher, err = sft.NewLLMTeacher(client, sft.LLMConfig{
			Temperature: tempFlag(opt.temperature), Store: st, RetryRejects: opt.retryRejects, Logger: log,
		}); err != nil {
			return err
		}
	}

	r, err := sft.Run(ctx, opt.dataset, opt.out, o, sft.WriteOptions{ShardRows: opt.shardRows, Version: version, Compression: opt.codec})
	if errors.Is(err, publish.ErrLocked) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	printSFT(env, r, opt.out)
	printUsage(env.stderr, o.Meter, prices)
	if r.Stopped {
		fmt.Fprintf(env.stderr, "curate sft: stopped before the end; nothing written. Run again to resume: answers so far are cached.\n")
		return &exitError{code: 130, err: errors.New("stopped")}
	}
	return nil
}

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
func printSFT(env *cmdEnv, r *sft.Result, out string) {
	rep := &r.Report
	w := env.stderr
	if !r.Stopped {
		fmt.Fprintf(w, "curate sft: %d train and %d validation rows in %s (teacher %s, K=%d, %s)\n",
			rep.Rows[sft.SplitTrain], rep.Rows[sft.SplitValidation], out, rep.Teacher, rep.NumIdeas, map[bool]string{true: "think", false: "no-think"}[rep.Think])
		if n := rep.Rows[sft.SplitTest]; n > 0 {
			fmt.Fprintf(w, "curate sft: and %d rows of the dataset's test targets, asked for with --splits, in the SFT test split (never train or validation)\n", n)
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
}

// sortedReasons orders reasons as the gate checks them, then the others
// alphabetically.
func sortedReasons(m map[string]int) []string {
	order := gate.Reasons()
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
