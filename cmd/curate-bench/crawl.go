package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/sim"
)

// estimateResult compares `curate run --dry-run` made before a run with
// what the run then did.
type estimateResult struct {
	Targets, Pilot int
	Services       []estimateRow `json:"services"`
	// EstWall is the estimate's wall time; Pipeline the run's per-target
	// stages and Wall the whole process (start-up and dataset included).
	EstWall, Pipeline, Wall time.Duration
	Exit                    int
}

type estimateRow struct {
	Name      string  `json:"name"`
	Estimated int     `json:"estimated"`
	Actual    int     `json:"actual"`
	Ratio     float64 `json:"ratio"` // estimated / actual
}

// benchEstimate runs a pilot of the first opt.pilot targets, asks for the
// estimate of the whole list on that store, runs the whole list, and
// compares.
func benchEstimate(ctx context.Context, opt *options, res *results) error {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets})
	if err != nil {
		return err
	}
	s, err := sim.Start(w, rateLimits(20*time.Millisecond, opt.crawlDelay))
	if err != nil {
		return err
	}
	defer s.Close()
	dir := filepath.Join(opt.work, "estimate")
	args, err := runArgs(w, s, dir)
	if err != nil {
		return err
	}
	args = append(args, rateFlags...)
	pilot := filepath.Join(dir, "pilot.txt")
	if err := os.WriteFile(pilot, []byte(strings.Join(w.TargetIDs()[:opt.pilot], "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "estimate: a pilot of %d targets, the estimate of %d, the run\n", opt.pilot, opt.rateTargets)
	r, err := runCurate(ctx, opt, benchEnv, replaceTargets(args, pilot)...)
	if err != nil {
		return err
	}
	if r.Exit != 0 {
		return fmt.Errorf("estimate pilot: curate exited %d:\n%s", r.Exit, tail(r.Stderr, 30))
	}
	// The simulated model is in no model table: the estimate prices it
	// at a stated price (it counts requests here, not dollars).
	est, err := runCurateOut(ctx, opt, append(args, "--dry-run", "--json", "--price", sim.Model+"=1/1")...)
	if err != nil {
		return err
	}
	var e struct {
		Services []struct {
			Name     string `json:"service"`
			Requests int    `json:"requests"`
		} `json:"services"`
		Stages []struct {
			Calls int `json:"llm_calls"`
		} `json:"stages"`
		Wall struct {
			Seconds float64 `json:"seconds"`
		} `json:"wall"`
	}
	if err := json.Unmarshal(est, &e); err != nil {
		return fmt.Errorf("estimate: %w\n%s", err, est)
	}
	s.Reset()
	r, err = runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return err
	}
	if r.Exit != 0 {
		return fmt.Errorf("estimate run: curate exited %d:\n%s", r.Exit, tail(r.Stderr, 30))
	}
	er := &estimateResult{Targets: opt.rateTargets, Pilot: opt.pilot, EstWall: time.Duration(e.Wall.Seconds * float64(time.Second)),
		Pipeline: pipelineWall(r.Stderr), Wall: r.Wall, Exit: r.Exit}
	stats := s.Stats()
	for _, name := range []string{sim.Arxiv, sim.Ar5iv, sim.ArxivAPI, sim.S2, sim.LLM} {
		row := estimateRow{Name: name, Actual: stats[name].Requests}
		for _, se := range e.Services {
			if se.Name == name {
				row.Estimated = se.Requests
			}
		}
		if name == sim.LLM {
			for _, st := range e.Stages {
				row.Estimated += st.Calls
			}
		}
		if row.Actual > 0 {
			row.Ratio = float64(row.Estimated) / float64(row.Actual)
		}
		er.Services = append(er.Services, row)
	}
	res.Estimate = er
	return nil
}

// replaceTargets returns args with the --targets file replaced.
func replaceTargets(args []string, file string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if out[i] == "--targets" && i+1 < len(out) {
			out[i+1] = file
		}
	}
	return out
}

// archiveResult says what a run with page archives asked for.
type archiveResult struct {
	Targets int `json:"targets"`
	// Archived is the papers held in the archives (a directory of saved
	// target pages and an ar5iv-style zip of source pages); Served the
	// pages curate read from them; Asked the requests for archived papers
	// (the aim: none).
	Archived, Served, Asked int
	Requests                map[string]int `json:"requests"`
	Exit                    int
}

var servedRE = regexp.MustCompile(`html archives: (\d+) pages served`)

// benchArchive runs opt.rateTargets targets with a third of the targets'
// pages in a directory and the sources of every other target in a zip.
func benchArchive(ctx context.Context, opt *options, res *results) error {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets})
	if err != nil {
		return err
	}
	dir := filepath.Join(opt.work, "archive")
	pages, zipPath := filepath.Join(dir, "pages"), filepath.Join(dir, "ar5iv-no-problem.zip")
	if err := os.MkdirAll(pages, 0o755); err != nil {
		return err
	}
	held := map[string]bool{}
	zf, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(zf)
	for i := range w.NumTargets() {
		p := w.Target(i)
		if i%3 == 0 && p.HTML != sim.HTMLNone {
			held[p.ArxivID] = true
			if err := os.WriteFile(filepath.Join(pages, strings.ReplaceAll(p.ArxivID, "/", "_")+".html"), w.Page(&p, p.HTML), 0o644); err != nil {
				return err
			}
		}
		if i%2 == 1 {
			for _, ref := range w.References(&p) {
				q := ref.Paper
				if ref.Role != sim.RoleSource || q.HTML == sim.HTMLNone || q.IsTarget() || held[q.ArxivID] {
					continue
				}
				held[q.ArxivID] = true
				f, err := zw.Create("no-problem/" + q.ArxivID + ".html")
				if err != nil {
					return err
				}
				if _, err := f.Write(w.Page(&q, q.HTML)); err != nil {
					return err
				}
			}
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := zf.Close(); err != nil {
		return err
	}
	s, err := sim.Start(w, sim.Options{LLMAnswer: sim.CurateModel, Limits: map[string]sim.Limits{sim.LLM: {MaxInFlight: llmSlots, Latency: 10 * time.Millisecond}}})
	if err != nil {
		return err
	}
	defer s.Close()
	args, err := runArgs(w, s, dir)
	if err != nil {
		return err
	}
	args = append(args, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "16", "--html-archive", pages, "--html-archive", zipPath)
	fmt.Fprintf(os.Stderr, "archive: %d targets, %d papers in archives\n", opt.rateTargets, len(held))
	r, err := runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return err
	}
	if r.Exit != 0 {
		return fmt.Errorf("archive: curate exited %d:\n%s", r.Exit, tail(r.Stderr, 30))
	}
	ar := &archiveResult{Targets: opt.rateTargets, Archived: len(held), Requests: requests(s), Exit: r.Exit}
	if m := servedRE.FindStringSubmatch(r.Stderr); m != nil {
		ar.Served, _ = strconv.Atoi(m[1])
	}
	for _, name := range []string{sim.Arxiv, sim.Ar5iv} {
		for _, c := range s.Service(name).Calls() {
			if held[strings.TrimPrefix(c.Key, "GET /html/")] {
				ar.Asked++
			}
		}
	}
	res.Archive = ar
	return nil
}
