// Command curate-chaos runs curate's chaos harness (make chaos ROUNDS=N):
// seeded rounds of SIGKILLs, concurrent writers, usage errors, damaged
// files and blobs, truncated WALs, a user's files, a lost robots.txt, a
// copied gold card, keys planted in echoing services, instructions a model
// obeys quietly and hostile pages, aimed at a dataset published from the
// simulated services of package sim on loopback (see package
// internal/chaos). It prints a line per round and the figures per kind
// (the largest peak RSS of a command among them), and exits 1 when a round
// failed.
//
// Usage:
//
//	curate-chaos [-curate bin/curate] [-rounds 100] [-seed 1] [-kinds a,b] [-timeout 30m] [-json FILE]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/groundwork/curate/internal/chaos"
)

func main() {
	var (
		curate   = flag.String("curate", "bin/curate", "the curate binary")
		rounds   = flag.Int("rounds", 100, "rounds to run")
		seed     = flag.Uint64("seed", 1, "seed of every choice")
		kinds    = flag.String("kinds", "", "comma-separated kinds of round (default all: "+kindNames()+")")
		targets  = flag.Int("targets", 24, "targets of the simulated world")
		timeout  = flag.Duration("timeout", 30*time.Minute, "start no round after this long")
		cmdLimit = flag.Duration("command-timeout", 2*time.Minute, "a curate command running longer has hung, and is killed")
		work     = flag.String("dir", "", "work directory (default: a temporary one, removed unless a round failed)")
		jsonOut  = flag.String("json", "", "also write the report as JSON to this file")
	)
	flag.Parse()
	bin, err := filepath.Abs(*curate)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "curate-chaos: -curate %s: %v (make build makes bin/curate)\n", *curate, err)
		os.Exit(2)
	}
	dir := *work
	if dir == "" {
		if dir, err = os.MkdirTemp("", "curate-chaos-"); err != nil {
			fmt.Fprintln(os.Stderr, "curate-chaos:", err)
			os.Exit(2)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "curate-chaos:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := chaos.Config{Curate: []string{bin}, Dir: dir, Rounds: *rounds, Seed: *seed, Targets: *targets,
		CommandTimeout: *cmdLimit, Deadline: time.Now().Add(*timeout), Log: os.Stdout}
	if *kinds != "" {
		cfg.Kinds = strings.Split(*kinds, ",")
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "curate-chaos:", err)
		fmt.Fprintln(os.Stderr, "curate-chaos: the work directory is", dir)
		os.Exit(2)
	}
	fmt.Print("\n" + rep.Summary())
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "curate-chaos:", err)
		}
	}
	if len(rep.Failed()) > 0 {
		fmt.Println("the work directory is kept:", dir)
		os.Exit(1)
	}
	if *work == "" {
		os.RemoveAll(dir)
	}
}

func kindNames() string {
	var names []string
	for _, k := range chaos.Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ",")
}
