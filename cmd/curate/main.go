// Command curate builds document-grounded ideation datasets from the
// scientific literature: it fetches target papers, their citation graph and
// sources, classifies and summarizes them, and writes Parquet splits.
//
// Each subcommand lives in its own cmd_<name>.go file: it parses its flags
// into an options struct and calls one run function that tests call directly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
)

// version is the pipeline version recorded in provenance; set at build time
// with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is one subcommand of curate.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv carries the process's streams and environment so commands can be
// run from tests without touching the real ones.
type cmdEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// isTerminal reports whether stderr is a terminal (progress bars).
	isTerminal bool
	// drain is closed when the user asks the command to stop (the first
	// interrupt); nil in tests.
	drain <-chan struct{}
}

func (e *cmdEnv) stdinReader() io.Reader {
	if e.stdin == nil {
		return strings.NewReader("")
	}
	return e.stdin
}

// errUsage marks a command-line mistake: exit status 2.
var errUsage = errors.New("usage")

// exitError carries a specific exit status with an already-printed message.
type exitError struct {
	code   int
	err    error
	silent bool // the message has been printed already
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func commands() []command {
	// One line per subcommand; the run functions live in cmd_<name>.go.
	cmds := []command{
		{"parse", "parse a saved arXiv or ar5iv HTML page and print its Document as JSON", runParseCmd},
		{"fetch", "fetch papers' HTML from arXiv (ar5iv as fallback) into the store and parse them", runFetchCmd},
		{"show", "print as JSON what the store holds for a paper", runShowCmd},
		{"status", "print what a store holds: items per stage and status, failures, the last run", runStatusCmd},
		{"classify", "decide which references of each target are its sources, with verified quotes", stageCommand("classify", "[--store DIR] [--llm heuristic|endpoint] [--targets FILE] ID...")},
		{"summarize", "write idea cards: a gold card per target and a card per source", stageCommand("summarize", "[--store DIR] [--llm heuristic|endpoint] [--targets FILE] ID...")},
		{"run", "the whole pipeline for a list of targets: every stage, then the dataset", runRunCmd},
		{"refresh", "nightly: discover new targets, redo only new or changed work, publish a new dataset version", runRefreshCmd},
		{"demo", "the whole pipeline, offline, on the bundled synthetic corpus", runDemoCmd},
		{"dataset", "write the Parquet train and test splits (or --check a published dataset)", runDatasetCmd},
		{"report", "write the HTML report of a published dataset", runReportCmd},
		{"export", "write a published dataset in a trainer's format (verl RL/SFT, chat messages, TRL SFT/GRPO) with its settings and reward", runExportCmd},
		{"stats", "reports on a store: 'labels' shows the idea cards' label distributions", runStatsCmd},
		{"citegraph", "pull targets' reference edges from Semantic Scholar and join them to the bibliography", runCitegraphCmd},
		{"sft", "regenerate SFT hindsight traces over a published dataset: teacher ideas, traces, schema gate", runSFTCmd},
		{"gate", "check generations (JSONL or Parquet) with the SFT/RL schema gate: pass rate, rejects by reason", runGateCmd},
		{"topics", "build topic corpora: shared background-paper sets from influential-citation overlap", runTopicsCmd},
		{"pairs", "build the impact judge's validation pairs: training targets of clearly different uptake, as idea-only summaries", runPairsCmd},
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

// defaultMemoryLimit is the soft heap limit curate runs under unless
// GOMEMLIMIT says otherwise: the collector works harder near it instead of
// letting the heap grow to twice the live data (a 5,000-target dataset
// build peaked at 455 MB without it, 273 MB with it, at no cost in time).
const defaultMemoryLimit = 256 << 20

func main() {
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
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, isTerminal: stderrIsTerminal(), drain: drain}
	code := run(ctx, env, os.Args[1:])
	cancel()
	os.Exit(code)
}

// drainContext returns a context cancelled when the command is asked to
// stop (for commands that have nothing to finish gracefully).
func (e *cmdEnv) drainContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if e.drain != nil {
		go func() {
			select {
			case <-e.drain:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// run dispatches args to a subcommand and maps its error to an exit status.
func run(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(env.stdout, "curate", version)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(env.stderr, "curate %s: %v\n", c.name, err)
			return 2
		}
		var ee *exitError
		if errors.As(err, &ee) {
			if !ee.silent {
				fmt.Fprintf(env.stderr, "curate %s: %v\n", c.name, ee.err)
			}
			return ee.code
		}
		fmt.Fprintf(env.stderr, "curate %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(env.stderr, "curate: unknown command %q\n\n", args[0])
	usage(env.stderr)
	return 2
}

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
func newFlagSet(env *cmdEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("curate "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: curate %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with flags and positional arguments in any order
// ("curate fetch ID --store DIR" works as well as "curate fetch --store DIR
// ID"), turning flag errors into exit status 2, and returns the positional
// arguments. A lone "--" ends flag parsing.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{code: 2, err: err, silent: true} // the flag package printed it
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
