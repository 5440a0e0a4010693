// Package chaos is curate's chaos harness (make chaos ROUNDS=N): rounds
// of misfortune aimed at a published dataset — the curate binary killed
// with SIGKILL at random moments, two writers on one output, usage errors
// aimed at it, its files and the store's blobs damaged, the ledger's WAL
// truncated, a user's files kept beside it, a robots.txt blob lost, a test
// gold card copied into training — and at curate itself: services echoing
// requests with the configured keys planted, papers carrying instructions
// that the simulated model obeys quietly, pages built to cost a parser the
// most memory — against the simulated services of package sim, on
// loopback only.
//
// After every round the harness checks what must hold whatever happened:
// the published dataset passes curate dataset --check, or is byte for byte
// the one published before the round (never wrong, never partial); the
// user's files in it are intact; no command panicked; none hung (each runs
// under a deadline and is killed past it). Each kind of round checks its
// own expectations too (a usage error exits 2 before any request, a lost
// robots.txt is asked for again, a copied gold fails --check, no planted
// key is anywhere curate writes, nothing a planted instruction dictates is
// published unflagged, a hostile page is cut by the parse budget and no
// command's peak RSS reaches 1 GB, ...).
//
// Rounds are seeded: the same seed, rounds and kinds make the same choices
// (which kind, when to kill, what to damage); timing makes the rest vary.
// A kind is a name and a function of a *Round (see Kinds); adding one is
// adding an entry to the table, and a kind that needs another world (its
// own faults, pages or keys) makes a Home of its own with Round.NewHome.
package chaos

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/groundwork/curate/sim"
)

// Config configures Run.
type Config struct {
	// Curate is the command that runs curate: the binary, and any
	// arguments before curate's own (a test binary acting as curate).
	Curate []string
	// Env is added to the environment curate runs in.
	Env []string
	// Dir is the work directory (every store, output and copy goes
	// there); it must exist.
	Dir string
	// Rounds is how many rounds to run; Seed seeds every choice.
	Rounds int
	Seed   uint64
	// Kinds names the kinds of round to take turns (default: every kind
	// of Kinds).
	Kinds []string
	// Extra kinds, beside the table's (tests add one that must fail).
	Extra []Kind
	// Targets is the simulated world's size (default 24); the first run
	// takes a third of them, and runs killed on the way add more.
	Targets int
	// CommandTimeout bounds each curate command (default 2 minutes): one
	// still running then has hung, and is killed.
	CommandTimeout time.Duration
	// Deadline, when set, stops starting rounds after it (the report says
	// how many ran).
	Deadline time.Time
	// Log, when set, gets a line per round.
	Log io.Writer
}

// Kind is a kind of round.
type Kind struct {
	Name string
	// Doc says in a line what the round does and expects.
	Doc string
	Run func(r *Round)
}

// Report is what Run found.
type Report struct {
	Seed   uint64
	Rounds []RoundResult
	// Wall is the time the rounds took (the first run apart).
	Wall time.Duration
	// Stopped says why fewer rounds ran than asked ("" when all ran).
	Stopped string
	// HarnessRSSMB is the harness's own peak RSS, in MB: every command's
	// figure is at least this (see HarnessMaxRSS).
	HarnessRSSMB int64
}

// RoundResult is one round's outcome.
type RoundResult struct {
	N        int
	Kind     string
	Wall     time.Duration
	Notes    []string `json:",omitempty"`
	Failures []string `json:",omitempty"`
	// Commands counts the curate commands the round ran; Killed those it
	// killed on purpose.
	Commands, Killed int
	// MaxRSSMB is the largest peak RSS of its commands, in MB (see
	// Result.MaxRSS).
	MaxRSSMB int64
}

// Failed lists the rounds that failed.
func (r *Report) Failed() []RoundResult {
	var out []RoundResult
	for _, rr := range r.Rounds {
		if len(rr.Failures) > 0 {
			out = append(out, rr)
		}
	}
	return out
}

// Summary renders the figures: rounds, failures and kills per kind.
func (r *Report) Summary() string {
	type agg struct {
		rounds, failed, commands, killed int
		rss                              int64
	}
	by := map[string]*agg{}
	for _, rr := range r.Rounds {
		a := by[rr.Kind]
		if a == nil {
			a = &agg{}
			by[rr.Kind] = a
		}
		a.rounds++
		a.commands += rr.Commands
		a.killed += rr.Killed
		a.rss = max(a.rss, rr.MaxRSSMB)
		if len(rr.Failures) > 0 {
			a.failed++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "chaos: %d rounds (seed %d) in %s, %d failed\n", len(r.Rounds), r.Seed, r.Wall.Round(time.Second), len(r.Failed()))
	if r.Stopped != "" {
		fmt.Fprintf(&b, "stopped early: %s\n", r.Stopped)
	}
	fmt.Fprintf(&b, "peak RSS from each command's rusage (at least the harness's own, %d MB)\n", r.HarnessRSSMB)
	fmt.Fprintf(&b, "%-18s %6s %6s %9s %7s %12s\n", "kind", "rounds", "failed", "commands", "killed", "peak RSS MB")
	names := mapsKeys(by)
	sort.Strings(names)
	for _, name := range names {
		a := by[name]
		fmt.Fprintf(&b, "%-18s %6d %6d %9d %7d %12d\n", name, a.rounds, a.failed, a.commands, a.killed, a.rss)
	}
	for _, rr := range r.Failed() {
		fmt.Fprintf(&b, "round %d (%s): %s\n", rr.N, rr.Kind, strings.Join(rr.Failures, "; "))
	}
	return b.String()
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Run runs cfg.Rounds rounds and reports them. The error is for a harness
// that could not start (no curate, a first run that failed); a round that
// fails is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Curate) == 0 {
		return nil, errors.New("chaos: no curate command")
	}
	cfg.Targets = cmp.Or(cfg.Targets, 24)
	cfg.CommandTimeout = cmp.Or(cfg.CommandTimeout, 2*time.Minute)
	kinds, err := pick(cfg)
	if err != nil {
		return nil, err
	}
	h, err := NewHome(ctx, &cfg, "home", sim.WorldConfig{Seed: cfg.Seed + 1, Targets: cfg.Targets}, sim.Options{})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.Setup(ctx); err != nil {
		return nil, err
	}
	rep := &Report{Seed: cfg.Seed}
	start := time.Now()
	order := rand.New(rand.NewPCG(cfg.Seed, 0))
	var turn []Kind
	for n := 1; n <= cfg.Rounds; n++ {
		if ctx.Err() != nil {
			rep.Stopped = ctx.Err().Error()
			break
		}
		if !cfg.Deadline.IsZero() && time.Now().After(cfg.Deadline) {
			rep.Stopped = fmt.Sprintf("the deadline passed after %d rounds", n-1)
			break
		}
		if len(turn) == 0 {
			// Every kind once per turn, in a seeded order.
			turn = slices.Clone(kinds)
			order.Shuffle(len(turn), func(i, j int) { turn[i], turn[j] = turn[j], turn[i] })
		}
		k := turn[0]
		turn = turn[1:]
		r := h.newRound(ctx, n, k.Name)
		func() {
			defer func() {
				if p := recover(); p != nil {
					r.Failf("the harness panicked: %v", p)
				}
			}()
			k.Run(r)
			r.Invariant("the round's end")
		}()
		rr := r.result()
		rep.Rounds = append(rep.Rounds, rr)
		if cfg.Log != nil {
			status := "ok"
			if len(rr.Failures) > 0 {
				status = "FAILED: " + strings.Join(rr.Failures, "; ")
			}
			fmt.Fprintf(cfg.Log, "round %3d %-18s %6s %s%s\n", n, k.Name, rr.Wall.Round(10*time.Millisecond), status, notes(rr.Notes))
		}
	}
	rep.Wall = time.Since(start)
	rep.HarnessRSSMB = HarnessMaxRSS() >> 20
	return rep, nil
}

func notes(ns []string) string {
	if len(ns) == 0 {
		return ""
	}
	return " (" + strings.Join(ns, "; ") + ")"
}

// pick returns the kinds cfg asks for.
func pick(cfg Config) ([]Kind, error) {
	all := append(Kinds(), cfg.Extra...)
	if len(cfg.Kinds) == 0 {
		return all, nil
	}
	var out []Kind
	for _, name := range cfg.Kinds {
		i := slices.IndexFunc(all, func(k Kind) bool { return k.Name == name })
		if i < 0 {
			var names []string
			for _, k := range all {
				names = append(names, k.Name)
			}
			return nil, fmt.Errorf("chaos: no kind of round %q (there are %s)", name, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Round is one round: the home it acts on, its seeded randomness, and
// what it found.
type Round struct {
	N    int
	Kind string
	// Rand makes the round's choices.
	Rand *rand.Rand
	Home *Home

	ctx    context.Context
	start  time.Time
	before string // the published dataset's digest when the round began
	*tally
}

// tally is what a round found, shared by its views of other homes (At).
type tally struct {
	notes    []string
	failures []string
	commands int
	killed   int
	maxRSS   int64 // the largest peak RSS of its commands, in bytes
}

// At returns a view of the round that runs its commands on home h (a
// world of the kind's own); what it finds is the round's.
func (r *Round) At(h *Home) *Round {
	c := *r
	c.Home = h
	return &c
}

// Context is the round's context.
func (r *Round) Context() context.Context { return r.ctx }

// Failf records a failure of the round.
func (r *Round) Failf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// Notef records what the round did, for the log.
func (r *Round) Notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *Round) result() RoundResult {
	return RoundResult{N: r.N, Kind: r.Kind, Wall: time.Since(r.start), Notes: r.notes, Failures: r.failures, Commands: r.commands, Killed: r.killed,
		MaxRSSMB: r.maxRSS >> 20}
}

// Invariant checks what holds after anything: the published dataset
// passes --check or is the one published before the round; the user's
// files in it are intact. A dataset that passes becomes the one the next
// round starts from (and the home's backup of it).
func (r *Round) Invariant(when string) {
	h := r.Home
	now, err := treeDigest(h.Out)
	if err != nil {
		r.Failf("%s: read the published dataset: %v", when, err)
		return
	}
	if missing := h.checkUserFiles(); len(missing) > 0 {
		r.Failf("%s: the user's files in the output directory are gone or changed: %s", when, strings.Join(missing, ", "))
	}
	check := r.Curate("dataset", "--check", h.Out)
	switch {
	case check.Code == 0:
		if now != h.good {
			if err := h.backup(); err != nil {
				r.Failf("%s: back up the published dataset: %v", when, err)
			}
			h.good = now
		}
	case now == r.before:
		r.Notef("%s: the dataset fails --check but is the one published before the round", when)
	default:
		r.Failf("%s: the published dataset is wrong or partial: --check exits %d and it is not the one published before the round:\n%s",
			when, check.Code, firstLines(check.Stdout+check.Stderr, 6))
	}
}

// Restore puts the last dataset that passed --check back in place (after
// a round damaged it on purpose), the user's files with it.
func (r *Round) Restore() {
	if err := r.Home.restore(); err != nil {
		r.Failf("restore the published dataset: %v", err)
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… %d more lines", len(lines)-n))
	}
	return "    " + strings.Join(lines, "\n    ")
}

// treeDigest hashes every path and file under dir (symlinks by target);
// an absent dir hashes as such.
func treeDigest(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			line += " -> " + t
		case !d.IsDir():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), nil
}
