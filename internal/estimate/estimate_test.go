package estimate_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/estimate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// recipe is the recipe's workload at full scale: 9,000 targets, about
// 50,000 pages from arxiv.org at its 15s Crawl-delay, one S2 references
// request per target plus batches of 500, and two LLM stages.
func recipe() estimate.Input {
	sync := &estimate.Price{Input: 0.15, Output: 0.60}
	batch := &estimate.Price{Input: 0.075, Output: 0.30}
	return estimate.Input{
		Targets: 9000,
		Services: []estimate.Service{
			{Stage: "fetch", Name: "arxiv", Requests: 50_000, Interval: 15 * time.Second, IntervalSource: "crawl-delay", MaxInFlight: 1, Latency: time.Second},
			{Stage: "metadata", Name: "arxiv-api", Requests: 25, Interval: 3 * time.Second, IntervalSource: "configured", MaxInFlight: 1, Latency: 2 * time.Second},
			{Stage: "graph", Name: "s2", Requests: 9000, Interval: time.Second, IntervalSource: "configured", Latency: 300 * time.Millisecond},
			{Stage: "metadata", Name: "s2", Requests: 18, Interval: time.Second, IntervalSource: "configured", Latency: 300 * time.Millisecond},
		},
		LLM: []estimate.LLM{
			{Stage: "classify", Model: "gpt-4o-mini", Calls: 9000, InputTokens: 45_000_000, OutputTokens: 2_700_000, Concurrency: 8, Latency: 4 * time.Second,
				RequestsPerMinute: 500, TokensPerMinute: 2_000_000, Price: sync, BatchPrice: batch},
			{Stage: "summarize", Model: "gpt-4o-mini", Calls: 36_000, InputTokens: 90_000_000, OutputTokens: 18_000_000, Batch: true, Price: sync, BatchPrice: batch},
		},
	}
}

func TestCompute(t *testing.T) {
	e, err := estimate.Compute(recipe())
	if err != nil {
		t.Fatal(err)
	}
	arxiv, _ := e.Service("arxiv")
	if want := 49_999*15*time.Second + time.Second; arxiv.Wall != want || arxiv.Spacing != 15*time.Second || arxiv.PerTarget < 5.55 || arxiv.PerTarget > 5.56 {
		t.Errorf("arxiv: %+v, want %s", arxiv, want)
	}
	// One limiter for S2, whichever stage asks.
	s2, _ := e.Service("s2")
	if want := 9017*time.Second + 300*time.Millisecond; s2.Requests != 9018 || s2.Wall != want {
		t.Errorf("s2: %d requests in %s, want 9018 in %s", s2.Requests, s2.Wall, want)
	}
	// The slowest thing sets the run's time: the summarize batch window
	// (24h) is shorter than arXiv's 208h.
	if e.Bottleneck != "arxiv" || e.Wall != arxiv.Wall {
		t.Errorf("wall %s set by %q, want arxiv's %s", e.Wall, e.Bottleneck, arxiv.Wall)
	}
	stages := map[string]estimate.StageEstimate{}
	for _, st := range e.Stages {
		stages[st.Stage] = st
	}
	// classify: 1,125 rounds of 4s = 75m; 500 rpm = 18m; 47.7M tokens at 2M
	// tpm = 23m51s: concurrency bounds it.
	if c := stages["classify"]; c.Wall != 75*time.Minute || !near(c.SyncCost, 45*0.15+2.7*0.60) || !near(c.BatchCost, 45*0.075+2.7*0.30) {
		t.Errorf("classify: %+v", c)
	}
	if s := stages["summarize"]; s.Wall != 24*time.Hour || !s.WallUpTo || !s.Batch {
		t.Errorf("summarize: %+v", s)
	}
	// The run pays sync for classify, batch for summarize.
	if want := 45*0.15 + 2.7*0.60 + 90*0.075 + 18*0.30; !near(e.Cost, want) {
		t.Errorf("cost %v, want %.4f", deref(e.Cost), want)
	}
	if m := stages["metadata"]; m.Requests["s2"] != 18 || m.Requests["arxiv-api"] != 25 || m.Wall != 24*3*time.Second+2*time.Second {
		t.Errorf("metadata: %+v", m)
	}
	var serial time.Duration
	for _, st := range e.Stages {
		serial += st.Wall
	}
	if e.Serial != serial || e.Serial <= e.Wall {
		t.Errorf("serial %s, want the sum of the stages %s", e.Serial, serial)
	}
	if len(e.Notes) != 0 {
		t.Errorf("notes %q", e.Notes)
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name string
		in   estimate.Input
		want time.Duration
	}{
		{"latency over in-flight bounds an unpaced service", estimate.Input{Services: []estimate.Service{
			{Stage: "s", Name: "x", Requests: 100, MaxInFlight: 4, Latency: 2 * time.Second}}}, 99*500*time.Millisecond + 2*time.Second},
		{"the interval bounds it when longer", estimate.Input{Services: []estimate.Service{
			{Stage: "s", Name: "x", Requests: 100, Interval: time.Second, MaxInFlight: 4, Latency: 2 * time.Second}}}, 99*time.Second + 2*time.Second},
		{"one request is its latency", estimate.Input{Services: []estimate.Service{
			{Stage: "s", Name: "x", Requests: 1, Interval: time.Hour, Latency: time.Second}}}, time.Second},
		{"nothing left", estimate.Input{Services: []estimate.Service{{Stage: "s", Name: "x", Interval: time.Hour}}}, 0},
		{"tokens per minute bound an llm stage", estimate.Input{LLM: []estimate.LLM{
			{Stage: "c", Model: "m", Calls: 10, InputTokens: 900_000, OutputTokens: 100_000, Concurrency: 10, Latency: time.Second, TokensPerMinute: 100_000}}}, 10 * time.Minute},
		{"requests per minute bound it", estimate.Input{LLM: []estimate.LLM{
			{Stage: "c", Model: "m", Calls: 600, Concurrency: 100, Latency: time.Second, RequestsPerMinute: 60}}}, 10 * time.Minute},
		{"a batch stage takes its window", estimate.Input{LLM: []estimate.LLM{
			{Stage: "c", Model: "m", Calls: 1, Batch: true, BatchWindow: time.Hour}}}, time.Hour},
	}
	for _, tt := range tests {
		e, err := estimate.Compute(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if e.Wall != tt.want {
			t.Errorf("%s: wall %s, want %s", tt.name, e.Wall, tt.want)
		}
	}
}

func TestUnknowns(t *testing.T) {
	e, err := estimate.Compute(estimate.Input{
		Services: []estimate.Service{{Stage: "fetch", Name: "mirror", Requests: 10}},
		LLM: []estimate.LLM{
			{Stage: "classify", Model: "local", Calls: 5, InputTokens: 1000, OutputTokens: 100},
			{Stage: "summarize", Model: "priced", Calls: 5, InputTokens: 1000, OutputTokens: 100, Latency: time.Second, Batch: true, Price: &estimate.Price{Input: 1, Output: 1}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.Cost != nil {
		t.Errorf("cost %v with a stage unpriced, want unknown", *e.Cost)
	}
	joined := strings.Join(e.Notes, "\n")
	for _, want := range []string{"mirror: no interval", "classify: no latency or rate limit given for local", "classify: no sync price for local", "summarize: no batch price for priced"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		in   estimate.Input
		want string
	}{
		{estimate.Input{Targets: -1}, "-1 targets"},
		{estimate.Input{Services: []estimate.Service{{Stage: "fetch", Requests: 1}}}, "empty name"},
		{estimate.Input{Services: []estimate.Service{{Stage: "fetch", Name: "arxiv", Requests: -3}}}, "arxiv"},
		{estimate.Input{Services: []estimate.Service{
			{Stage: "fetch", Name: "s2", Interval: time.Second},
			{Stage: "graph", Name: "s2", Interval: 2 * time.Second}}}, "one limiter"},
		{estimate.Input{LLM: []estimate.LLM{{Model: "m"}}}, "empty stage"},
		{estimate.Input{LLM: []estimate.LLM{{Stage: "c", Calls: -1}}}, "llm stage c"},
		{estimate.Input{LLM: []estimate.LLM{{Stage: "c", Price: &estimate.Price{Input: math.NaN()}}}}, "not a price"},
	}
	for _, tt := range tests {
		if _, err := estimate.Compute(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compute(%+v): err %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

// TestRender checks the table and the JSON against golden files
// (go test ./internal/estimate -update rewrites them).
func TestRender(t *testing.T) {
	e, err := estimate.Compute(recipe())
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := e.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "recipe.txt", table.Bytes())
	golden(t, "recipe.json", append(js, '\n'))
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if w := back["wall"].(map[string]any); w["text"] != "8d16h" || w["seconds"].(float64) != (49_999*15+1) {
		t.Errorf("json wall %v", w)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func near(c *float64, want float64) bool { return c != nil && math.Abs(*c-want) < 1e-9 }

func deref(c *float64) any {
	if c == nil {
		return nil
	}
	return *c
}

// TestCacheCost: input the prompt cache serves or is written is priced at
// the cache's prices, in sync and in batch mode apart.
func TestCacheCost(t *testing.T) {
	p := &estimate.Price{Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75, CacheWrite1h: 6}
	b := &estimate.Price{Input: 1.5, Output: 7.5, CachedInput: 0.15, CacheWrite: 1.875, CacheWrite1h: 3}
	e, err := estimate.Compute(estimate.Input{LLM: []estimate.LLM{{Stage: "summarize", Model: "m", Calls: 10,
		InputTokens: 1_000_000, OutputTokens: 100_000, Price: p, BatchPrice: b, Batch: true,
		Cache:      estimate.CacheTokens{Read: 500_000, Write5m: 100_000},
		BatchCache: estimate.CacheTokens{Read: 500_000, Write1h: 100_000}}}})
	if err != nil {
		t.Fatal(err)
	}
	st := e.Stages[0]
	// sync: 400k plain $1.20, 500k read $0.15, 100k written $0.375, 100k out $1.50.
	// batch: 400k $0.60, read $0.075, 100k at an hour $0.30, out $0.75.
	if !near(st.SyncCost, 3.225) || !near(st.BatchCost, 1.725) || !near(e.Cost, 1.725) {
		t.Errorf("sync %v, batch %v, run %v", deref(st.SyncCost), deref(st.BatchCost), deref(e.Cost))
	}
	_, err = estimate.Compute(estimate.Input{LLM: []estimate.LLM{{Stage: "s", Calls: 1, InputTokens: 10, Cache: estimate.CacheTokens{Read: 11}}}})
	if err == nil || !strings.Contains(err.Error(), "cache tokens") {
		t.Errorf("cache tokens past the input: %v", err)
	}
}
