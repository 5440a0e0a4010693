// Package cli is the curate command: its subcommands' flags, what they
// print, and their exit statuses. cmd/curate's main calls Main; tests call
// Run with an Env of their own (package clitest runs it for them).
//
// Each subcommand lives in its own cmd_<name>.go file as an options struct
// with an AddFlags method and a Run method over app, the
// composition root; this file dispatches to them and maps their errors to
// exit statuses in one place.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/store"
)

// version is the pipeline version recorded in provenance; set at build time
// with -ldflags "-X github.com/groundwork/curate/cmd/curate/internal/cli.version=...".
var version = "0.1.0-dev"

// errUsage marks a command-line mistake: exit status 2.
var errUsage = app.ErrUsage

// Env carries the process's streams and environment so commands can be
// run from tests without touching the real ones.
type Env struct {
	Stdin  io.Reader // nil reads as empty
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// IsTerminal reports whether stderr is a terminal (progress bars).
	IsTerminal bool
	// Drain is closed when the user asks the command to stop (the first
	// interrupt); nil when nobody will.
	Drain <-chan struct{}
	// PDFResolve and PDFAllowAddr replace the PDF downloader's resolver and
	// address policy; only tests set them (their PDF hosts listen on
	// loopback, which curate never dials for a PDF), never a flag.
	PDFResolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	PDFAllowAddr func(netip.Addr) bool
	// Dial replaces the dialer of the services' connections; only tests
	// set it (a machine that is offline), never a flag.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (e *Env) stdinReader() io.Reader {
	if e.Stdin == nil {
		return strings.NewReader("")
	}
	return e.Stdin
}

// drainContext returns a context cancelled when the command is asked to
// stop (for commands that have nothing to finish gracefully).
func (e *Env) drainContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if e.Drain != nil {
		go func() {
			select {
			case <-e.Drain:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// runner is one subcommand: its flags and its run.
type runner interface {
	AddFlags(fs *flag.FlagSet, env *Env)
	Run(ctx context.Context, env *Env, args []string) error
}

// command names a subcommand.
type command struct {
	name     string
	synopsis string
	summary  string
	new      func() runner
}

func commands() []command {
	// One line per subcommand, alphabetically; the runners live in
	// cmd_<name>.go.
	return []command{
		{"citegraph", "[--store DIR] [--targets FILE] [--refresh] ID...", "pull targets' reference edges from Semantic Scholar and join them to the bibliography", func() runner { return newStageCmd("citegraph", false) }},
		{"classify", "[--store DIR] [--llm heuristic|endpoint] [--targets FILE] ID...", "decide which references of each target are its sources, with verified quotes", func() runner { return newStageCmd("classify", false) }},
		{"dataset", "[--store DIR] [--out DIR] [--targets FILE] [ID...] | --check DIR", "write the Parquet train and test splits (or --check a published dataset)", func() runner { return &datasetCmd{} }},
		{"demo", "[--store DIR] [--out DIR]", "the whole pipeline, offline, on the bundled synthetic corpus", func() runner { return &demoCmd{} }},
		{"estimate", "[--store DIR] --targets FILE|--targets-from FILE [--stages LIST] [--json] [ID...]", "say what a run would still ask and spend (requests per service, time under the effective rates, LLM tokens and cost), making no request", func() runner { return &estimateCmd{} }},
		{"export", "--format " + strings.Join(dataset.Formats(), "|") + " [--split train|test|all] [--encoding parquet|jsonl] [--compression snappy|zstd|gzip|none] [--tokenizer tokenizer.json] --out DIR DATASET",
			"write a published dataset in a trainer's format (verl RL/SFT, chat messages, TRL SFT/GRPO) with its settings and reward, or as InnoEval-style idea-evaluation rows", func() runner { return &exportCmd{} }},
		{"fetch", "[--store DIR] [--targets FILE] [--refetch] ID...", "fetch papers' HTML from arXiv (ar5iv as fallback) into the store and parse them", func() runner { return newStageCmd("fetch", true) }},
		{"gate", "[--num-ideas K] [--strict] [-v] FILE...", "check generations (JSONL or Parquet) with the SFT/RL schema gate: pass rate, rejects by reason", func() runner { return &gateCmd{} }},
		{"licenses", "[--store DIR] [--targets FILE] [--oai-base URL] [--recheck-missing] [ID...]", "record each target's licence from arXiv's OAI-PMH metadata for the dataset card (one request per target not yet recorded)", func() runner { return &licensesCmd{} }},
		{"models", "[--models FILE] [--llm-provider P] [--json] [MODEL]", "print the model table (what each model takes and costs, with sources), or what curate sends a named model", func() runner { return &modelsCmd{} }},
		{"pairs", "--out DIR [--store DIR] [--dataset DIR] [--from-year 2022] [--to-year 2023] [--max-months 4] [--min-ratio 3] [--min-gap 10] [--min-influential-gap 5] [--llm heuristic|endpoint]",
			"build the impact judge's validation pairs: training targets of clearly different uptake, as idea-only summaries", func() runner { return newPairsCmd() }},
		{"parse", "[--source arxiv|ar5iv] [--id ID] FILE|- ...", "parse a saved arXiv or ar5iv HTML page, or a GROBID TEI, and print its Document as JSON", func() runner { return &parseCmd{} }},
		{"refresh", "--out DIR [--targets FILE] [--oai-set SET ...] [--budget-usd X]", "nightly: discover new targets, redo only new or changed work, publish a new dataset version", func() runner { return &refreshCmd{} }},
		{"report", "[--out DIR] DATASET", "write the HTML report of a published dataset", func() runner { return &reportCmd{} }},
		{"run", "--targets FILE [--out DIR] [--stages LIST] [ID...]", "the whole pipeline for a list of targets: every stage, then the dataset", func() runner { return newRunCmd() }},
		{"sft", "--dataset DIR --out DIR [--num-ideas K] [--think|--no-think] [--llm heuristic|endpoint] [--budget DOLLARS]", "regenerate SFT hindsight traces over a published dataset: teacher ideas, traces, schema gate", func() runner { return &sftCmd{} }},
		{"show", "[--store DIR] [--raw] ID...", "print as JSON what the store holds for a paper", func() runner { return &showCmd{} }},
		{"stats", "labels [--store DIR] [--kind gold|source] [--model NAME] [--json]", "reports on a store: 'labels' shows the idea cards' label distributions", func() runner { return &statsCmd{} }},
		{"status", "[--store DIR] [--json]", "print what a store holds: items per stage and status, failures, the last run", func() runner { return &statusCmd{} }},
		{"summarize", "[--store DIR] [--llm heuristic|endpoint] [--targets FILE] ID...", "write idea cards: a gold card per target and a card per source (fetching the sources' pages first)", func() runner { return newStageCmd("summarize", false) }},
		{"topics", "--out DIR [--store DIR] [--targets FILE] [--iou 0.5] [--min-support 3] [--min-background 5] [--max-background 8] [--budget 6] [--splits train] [ID...]", "build topic corpora: shared background-paper sets from influential-citation overlap", func() runner { return &topicsCmd{} }},
	}
}

// defaultMemoryLimit is the soft heap limit curate runs under unless
// GOMEMLIMIT says otherwise: the collector works harder near it instead of
// letting the heap grow to twice the live data (when the dataset stage
// still held every instance, a 5,000-target build peaked at 455 MB
// without it and 273 MB with it, at no cost in time).
const defaultMemoryLimit = 256 << 20

// Main runs curate as a process: args are the command line after the
// program's name; the streams and environment are the process's own, and
// interrupts drain, then cancel, then exit. It returns the exit status.
func Main(args []string) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	// The first interrupt drains (commands stop taking new work and finish
	// what is in flight), the second cancels work in flight, the third
	// exits at once.
	ctx, cancel := context.WithCancel(context.Background())
	drain := make(chan struct{})
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sigs {
			n++
			switch n {
			case 1:
				fmt.Fprintln(os.Stderr, "\ncurate: stopping: finishing work in flight (interrupt again to abandon it)")
				close(drain)
			case 2:
				fmt.Fprintln(os.Stderr, "curate: abandoning work in flight; the next run redoes it")
				cancel()
			default:
				os.Exit(130)
			}
		}
	}()
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, IsTerminal: stderrIsTerminal(), Drain: drain}
	code := Run(ctx, env, args)
	cancel()
	return code
}

// Run dispatches args (a command and its flags and arguments) to a
// subcommand and maps its error to an exit status.
func Run(ctx context.Context, env *Env, args []string) int {
	// Help asked for is output (stdout, exit 0); a command line without a
	// command is a usage error (stderr, exit 2).
	if len(args) == 0 {
		usage(env.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(env.Stdout)
		return 0
	case "help":
		switch len(args) {
		case 1:
			usage(env.Stdout)
			return 0
		case 2:
			args = []string{args[1], "-h"} // help CMD is CMD -h
		default:
			fmt.Fprintf(env.Stderr, "curate help: help takes one command (got %s)\n\n", strings.Join(args[1:], " "))
			usage(env.Stderr)
			return exitUsage
		}
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(env.Stdout, "curate", version)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		fs := newFlagSet(env, c.name, c.synopsis)
		r := c.new()
		r.AddFlags(fs, env)
		rest, err := parseFlags(env, fs, args[1:])
		if err == nil {
			err = r.Run(ctx, env, rest)
		}
		code := exitCode(err)
		var told *toldError
		switch {
		case err == nil || code == 0 || errors.As(err, &told):
		case store.IsDiskFull(err) && !strings.Contains(err.Error(), " is full ("):
			// Wherever it struck (the store's disk, the output's), one
			// status and one sentence.
			fmt.Fprintf(env.Stderr, "curate %s: a disk is full, so the command stopped and published nothing (%s); free some space and run it again\n",
				c.name, strings.Join(strings.Split(err.Error(), "\n"), "; "))
		default:
			fmt.Fprintf(env.Stderr, "curate %s: %v\n", c.name, err)
		}
		return code
	}
	fmt.Fprintf(env.Stderr, "curate: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return 2
}

// Exit statuses, for scripts and cron (see the README).
const (
	exitFailed = 1 // done, but some items failed or were held back (listed), or a check failed
	exitUsage  = 2 // a usage error, a full disk (wherever), or a run that could not go on: nothing is published
	// exitPending: not finished: work waits on LLM answers in a
	// provider's batch (--llm-mode batch). What was finished is
	// published; run the same command again later to collect the rest.
	// 75 is EX_TEMPFAIL of sysexits.h: try again later.
	exitPending     = 75
	exitInterrupted = 130
)

// exitCode maps a command's error to its exit status: 0 done; 1 done but
// some targets failed, were held back or lack metadata (listed), or a
// check failed; 2 a usage error or a run that could not go on (nothing is
// published); 75 not finished, waiting on LLM batches; 130 interrupted.
func exitCode(err error) int {
	var se *statusError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &se):
		return se.code
	case errors.Is(err, app.ErrInterrupted):
		return exitInterrupted
	case errors.Is(err, app.ErrPending):
		return exitPending
	case errors.Is(err, app.ErrUsage), errors.Is(err, app.ErrCannotRun), errors.Is(err, publish.ErrNotOurs), store.IsDiskFull(err):
		return exitUsage
	}
	return exitFailed
}

// statusError gives an error its own exit status (a check that failed: 1,
// a dataset that cannot be read: 2).
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// toldError is an error whose message has been printed already (the flag
// package prints its own).
type toldError struct{ error }

func (e *toldError) Unwrap() error { return e.error }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: curate <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'curate <command> -h' for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
// It prints nothing while parsing: parseFlags says where the usage goes
// (stdout when asked for, stderr after a mistake).
func newFlagSet(_ *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("curate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: curate %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// printFlagUsage writes fs's usage to w.
func printFlagUsage(fs *flag.FlagSet, w io.Writer) {
	out := fs.Output()
	fs.SetOutput(w)
	fs.Usage()
	fs.SetOutput(out)
}

// parseFlags parses args with flags and positional arguments in any order
// ("curate fetch ID --store DIR" works as well as "curate fetch --store DIR
// ID"), turning flag errors into exit status 2, and returns the positional
// arguments. A lone "--" ends flag parsing. -h prints the usage on stdout
// (flag.ErrHelp: exit 0); a flag error prints itself and the usage on
// stderr.
func parseFlags(env *Env, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printFlagUsage(fs, env.Stdout)
				return nil, err
			}
			fmt.Fprintln(env.Stderr, err)
			printFlagUsage(fs, env.Stderr)
			return nil, &toldError{fmt.Errorf("%w: %w", errUsage, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first non-flag or after "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
