package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// results are every benchmark's figures.
type results struct {
	Machine  string           `json:"machine"`
	Rate     []*rateResult    `json:"rate,omitempty"`
	Estimate *estimateResult  `json:"estimate,omitempty"`
	Archive  *archiveResult   `json:"archive,omitempty"`
	Memory   []*memoryResult  `json:"memory,omitempty"`
	Noop     *noopResult      `json:"noop,omitempty"`
	Hostile  []*hostileResult `json:"hostile,omitempty"`
	// Providers: the same run through each simulated LLM API and mode.
	Providers []*providerResult `json:"providers,omitempty"`
}

// serviceRow is one service's traffic in a run and the lower bound it sets.
type serviceRow struct {
	Name      string        `json:"name"`
	Limit     string        `json:"limit"`
	Requests  int           `json:"requests"`
	PerTarget float64       `json:"requests_per_target"`
	Sent429   int           `json:"sent_429"`
	Bound     time.Duration `json:"bound_ns"` // what the service allows: requests ÷ rate (or × crawl delay)
	// MinGap is the shortest time between two request arrivals, for a
	// service a robots.txt gives a crawl delay.
	MinGap time.Duration `json:"min_gap_ns,omitempty"`
	Closer int           `json:"closer_than_delay,omitempty"` // arrivals closer than the crawl delay
	// SendGap is the shortest time between two requests as curate wrote
	// them out (its run summary's httpx figures).
	SendGap time.Duration `json:"min_send_gap_ns,omitempty"`
	// First and Last are when the first request arrived and the last was
	// answered, from the start of the run; Idle sums the gaps between
	// requests beyond the bound's spacing (the service waiting on curate).
	First, Last, Idle time.Duration `json:",omitempty"`
	// Serial is the bound curate's own structure adds for the services it
	// sends one request at a time (arXiv, ar5iv, arXiv API: MaxInFlight
	// 1): requests × latency. 0 for the others.
	Serial time.Duration `json:"serial_ns,omitempty"`
}

type rateResult struct {
	Targets    int           `json:"targets"`
	ArxivLat   time.Duration `json:"arxiv_latency_ns"`
	CrawlDelay time.Duration `json:"crawl_delay_ns"`
	Share429   float64       `json:"share_429"` // 429 answers over all requests
	Exit       int           `json:"exit"`
	Wall       time.Duration `json:"wall_ns"`     // the curate process, dataset stage included
	Pipeline   time.Duration `json:"pipeline_ns"` // the per-target stages, as curate reports them
	Services   []serviceRow  `json:"services"`
	Busiest    string        `json:"busiest"`
	Bound      time.Duration `json:"bound_ns"`
	Ratio      float64       `json:"ratio"`          // Wall / Bound
	PipeRate   float64       `json:"pipeline_ratio"` // Pipeline / Bound
	// SerialBusiest and SerialBound are the busiest service and its bound
	// counting Serial too: the floor curate's one-at-a-time services set.
	SerialBusiest string        `json:"serial_busiest"`
	SerialBound   time.Duration `json:"serial_bound_ns"`
	Args          []string      `json:"args"`
}

type memoryResult struct {
	Targets   int            `json:"targets"`
	Env       string         `json:"env,omitempty"`
	Exit      int            `json:"exit"`
	Wall      time.Duration  `json:"wall_ns"`
	Pipeline  time.Duration  `json:"pipeline_ns"`
	MaxRSSKB  int64          `json:"max_rss_kb"`
	StagesKB  int64          `json:"stages_rss_kb"` // peak when the per-target stages ended`
	Requests  map[string]int `json:"requests"`
	Instances string         `json:"instances"`
	StoreMB   float64        `json:"store_mb"`
}

type noopResult struct {
	Targets  int            `json:"targets"`
	Exit     int            `json:"exit"`
	Wall     time.Duration  `json:"wall_ns"`
	Pipeline time.Duration  `json:"pipeline_ns"`
	MaxRSSKB int64          `json:"max_rss_kb"`
	Requests map[string]int `json:"requests"`
	// Asked lists what was requested anyway (method and path), at most 20.
	Asked []string `json:"asked,omitempty"`
}

// The rate benchmark's services, as the issue states them: arXiv 20
// requests/s, Semantic Scholar 10/s, an LLM with 16 requests in flight at
// 100 ms. ar5iv and the arXiv API get arXiv's rate, since curate paces them
// with the same --arxiv-interval.
const (
	arxivRate = 20.0
	s2Rate    = 10.0
	llmSlots  = 16
	llmLat    = 100 * time.Millisecond
)

// rateLimits are the services' limits in the rate, estimate and archive
// benchmarks, and robots the files they serve.
func rateLimits(arxivLat, crawlDelay time.Duration) sim.Options {
	return sim.Options{
		LLMAnswer: sim.CurateModel,
		Limits: map[string]sim.Limits{
			sim.Arxiv:    {Rate: arxivRate, Latency: arxivLat},
			sim.Ar5iv:    {Rate: arxivRate, Latency: arxivLat},
			sim.ArxivAPI: {Rate: arxivRate, Latency: 50 * time.Millisecond},
			sim.S2:       {Rate: s2Rate, Latency: 30 * time.Millisecond},
			sim.LLM:      {MaxInFlight: llmSlots, Latency: llmLat},
		},
		Robots: map[string]string{sim.Arxiv: sim.ArxivRobots(crawlDelay), sim.Ar5iv: sim.Ar5ivRobots},
	}
}

// rateFlags are curate's limits set to match the services'.
var rateFlags = []string{"--arxiv-interval", "50ms", "--s2-interval", "100ms", "--llm-concurrency", "16",
	"--fetch-workers", "4", "--citegraph-workers", "8", "--classify-workers", "16", "--summarize-workers", "16"}

func benchRate(ctx context.Context, opt *options, res *results) error {
	for _, l := range strings.Split(opt.arxivLat, ",") {
		lat, err := time.ParseDuration(strings.TrimSpace(l))
		if err != nil {
			return fmt.Errorf("-arxiv-latency: %w", err)
		}
		rr, err := rateRun(ctx, opt, lat)
		if err != nil {
			return err
		}
		res.Rate = append(res.Rate, rr)
	}
	return nil
}

// rateRun is one rate benchmark, arXiv and ar5iv answering in arxivLat.
func rateRun(ctx context.Context, opt *options, arxivLat time.Duration) (*rateResult, error) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets})
	if err != nil {
		return nil, err
	}
	s, err := sim.Start(w, rateLimits(arxivLat, opt.crawlDelay))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dir := filepath.Join(opt.work, "rate-"+arxivLat.String())
	args, err := runArgs(w, s, dir)
	if err != nil {
		return nil, err
	}
	args = append(args, rateFlags...)
	fmt.Fprintf(os.Stderr, "rate: %d targets, arXiv latency %s\n", opt.rateTargets, arxivLat)
	start := time.Now()
	r, err := runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return nil, err
	}
	if r.Exit != 0 {
		return nil, fmt.Errorf("rate: curate exited %d:\n%s", r.Exit, tail(r.Stderr, 30))
	}
	rr := &rateResult{Targets: opt.rateTargets, ArxivLat: arxivLat, CrawlDelay: opt.crawlDelay, Exit: r.Exit, Wall: r.Wall, Pipeline: pipelineWall(r.Stderr), Args: args}
	rr.Services = serviceRows(s, opt.rateTargets, opt.crawlDelay)
	for i := range rr.Services {
		if row := &rr.Services[i]; row.Name == rr.busiest() {
			row.First, row.Last, row.Idle = span(s.Service(row.Name).Calls(), start, row.Bound/time.Duration(max(row.Requests-row.Sent429, 1)))
		}
	}
	if cs, err := clientStats(ctx, filepath.Join(dir, "store")); err == nil {
		for i := range rr.Services {
			if rr.Services[i].MinGap > 0 {
				rr.Services[i].SendGap = cs[rr.Services[i].Name].MinSendGap
			}
		}
	}
	total, sent429 := 0, 0
	for _, row := range rr.Services {
		total += row.Requests
		sent429 += row.Sent429
		if row.Bound > rr.Bound {
			rr.Bound, rr.Busiest = row.Bound, row.Name
		}
		if b := max(row.Bound, row.Serial); b > rr.SerialBound {
			rr.SerialBound, rr.SerialBusiest = b, row.Name
		}
	}
	rr.Share429 = float64(sent429) / float64(max(total, 1))
	rr.Ratio = float64(rr.Wall) / float64(rr.Bound)
	rr.PipeRate = float64(rr.Pipeline) / float64(rr.Bound)
	return rr, nil
}

// serviceRows are the services' traffic and the bounds they set: a
// service's requests over its rate, or times its crawl delay when
// robots.txt sets a longer one; for the LLM, calls × latency over the
// requests in flight.
func serviceRows(s *sim.Servers, targets int, crawlDelay time.Duration) []serviceRow {
	stats := s.Stats()
	perSecond := func(name string, rate float64, delay time.Duration) serviceRow {
		st := stats[name]
		n := st.Requests - st.Sent429()
		spacing := max(time.Duration(float64(time.Second)/rate), delay)
		limit := fmt.Sprintf("%g req/s", rate)
		if delay > 0 {
			limit += fmt.Sprintf(", Crawl-delay %s", delay)
		}
		row := serviceRow{Name: name, Limit: limit, Requests: st.Requests, Sent429: st.Sent429(),
			PerTarget: float64(st.Requests) / float64(targets), Bound: time.Duration(n) * spacing}
		if name != sim.S2 {
			// curate sends to arXiv, ar5iv and the arXiv API one at a time.
			row.Serial = time.Duration(n) * s.Service(name).Limits().Latency
		}
		if delay > 0 {
			row.MinGap, row.Closer = gaps(s.Service(name).Calls(), delay)
		}
		return row
	}
	rows := []serviceRow{
		perSecond(sim.Arxiv, arxivRate, crawlDelay), perSecond(sim.Ar5iv, arxivRate, 0), perSecond(sim.ArxivAPI, arxivRate, 0),
		perSecond(sim.S2, s2Rate, 0),
	}
	llm := stats[sim.LLM]
	return append(rows, serviceRow{Name: sim.LLM, Limit: fmt.Sprintf("%d in flight × %s", llmSlots, llmLat),
		Requests: llm.Requests, Sent429: llm.Sent429(), PerTarget: float64(llm.Requests) / float64(targets),
		Bound: time.Duration(llm.Requests-llm.Sent429()) * llmLat / llmSlots})
}

// clientStats reads curate's own request figures from the run summary
// in the store at dir.
func clientStats(ctx context.Context, dir string) (map[string]httpx.Stats, error) {
	st, err := store.OpenExisting(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	v, err := st.Value(ctx, app.RunSummaryKey)
	if err != nil {
		return nil, err
	}
	var rec struct {
		Requests map[string]httpx.Stats `json:"requests"`
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, err
	}
	return rec.Requests, nil
}

// busiest is the service of the largest bound.
func (rr *rateResult) busiest() string {
	name, b := "", time.Duration(0)
	for _, row := range rr.Services {
		if row.Bound > b {
			name, b = row.Name, row.Bound
		}
	}
	return name
}

// span returns when calls began and ended, from start, and how long the
// service sat idle beyond spacing between them.
func span(calls []sim.Call, start time.Time, spacing time.Duration) (first, last, idle time.Duration) {
	if len(calls) == 0 {
		return 0, 0, 0
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].Start.Before(calls[j].Start) })
	first = calls[0].Start.Sub(start)
	for i, c := range calls {
		last = max(last, c.End.Sub(start))
		if i > 0 {
			if gap := c.Start.Sub(calls[i-1].Start) - spacing; gap > 0 {
				idle += gap
			}
		}
	}
	return first, last, idle
}

// gaps returns the shortest time between two arrivals among calls, and
// how many arrived closer than delay after the one before.
func gaps(calls []sim.Call, delay time.Duration) (time.Duration, int) {
	sort.Slice(calls, func(i, j int) bool { return calls[i].Start.Before(calls[j].Start) })
	gap, closer := time.Duration(0), 0
	for i := 1; i < len(calls); i++ {
		d := calls[i].Start.Sub(calls[i-1].Start)
		if i == 1 || d < gap {
			gap = d
		}
		if d < delay {
			closer++
		}
	}
	return gap, closer
}

func benchMemory(ctx context.Context, opt *options, res *results) error {
	m, s, args, err := memoryRun(ctx, opt, opt.memTargets, "memory", nil)
	if err != nil {
		return err
	}
	defer s.Close()
	res.Memory = append(res.Memory, m)
	for _, n := range opt.memMore {
		// Larger worlds for the trend; each store is removed after.
		name := fmt.Sprintf("memory-%d", n)
		mm, ss, _, err := memoryRun(ctx, opt, n, name, nil)
		if err != nil {
			return err
		}
		ss.Close()
		if !opt.keep {
			os.RemoveAll(filepath.Join(opt.work, name))
		}
		res.Memory = append(res.Memory, mm)
	}

	fmt.Fprintf(os.Stderr, "noop: the same run again\n")
	s.Reset()
	r, err := runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return err
	}
	if r.Exit != 0 && r.Exit != 1 {
		return fmt.Errorf("noop: curate exited %d:\n%s", r.Exit, tail(r.Stderr, 30))
	}
	nr := &noopResult{Targets: m.Targets, Exit: r.Exit, Wall: r.Wall, Pipeline: pipelineWall(r.Stderr), MaxRSSKB: r.MaxRSSKB, Requests: requests(s)}
	for _, name := range sim.Services {
		for _, c := range s.Service(name).Calls() {
			if len(nr.Asked) < 100 {
				nr.Asked = append(nr.Asked, name+" "+c.Key)
			}
		}
	}
	res.Noop = nr

	if opt.memLimit != "" {
		m, s, _, err := memoryRun(ctx, opt, opt.memTargets, "memory-limited", []string{"GOMEMLIMIT=" + opt.memLimit})
		if err != nil {
			return err
		}
		s.Close()
		res.Memory = append(res.Memory, m)
	}
	return nil
}

// memoryRun runs curate on a fresh store of n targets under
// opt.work/name, with env added, and returns the figures, the services
// (still running) and the arguments of the run.
func memoryRun(ctx context.Context, opt *options, n int, name string, env []string) (*memoryResult, *sim.Servers, []string, error) {
	// A realistic sprinkle of trouble: one target in 200 without HTML,
	// one in 200 with its reference list withheld.
	var noHTML, withheld []int
	for i := 100; i+1 < n; i += 200 {
		noHTML = append(noHTML, i)
		withheld = append(withheld, i+1)
	}
	// Twice as many cited papers as targets, as far as the world allows.
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: n, Papers: min(max(60, 2*n), 49999), NoHTML: noHTML, Withheld: withheld})
	if err != nil {
		return nil, nil, nil, err
	}
	// Fast services: this benchmark is about what curate holds, not pace.
	s, err := sim.Start(w, sim.Options{LLMAnswer: sim.CurateModel, Limits: map[string]sim.Limits{
		sim.LLM: {MaxInFlight: llmSlots, Latency: 10 * time.Millisecond},
		sim.S2:  {Latency: time.Millisecond},
	}})
	if err != nil {
		return nil, nil, nil, err
	}
	dir := filepath.Join(opt.work, name)
	args, err := runArgs(w, s, dir)
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	args = append(args,
		"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "16",
		"--fetch-workers", "4", "--citegraph-workers", "8", "--classify-workers", "16", "--summarize-workers", "16")
	fmt.Fprintf(os.Stderr, "%s: %d targets %s\n", name, n, strings.Join(env, " "))
	r, err := runCurate(ctx, opt, append(env, benchEnv...), args...)
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	// Exit 1 is expected: the targets without HTML fail.
	if r.Exit != 0 && r.Exit != 1 {
		s.Close()
		return nil, nil, nil, fmt.Errorf("%s: curate exited %d:\n%s", name, r.Exit, tail(r.Stderr, 30))
	}
	return &memoryResult{Targets: n, Env: strings.Join(env, " "), Exit: r.Exit, Wall: r.Wall, Pipeline: pipelineWall(r.Stderr),
		MaxRSSKB: r.MaxRSSKB, StagesKB: r.StagesRSSKB, Requests: requests(s), Instances: datasetLine(r.Stdout),
		StoreMB: dirMB(filepath.Join(dir, "store"))}, s, args, nil
}

// benchEnv fixes the dataset's creation date, as a reproducible run does.
var benchEnv = []string{"SOURCE_DATE_EPOCH=1767225600"}

// runArgs writes the targets file and returns `curate run` arguments for
// the store and dataset under dir.
func runArgs(w *sim.World, s *sim.Servers, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, w.TargetsFile(), 0o644); err != nil {
		return nil, err
	}
	args := []string{"run", "--store", filepath.Join(dir, "store"), "--out", filepath.Join(dir, "dataset"),
		"--targets", targets, "--log", "warn", "--retries", "5"}
	return append(args, s.Flags()...), nil
}

func requests(s *sim.Servers) map[string]int {
	out := map[string]int{}
	for name, st := range s.Stats() {
		out[name] = st.Requests
	}
	return out
}

var (
	pipelineRE = regexp.MustCompile(`targets through every stage, \d+ failed; .* in ([0-9a-zµ.]+)\n`)
	datasetRE  = regexp.MustCompile(`curate dataset: (\d+ train and \d+ test instances)`)
)

// pipelineWall reads the per-target stages' wall time from curate's
// summary line.
func pipelineWall(stderr string) time.Duration {
	m := pipelineRE.FindStringSubmatch(stderr)
	if m == nil {
		return 0
	}
	d, _ := time.ParseDuration(m[1])
	return d
}

func datasetLine(stdout string) string {
	if m := datasetRE.FindStringSubmatch(stdout); m != nil {
		return m[1]
	}
	return ""
}

func dirMB(dir string) float64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// print writes the figures as the README shows them.
func (r *results) print(w io.Writer) {
	fmt.Fprintf(w, "Machine: %s\n\n", r.Machine)
	printProviders(w, r.Providers)
	for _, rr := range r.Rate {
		fmt.Fprintf(w, "Rate efficiency, %d targets, arXiv and ar5iv answering in %s, arxiv.org's robots.txt Crawl-delay %s:\n\n", rr.Targets, rr.ArxivLat, rr.CrawlDelay)
		fmt.Fprintf(w, "| service | limit | requests | per target | 429s | bound: requests ÷ rate | one at a time: requests × latency |\n|---|---|---|---|---|---|---|\n")
		for _, row := range rr.Services {
			serial := "-"
			if row.Serial > 0 {
				serial = secs(row.Serial)
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.2f | %d | %s | %s |\n", row.Name, row.Limit, row.Requests, row.PerTarget, row.Sent429, secs(row.Bound), serial)
		}
		fmt.Fprintf(w, "\nbusiest: %s, bound %s; curate run wall %s (%.2f× the bound); per-target stages %s (%.2f×); 429s %.2f%% of all requests\n",
			rr.Busiest, secs(rr.Bound), secs(rr.Wall), rr.Ratio, secs(rr.Pipeline), rr.PipeRate, 100*rr.Share429)
		for _, row := range rr.Services {
			if row.MinGap > 0 {
				fmt.Fprintf(w, "%s: Crawl-delay %s; curate wrote its requests at least %s apart; on arrival at the simulated service (a busy machine's scheduling included) at least %s apart, %d of %d closer than the delay\n",
					row.Name, rr.CrawlDelay, row.SendGap.Round(10*time.Microsecond), row.MinGap.Round(10*time.Microsecond), row.Closer, row.Requests)
			}
		}
		for _, row := range rr.Services {
			if row.Last > 0 {
				fmt.Fprintf(w, "%s: first request at %s, last answered at %s, idle %s beyond its spacing in between\n", row.Name, secs(row.First), secs(row.Last), secs(row.Idle))
			}
		}
		if rr.SerialBound > rr.Bound {
			fmt.Fprintf(w, "curate sends to %s one request at a time: its floor is %s, and the wall is %.2f× that\n",
				rr.SerialBusiest, secs(rr.SerialBound), float64(rr.Wall)/float64(rr.SerialBound))
		}
		fmt.Fprintln(w)
	}
	if e := r.Estimate; e != nil {
		fmt.Fprintf(w, "Estimate before a run: %d targets, %d of them run before as a pilot; `curate run --dry-run` on that store, then the run:\n\n", e.Targets, e.Pilot)
		fmt.Fprintf(w, "| service | estimated requests | actual | estimate ÷ actual |\n|---|---|---|---|\n")
		for _, row := range e.Services {
			fmt.Fprintf(w, "| %s | %d | %d | %.2f |\n", row.Name, row.Estimated, row.Actual, row.Ratio)
		}
		fmt.Fprintf(w, "\nestimated wall %s; the run's per-target stages took %s (estimate ÷ actual %.2f), the whole run %s (%.2f)\n\n",
			secs(e.EstWall), secs(e.Pipeline), float64(e.EstWall)/float64(max(e.Pipeline, 1)), secs(e.Wall), float64(e.EstWall)/float64(max(e.Wall, 1)))
	}
	if a := r.Archive; a != nil {
		fmt.Fprintf(w, "Page archives: %d targets, %d papers held in a directory and an ar5iv-style zip; %d pages served from them, %d requests for archived papers; requests: %s\n\n",
			a.Targets, a.Archived, a.Served, a.Asked, formatCounts(a.Requests))
	}
	printHostile(w, r.Hostile)
	for i, m := range r.Memory {
		fmt.Fprintf(w, "Memory, %d targets%s: peak RSS %.0f MB (%.0f MB when the per-target stages ended); wall %s (per-target stages %s); exit %d; %s; store %.0f MB\n",
			m.Targets, cond(m.Env != "", ", "+m.Env, ""), float64(m.MaxRSSKB)/1024, float64(m.StagesKB)/1024,
			secs(m.Wall), secs(m.Pipeline), m.Exit, m.Instances, m.StoreMB)
		fmt.Fprintf(w, "  requests: %s\n\n", formatCounts(m.Requests))
		if n := r.Noop; i == 0 && n != nil {
			fmt.Fprintf(w, "No-op rerun, %d targets: wall %s (per-target stages %s); peak RSS %.0f MB; exit %d\n",
				n.Targets, secs(n.Wall), secs(n.Pipeline), float64(n.MaxRSSKB)/1024, n.Exit)
			fmt.Fprintf(w, "  requests: %s\n", formatCounts(n.Requests))
			for _, a := range n.Asked {
				fmt.Fprintf(w, "  asked again: %s\n", a)
			}
			fmt.Fprintln(w)
		}
	}
}

func cond(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func formatCounts(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
