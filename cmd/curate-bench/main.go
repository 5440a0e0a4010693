// Command curate-bench runs the end-to-end benchmarks of curate against
// the simulated services of package sim (make bench-e2e):
//
//   - rate: 200 targets with arXiv at 20 requests/s and a robots.txt
//     Crawl-delay of 200 ms (-crawl-delay), Semantic Scholar at 10/s and
//     an LLM with 16 requests in flight at 100 ms; curate's own limits set
//     to match. It reports requests per target, 429s, the shortest gap
//     between arXiv requests as sent and as received, and wall time over
//     the lower bound the busiest service sets (its requests times its
//     spacing; for the LLM, calls times latency over the requests in
//     flight).
//   - estimate: a pilot run, then `curate run --dry-run` and the run it
//     estimates: estimated against actual requests and wall time.
//   - archive: a run with page archives (a directory and an ar5iv-style
//     zip): the requests made for archived papers (zero is the aim).
//   - memory: the peak RSS of `curate run` on 5,000 simulated targets
//     (and on the sizes -memory-more gives, up to 49,999), and with a
//     GOMEMLIMIT (-memlimit).
//   - noop: `curate run` again on the 5,000-target store: the requests it
//     makes (zero is the aim) and its wall time.
//   - hostile: the peak RSS of `curate parse` and `curate fetch` on pages
//     (and TEI) built to cost a parser the most per byte (package
//     hostile), each 62.9 MB (-hostile-bytes), and of two such pages
//     fetched at once.
//   - providers: the rate benchmark's world, its pages lengthened to the
//     recipe's papers (-paper-tokens), through the simulated OpenAI
//     (gpt-5.4-mini) and Anthropic (claude-opus-4-8, claude-sonnet-4-6)
//     APIs, which apply the providers' per-model rules, in sync mode
//     without and with prompt caching and in batch mode: cost at the
//     model table's prices and wall time per stage, the share of input
//     tokens served from the prompt cache, and the cost of classify and
//     the cards as a share of the list price (input alone and all).
//
// curate runs as a subprocess (the binary given with -curate, else one
// built into the work directory), so its peak RSS is its own; the
// services run in this process.
//
// Usage:
//
//	curate-bench [flags] [rate|estimate|archive|memory|hostile|providers|all]
//	curate-bench [flags] serve   # start the services, print curate's flags, wait
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/groundwork/curate/sim"
)

type options struct {
	curate      string
	work        string
	out         string
	seed        uint64
	rateTargets int
	memTargets  int
	memMore     []int
	pilot       int
	crawlDelay  time.Duration
	arxivLat    string
	memLimit    string
	keep        bool
	verbose     bool
	// hostileBytes is the size of each hostile input.
	hostileBytes int
	hostileKinds map[string]bool // nil: every kind
	// paperTokens is the text of each page in the providers benchmark.
	paperTokens int
}

func main() {
	var opt options
	flag.StringVar(&opt.curate, "curate", "", "curate binary (default: build ./cmd/curate into the work directory)")
	flag.StringVar(&opt.work, "work", "", "work directory for stores and the binary (default: a temporary directory, removed after)")
	flag.StringVar(&opt.out, "out", "", "also write the results as JSON to this file")
	flag.Uint64Var(&opt.seed, "seed", 1, "seed of the simulated world")
	flag.IntVar(&opt.rateTargets, "rate-targets", 200, "targets of the rate and providers benchmarks")
	flag.IntVar(&opt.paperTokens, "paper-tokens", 6000, "tokens of text of each simulated page in the providers benchmark (the recipe's papers: about 6,000; 0: the short pages)")
	flag.IntVar(&opt.memTargets, "memory-targets", 5000, "targets of the memory and no-op benchmarks")
	flag.Func("memory-more", "also measure peak RSS on worlds of these sizes, comma-separated (at most 49999), for the trend", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 49999 {
				return fmt.Errorf("%q: want target counts from 1 to 49999", f)
			}
			opt.memMore = append(opt.memMore, n)
		}
		return nil
	})
	flag.DurationVar(&opt.crawlDelay, "crawl-delay", 200*time.Millisecond, "the Crawl-delay of the simulated arxiv.org's robots.txt in the rate and estimate benchmarks")
	flag.IntVar(&opt.pilot, "pilot", 40, "targets of the pilot run before the estimate benchmark's estimate")
	flag.StringVar(&opt.arxivLat, "arxiv-latency", "20ms,150ms", "latencies of the simulated arXiv and ar5iv, one rate run each")
	flag.StringVar(&opt.memLimit, "memlimit", "250MiB", "also run the memory benchmark with this GOMEMLIMIT (empty: skip)")
	flag.IntVar(&opt.hostileBytes, "hostile-bytes", 62_900_000, "size of each hostile page and TEI of the hostile benchmark (the issue's 62.9 MB page of tiny tags, under the 64 MiB cap)")
	flag.Func("hostile-kinds", "only these hostile inputs, comma-separated (default: every one)", func(v string) error {
		opt.hostileKinds = map[string]bool{}
		for _, k := range strings.Split(v, ",") {
			opt.hostileKinds[strings.TrimSpace(k)] = true
		}
		return nil
	})
	flag.BoolVar(&opt.keep, "keep", false, "keep the work directory")
	flag.BoolVar(&opt.verbose, "v", false, "show curate's stderr")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: curate-bench [flags] [rate|estimate|archive|memory|hostile|providers|all|serve]\n\nflags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	what := "all"
	if flag.NArg() > 0 {
		what = flag.Arg(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, &opt, what); err != nil {
		fmt.Fprintln(os.Stderr, "curate-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opt *options, what string) error {
	if what == "serve" {
		return serve(ctx, opt)
	}
	if opt.work == "" {
		dir, err := os.MkdirTemp("", "curate-bench-")
		if err != nil {
			return err
		}
		opt.work = dir
		if !opt.keep {
			defer os.RemoveAll(dir)
		}
	}
	if opt.curate == "" {
		opt.curate = filepath.Join(opt.work, "curate")
		fmt.Fprintf(os.Stderr, "building curate into %s\n", opt.curate)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", opt.curate, "github.com/groundwork/curate/cmd/curate")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build curate: %w", err)
		}
	}
	res := &results{Machine: machine()}
	benches := map[string]func(context.Context, *options, *results) error{
		"rate": benchRate, "estimate": benchEstimate, "archive": benchArchive, "memory": benchMemory, "hostile": benchHostile, "providers": benchProviders,
	}
	order := []string{what}
	if what == "all" {
		order = []string{"rate", "estimate", "archive", "memory", "hostile", "providers"}
	}
	for _, name := range order {
		b, ok := benches[name]
		if !ok {
			return fmt.Errorf("unknown benchmark %q (rate, estimate, archive, memory, hostile, providers, all, serve)", what)
		}
		if err := b(ctx, opt, res); err != nil {
			return err
		}
	}
	res.print(os.Stdout)
	if opt.out != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(opt.out, append(data, '\n'), 0o644)
	}
	return nil
}

// serve starts a world's services and waits for an interrupt.
func serve(ctx context.Context, opt *options) error {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets})
	if err != nil {
		return err
	}
	s, err := sim.Start(w, sim.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	f, err := os.CreateTemp("", "sim-targets-*.txt")
	if err != nil {
		return err
	}
	f.Write(w.TargetsFile())
	f.Close()
	defer os.Remove(f.Name())
	fmt.Printf("curate run --targets %s %s\n", f.Name(), strings.Join(s.Flags(), " "))
	<-ctx.Done()
	data, _ := json.MarshalIndent(s.Stats(), "", "  ")
	fmt.Printf("%s\n", data)
	return nil
}

// runResult is what a curate run cost.
type runResult struct {
	Exit int
	Wall time.Duration
	// MaxRSSKB is the process's peak resident set (VmHWM, sampled); StagesRSSKB
	// the peak when the per-target stages had ended, before the dataset
	// stage (VmHWM read when curate prints its run summary).
	MaxRSSKB, StagesRSSKB int64
	Stdout, Stderr        string
}

// runCurate runs the curate binary with args and env added to this
// process's environment. Its stderr is kept (and shown with -v).
func runCurate(ctx context.Context, opt *options, env []string, args ...string) (*runResult, error) {
	cmd := exec.CommandContext(ctx, opt.curate, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout strings.Builder // what curate wrote: the dataset line, failures
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &runResult{}
	// The peak RSS is sampled from /proc rather than taken from rusage:
	// Linux counts in a child's ru_maxrss the parent's resident set at the
	// fork (Go forks with CLONE_VM, and exec records the old mm's peak),
	// so rusage reports this process's memory whenever it is the larger.
	// VmHWM is a high-water mark: the last sample holds every earlier peak.
	var peak atomic.Int64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var stderr strings.Builder
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		stderr.WriteString(line + "\n")
		if opt.verbose {
			fmt.Fprintln(os.Stderr, line)
		}
		if strings.Contains(line, "targets through every stage") {
			r.StagesRSSKB = vmHWM(cmd.Process.Pid)
		}
	}
	// The last sample before the process exits: stderr closed means it is
	// ending, and /proc keeps its status until Wait reaps it.
	close(stop)
	<-sampled
	if kb := vmHWM(cmd.Process.Pid); kb > peak.Load() {
		peak.Store(kb)
	}
	err = cmd.Wait()
	r.Wall, r.Stderr, r.Stdout = time.Since(start), stderr.String(), stdout.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	r.MaxRSSKB = peak.Load()
	return r, nil
}

// runCurateOut runs the curate binary with args and returns its stdout.
func runCurateOut(ctx context.Context, opt *options, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, opt.curate, args...)
	cmd.Env = append(os.Environ(), benchEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("curate %s: %w\n%s", args[0], err, tail(stderr.String(), 30))
	}
	return out, nil
}

// vmHWM reads a process's peak resident set so far, in kilobytes (0 when
// /proc does not say).
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}

// machine describes where the benchmarks ran.
func machine() string {
	cpu := runtime.GOARCH
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s/%s, %s", cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}
