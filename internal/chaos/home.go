package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/groundwork/curate/sim"
)

// Home is a store and the dataset published from it, with the simulated
// services they come from.
type Home struct {
	// Store, Out and Targets are the store, the published dataset and
	// the targets file.
	Store, Out, Targets string
	// Servers are the simulated services.
	Servers *sim.Servers
	// Opts are the dataset options of the last publication asked for:
	// --test-from and --shard-rows.
	TestFrom  string
	ShardRows int
	// Taken is how many of the world's targets the targets file holds.
	Taken int
	// Env is added to the environment of the home's commands (its keys).
	Env []string

	cfg   *Config
	dir   string
	label string // names the home's commands in last (a kind's own home)
	good  string // digest of the last published dataset that passed --check
	last  map[string]time.Duration
	user  map[string]string // the user's files in Out, by path
	order []string          // the world's targets, in the order taken
}

// userFiles are what the user keeps in the output directory from the
// start: every round checks they survive.
var userFiles = map[string]string{
	".git/HEAD":                 "ref: refs/heads/main\n",
	".git/objects/0a/1b2c3d4e5": "a git object",
	"NOTES.md":                  "what I know about this dataset",
}

// defaultTestFrom is a home's first --test-from.
const defaultTestFrom = "2026-01-01"

// NewHome starts the simulated services of a world and prepares a store
// and output directory under cfg.Dir/name. The arXiv hosts serve a
// robots.txt (one to lose).
func NewHome(ctx context.Context, cfg *Config, name string, wc sim.WorldConfig, opt sim.Options) (*Home, error) {
	w, err := sim.NewWorld(wc)
	if err != nil {
		return nil, fmt.Errorf("chaos: world: %w", err)
	}
	if opt.Robots == nil {
		opt.Robots = map[string]string{sim.Arxiv: "User-agent: *\nAllow: /\n", sim.Ar5iv: "User-agent: *\nAllow: /\n"}
	}
	if opt.LLMAnswer == nil {
		opt.LLMAnswer = sim.CurateModel // curate's prompts, answered as a diligent model would
	}
	s, err := sim.Start(w, opt)
	if err != nil {
		return nil, fmt.Errorf("chaos: services: %w", err)
	}
	dir := filepath.Join(cfg.Dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Close()
		return nil, err
	}
	h := &Home{
		Store: filepath.Join(dir, "store"), Out: filepath.Join(dir, "dataset"), Targets: filepath.Join(dir, "targets.txt"),
		Servers: s, TestFrom: defaultTestFrom, Taken: max(3, wc.Targets/3),
		cfg: cfg, dir: dir, last: map[string]time.Duration{}, user: map[string]string{},
	}
	return h, h.writeTargets()
}

// Close stops the services.
func (h *Home) Close() error { return h.Servers.Close() }

// NewHome makes a home of the round's kind over a world of its own, in a
// directory of the round's (kept when the round fails, see Done): its
// commands' timings are kept across rounds for Moment, by kind.
func (r *Round) NewHome(wc sim.WorldConfig, opt sim.Options) (*Home, error) {
	h, err := NewHome(r.ctx, r.Home.cfg, filepath.Join(r.Kind, fmt.Sprintf("round-%03d", r.N)), wc, opt)
	if err != nil {
		return nil, err
	}
	h.label, h.last = r.Kind, r.Home.last
	return h, nil
}

// Done stops the home's services and removes its directory unless the
// round failed (its store and outputs are then the evidence).
func (h *Home) Done(r *Round) {
	h.Close()
	if len(r.failures) == 0 {
		os.RemoveAll(h.dir)
	}
}

// Setup runs the first run, plants the user's files in the dataset and
// keeps a backup of it.
func (h *Home) Setup(ctx context.Context) error {
	r := h.newRound(ctx, 0, "setup")
	res := r.Curate(h.RunArgs()...)
	if res.Code != 0 {
		return fmt.Errorf("chaos: the first run exits %d:\n%s", res.Code, firstLines(res.Stderr, 20))
	}
	for rel, body := range userFiles {
		p := filepath.Join(h.Out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
		h.user[rel] = body
	}
	check := r.Curate("dataset", "--check", h.Out)
	if check.Code != 0 {
		return fmt.Errorf("chaos: the first dataset fails --check:\n%s", firstLines(check.Stdout+check.Stderr, 20))
	}
	d, err := treeDigest(h.Out)
	if err != nil {
		return err
	}
	h.good = d
	return h.backup()
}

func (h *Home) newRound(ctx context.Context, n int, kind string) *Round {
	before, _ := treeDigest(h.Out)
	return &Round{N: n, Kind: kind, Home: h, ctx: ctx, start: time.Now(), before: before,
		Rand: rand.New(rand.NewPCG(h.cfg.Seed, uint64(n)+1<<32)), tally: &tally{}}
}

// writeTargets writes the first Taken targets of the world, in a seeded
// order (the world dates its targets in index order: taken in order, the
// first would all be training targets).
func (h *Home) writeTargets() error {
	if h.order == nil {
		h.order = h.Servers.World.TargetIDs()
		rng := rand.New(rand.NewPCG(h.cfg.Seed, 7))
		rng.Shuffle(len(h.order), func(i, j int) { h.order[i], h.order[j] = h.order[j], h.order[i] })
	}
	h.Taken = min(h.Taken, len(h.order))
	return os.WriteFile(h.Targets, []byte(strings.Join(h.order[:h.Taken], "\n")+"\n"), 0o644)
}

// More reports whether the world has targets the targets file lacks.
func (h *Home) More() bool { return h.Taken < len(h.order) }

// TakeMore adds n targets to the targets file (while the world has more):
// the next run has work to do.
func (h *Home) TakeMore(n int) error {
	h.Taken += n
	return h.writeTargets()
}

// base are the flags every command that asks the services takes.
func (h *Home) base() []string {
	return append(h.Servers.Flags(), "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "2", "--log", "warn")
}

// DatasetFlags are the dataset options of the home's publication.
func (h *Home) DatasetFlags() []string {
	return []string{"--test-from", h.TestFrom, "--shard-rows", strconv.Itoa(h.ShardRows)}
}

// RunArgs are the arguments of a curate run of the home.
func (h *Home) RunArgs(extra ...string) []string {
	args := append([]string{"run", "--store", h.Store, "--out", h.Out, "--targets", h.Targets}, h.base()...)
	args = append(args, h.DatasetFlags()...)
	return append(args, extra...)
}

// DatasetArgs are the arguments of a curate dataset of the home from
// store.
func (h *Home) DatasetArgs(store string, extra ...string) []string {
	args := append([]string{"dataset", "--store", store, "--out", h.Out}, h.DatasetFlags()...)
	return append(args, extra...)
}

// Vary picks other dataset options, so the next publication builds a new
// dataset.
func (h *Home) Vary(rng *rand.Rand) {
	cutoffs := []string{"2026-01-01", "2025-10-01", "2026-04-01", "2025-07-01"}
	shards := []int{0, 3, 5}
	for {
		t, s := cutoffs[rng.IntN(len(cutoffs))], shards[rng.IntN(len(shards))]
		if t != h.TestFrom || s != h.ShardRows {
			h.TestFrom, h.ShardRows = t, s
			return
		}
	}
}

// backup copies the published dataset (the user's files apart) beside
// the home.
func (h *Home) backup() error {
	dst := filepath.Join(h.dir, "backup")
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return copyTree(h.Out, dst, func(rel string) bool { _, user := h.user[rel]; return !user && !strings.HasPrefix(rel, ".git") })
}

// restore puts the backup back at Out, keeping the user's files.
func (h *Home) restore() error {
	if err := os.RemoveAll(h.Out); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(h.dir, "backup"), h.Out, func(string) bool { return true }); err != nil {
		return err
	}
	for rel, body := range h.user {
		p := filepath.Join(h.Out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	d, err := treeDigest(h.Out)
	if err != nil {
		return err
	}
	if d != h.good {
		return errors.New("the restored dataset differs from the one backed up")
	}
	return nil
}

// AddUserFile puts a file of the user's into the output directory; every
// round checks it survives.
func (h *Home) AddUserFile(rel, body string) error {
	p := filepath.Join(h.Out, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		return err
	}
	h.user[rel] = body
	// The dataset the round starts from now holds it.
	d, err := treeDigest(h.Out)
	if err == nil {
		h.good = d
	}
	return err
}

// checkUserFiles names the user's files that are gone or changed.
func (h *Home) checkUserFiles() []string {
	var bad []string
	for rel, body := range h.user {
		if b, err := os.ReadFile(filepath.Join(h.Out, filepath.FromSlash(rel))); err != nil || string(b) != body {
			bad = append(bad, rel)
		}
	}
	return bad
}

// copyTree copies the files under src that keep accepts to dst.
func copyTree(src, dst string, keep func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !keep(rel):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Result is how a curate command ended.
type Result struct {
	Code           int // exit status; -1 when killed
	Stdout, Stderr string
	Wall           time.Duration
	// Killed says the round killed it (KillAfter); Hung that it outlived
	// the command timeout.
	Killed, Hung bool
	// MaxRSS is the command's peak resident set in bytes, from its
	// rusage: an upper bound, for Linux counts in a child's peak the
	// harness's own at the fork (see HarnessMaxRSS).
	MaxRSS int64
}

// Curate runs curate with args to its end (or the command timeout) and
// checks that it neither panicked nor hung.
func (r *Round) Curate(args ...string) Result {
	return r.run(-1, args...)
}

// KillAfter runs curate with args and sends it SIGKILL after d, if it is
// still running then.
func (r *Round) KillAfter(d time.Duration, args ...string) Result {
	return r.run(d, args...)
}

// Start starts curate with args; wait returns its result (killing it
// after kill when kill is not negative).
func (r *Round) Start(kill time.Duration, args ...string) (wait func() Result) {
	return r.startTo(nil, kill, args...)
}

// CurateTo runs curate with args to its end, as Curate does, its stdout
// written to stdout rather than kept in the Result (a large output is
// then never in the harness's memory, whose peak counts in every
// command's; see HarnessMaxRSS).
func (r *Round) CurateTo(stdout io.Writer, args ...string) Result {
	return r.startTo(stdout, -1, args...)()
}

func (r *Round) startTo(stdout io.Writer, kill time.Duration, args ...string) (wait func() Result) {
	h := r.Home
	r.commands++
	cmd := exec.Command(h.cfg.Curate[0], append(append([]string(nil), h.cfg.Curate[1:]...), args...)...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1767225600", "CURATE_MAILTO=chaos@example.org")
	cmd.Env = append(cmd.Env, h.cfg.Env...)
	cmd.Env = append(cmd.Env, h.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdout != nil {
		cmd.Stdout = stdout
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Failf("start curate %s: %v", args[0], err)
		return func() Result { return Result{Code: -1} }
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return func() Result {
		res := Result{}
		var err error
		var timer <-chan time.Time
		if kill >= 0 {
			timer = time.After(kill)
		}
		deadline := time.After(h.cfg.CommandTimeout)
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-timer:
				timer = nil
				if cmd.Process.Signal(syscall.SIGKILL) == nil {
					res.Killed = true
				}
			case <-deadline:
				res.Hung = true
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
				break wait
			}
		}
		res.Wall = time.Since(start)
		res.Stdout, res.Stderr = out.String(), errb.String()
		res.MaxRSS = maxRSS(cmd.ProcessState)
		r.maxRSS = max(r.maxRSS, res.MaxRSS)
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			res.Code = ee.ExitCode() // -1 when killed by a signal
			if res.Code != -1 {
				res.Killed = false // it ended before the signal
			}
		default:
			r.Failf("curate %s: %v", args[0], err)
			res.Code = -1
		}
		if res.Killed {
			r.killed++
		}
		if res.Hung {
			r.Failf("curate %s hung: still running after %s", strings.Join(args, " "), h.cfg.CommandTimeout)
		}
		for _, bad := range []string{"panic:", "fatal error:", "goroutine "} {
			if strings.Contains(res.Stderr, bad) || strings.Contains(res.Stdout, bad) {
				r.Failf("curate %s printed %q:\n%s", args[0], bad, firstLines(res.Stderr, 30))
				break
			}
		}
		if !res.Killed && !res.Hung && res.Code >= 0 {
			h.last[h.commandKey(args)] = res.Wall
		}
		return res
	}
}

// maxRSS is a finished process's peak resident set in bytes (0 when
// unknown).
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	return 0
}

// HarnessMaxRSS is the harness's own peak resident set in bytes: Go
// starts a command with the harness's memory mapped (CLONE_VM), and
// Linux's exec keeps that memory's peak as the child's, so a command's
// MaxRSS is at least this much whatever it used.
func HarnessMaxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10
}

func (r *Round) run(kill time.Duration, args ...string) Result {
	return r.Start(kill, args...)()
}

// commandKey names a command for Moment: its name, and --check apart,
// after the home's label.
func (h *Home) commandKey(args []string) string {
	key := args[0]
	if len(args) > 1 && args[1] == "--check" {
		key += " --check"
	}
	if h.label != "" {
		key = h.label + " " + key
	}
	return key
}

// Moment picks a moment within what the command last took to run whole
// (a second when it never ran): when to kill it.
func (r *Round) Moment(command string) time.Duration {
	if r.Home.label != "" {
		command = r.Home.label + " " + command
	}
	d := r.Home.last[command]
	if d <= 0 {
		d = time.Second
	}
	return time.Duration(r.Rand.Int64N(int64(d) + 1))
}
