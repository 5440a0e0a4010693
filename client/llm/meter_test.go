package llm

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePrices(t *testing.T) {
	tests := []struct {
		in      string
		want    Prices
		wantErr string
	}{
		{"gpt-4o-mini=0.15/0.60", Prices{"gpt-4o-mini": {Input: 0.15, Output: 0.60}}, ""},
		{" gpt-4o-mini = $0.15 / 0.6 , gpt-4o=2.5/10,", Prices{"gpt-4o-mini": {Input: 0.15, Output: 0.6}, "gpt-4o": {Input: 2.5, Output: 10}}, ""},
		{"local=0/0", Prices{"local": {Input: 0, Output: 0}}, ""},
		{"", Prices{}, ""},
		{"gpt-4o", nil, "want model=input/output"},
		{"gpt-4o=1", nil, "want model=input/output"},
		{"=1/2", nil, "want model=input/output"},
		{"m=x/2", nil, "input"},
		{"m=1/-2", nil, "output"},
		{"m=NaN/2", nil, "input"},
	}
	for _, tt := range tests {
		got, err := ParsePrices(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePrices(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePrices(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestLoadPrices(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "prices.json")
	os.WriteFile(good, []byte(`{"gpt-4o-mini": {"input": 0.15, "output": 0.60}, "gpt-4o": {"input": 2.5, "output": 10}}`), 0o644)
	p, err := LoadPrices(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Prices{"gpt-4o-mini": {Input: 0.15, Output: 0.60}, "gpt-4o": {Input: 2.5, Output: 10}}); !reflect.DeepEqual(p, want) {
		t.Errorf("LoadPrices = %v, want %v", p, want)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"m": {"input": -1, "output": 1}}`), 0o644)
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := LoadPrices(path); err == nil {
			t.Errorf("LoadPrices(%s): no error", path)
		}
	}
}

func TestCost(t *testing.T) {
	p := Prices{"gpt-4o-mini": {Input: 0.15, Output: 0.60}, "gpt-4o": {Input: 2.5, Output: 10}}
	tests := []struct {
		model string
		u     Usage
		want  float64
		ok    bool
	}{
		{"gpt-4o-mini", Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}, 0.75, true},
		{"gpt-4o-mini-2024-07-18", Usage{PromptTokens: 2_000_000}, 0.30, true}, // prefix, the longest
		{"gpt-4o", Usage{PromptTokens: 1000, CompletionTokens: 500}, 0.0075, true},
		{"llama3", Usage{PromptTokens: 1000}, 0, false},
	}
	for _, tt := range tests {
		got, ok := p.Cost(tt.model, tt.u)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Cost(%s, %+v) = %v, %v; want %v, %v", tt.model, tt.u, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMeterAndCosts(t *testing.T) {
	var m Meter
	u := func(in, out int64) Usage {
		return Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
	}
	m.add("classify", "gpt-4o-mini", u(1_000_000, 100_000), answered, false)
	m.add("classify", "gpt-4o-mini", u(1_000_000, 100_000), fromCache, false)
	m.add("classify", "gpt-4o-mini", u(500_000, 0), invalid, false)
	m.add("classify", "gpt-4o-mini", Usage{}, failed, false)
	m.add("summarize", "gpt-4o", u(100_000, 100_000), answered, false)
	m.add("summarize", "llama3", u(5, 5), answered, false)
	m.RecordHeuristic("classify")

	byStage := m.ByStage()
	c := byStage["classify"]
	want := Tally{Stage: "classify", Model: "gpt-4o-mini,heuristic", Calls: 3, CachedCalls: 1, Failures: 2,
		Spent: u(1_500_000, 100_000), Saved: u(1_000_000, 100_000)}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("classify = %+v\nwant %+v", c, want)
	}

	prices := Prices{"gpt-4o-mini": {Input: 0.15, Output: 0.60}, "gpt-4o": {Input: 2.5, Output: 10}}
	costs := prices.Costs(m.Tallies())
	if len(costs) != 2 || costs[0].Stage != "classify" || costs[1].Stage != "summarize" {
		t.Fatalf("costs = %+v", costs)
	}
	// classify spent 1.5M in ($0.225) + 0.1M out ($0.06); saved 1M in + 0.1M out.
	if !near(costs[0].Spent, 0.285) || !near(costs[0].Saved, 0.21) || costs[0].Unpriced != nil {
		t.Errorf("classify cost = %+v", costs[0])
	}
	// summarize: gpt-4o 0.1M in ($0.25) + 0.1M out ($1); llama3 unpriced.
	if !near(costs[1].Spent, 1.25) || !reflect.DeepEqual(costs[1].Unpriced, []string{"llama3"}) {
		t.Errorf("summarize cost = %+v", costs[1])
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestTokenBudget(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	b := newTokenBudget(600, clock) // 10 tokens a second, 600 at most

	if d := b.charge(500); d != 0 {
		t.Errorf("charge within the bucket waits %s", d)
	}
	if d := b.charge(200); d != 10*time.Second {
		t.Errorf("charge 100 over waits %s, want 10s", d)
	}
	// The second call used only 50 of its 200: the refund pays the debt.
	b.adjust(50 - 200)
	if d := b.charge(40); d != 0 {
		t.Errorf("after refund, charge waits %s", d)
	}
	now = now.Add(time.Hour) // refill caps at one minute of tokens
	if d := b.charge(600); d != 0 {
		t.Errorf("full bucket: waits %s", d)
	}
	if d := b.charge(1); d != 100*time.Millisecond {
		t.Errorf("empty bucket: waits %s, want 100ms", d)
	}
	b.adjust(-10_000)
	if b.level != 600 {
		t.Errorf("refund overfilled the bucket: %v", b.level)
	}
}

func TestPacer(t *testing.T) {
	var interval time.Duration
	p := &pacer{base: 0, get: func() time.Duration { return interval }, set: func(d time.Duration) { interval = d }}
	if d := p.observe(0); d != 0 || interval != 0 {
		t.Errorf("no 429: slowed to %s", interval)
	}
	steps := []struct {
		count429 int64
		want     time.Duration
	}{
		{1, firstSlowInterval},
		{1, firstSlowInterval * 7 / 8}, // recovering
		{3, firstSlowInterval * 7 / 4}, // doubled
		{4, firstSlowInterval * 7 / 2},
	}
	for i, s := range steps {
		p.observe(s.count429)
		if interval != s.want {
			t.Errorf("step %d: interval %s, want %s", i, interval, s.want)
		}
	}
	for range 200 {
		p.observe(4)
	}
	if interval != 0 {
		t.Errorf("did not recover to the base: %s", interval)
	}
	p.base, interval = time.Second, time.Second
	for n := int64(5); n < 20; n++ {
		p.observe(n)
	}
	if interval != maxSlowInterval {
		t.Errorf("interval = %s, want capped at %s", interval, maxSlowInterval)
	}
}

func TestCachedAndBatchPrices(t *testing.T) {
	p, err := ParsePrices("claude-sonnet-4-6=3/15/0.30/3.75,gpt-4o=2.5/10/1.25")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePrices("m=1/2/3/4/5/6"); err == nil {
		t.Error("six prices accepted")
	}
	if p, err := ParsePrices("m=3/15/0.3/3.75/6"); err != nil || *p["m"].CacheWrite1h != 6 {
		t.Errorf("five prices: %v, %v", p, err)
	}
	if _, err := ParsePrices("m=1/2/x"); err == nil || !strings.Contains(err.Error(), "cached input") {
		t.Errorf("err = %v", err)
	}
	// 1M prompt tokens: 600k read from the cache, 100k written, 300k plain.
	u := Usage{PromptTokens: 1_000_000, CachedTokens: 600_000, CacheWriteTokens: 100_000, CompletionTokens: 100_000}
	got, _ := p.Cost("claude-sonnet-4-6", u)
	if want := 0.3*3 + 0.6*0.30 + 0.1*3.75 + 0.1*15; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	// Unset cached and write prices: cached at the input price, writes at 1.25×.
	p2 := Prices{"m": {Input: 1, Output: 0}}
	if got, _ := p2.Cost("m", Usage{PromptTokens: 2_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000}); got != 2.25 {
		t.Errorf("defaults: cost = %v, want 2.25", got)
	}
	ta := Tally{Model: "gpt-4o", Spent: Usage{PromptTokens: 2_000_000}, Batch: Usage{PromptTokens: 1_000_000}}
	if got, _ := p.TallyCost(ta); got != 2.5+1.25 {
		t.Errorf("tally cost = %v, want the batch half at half price", got)
	}
	costs := p.Costs([]Tally{{Stage: "s", Model: "gpt-4o", Spent: ta.Spent, Batch: ta.Batch}})
	if costs[0].BatchSaved != 1.25 {
		t.Errorf("batch saved = %v", costs[0].BatchSaved)
	}
}

// TestPromptCacheEffect: the usage table's prompt-cache column is what
// the cache saved, negative when its writes cost more than its reads
// saved (an hour-long write read once).
func TestPromptCacheEffect(t *testing.T) {
	p := Prices{"m": {Input: 3, Output: 15, CachedInput: ptr(0.3), CacheWrite: ptr(3.75), CacheWrite1h: ptr(6)}}
	for _, tt := range []struct {
		name string
		u    Usage
		want float64
	}{
		{"reads", Usage{PromptTokens: 1_000_000, CachedTokens: 1_000_000}, 2.7},
		{"one-hour writes, no read", Usage{PromptTokens: 1_000_000, CacheWriteTokens: 1_000_000, CacheWrite1hTokens: 1_000_000}, -3},
		{"written once at an hour, read once", Usage{PromptTokens: 2_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000, CacheWrite1hTokens: 1_000_000}, -0.3},
		{"written once at five minutes, read once", Usage{PromptTokens: 2_000_000, CachedTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 1.95},
	} {
		c := p.Costs([]Tally{{Stage: "s", Model: "m", Calls: 1, Spent: tt.u}})
		if !near(c[0].PromptCache, tt.want) {
			t.Errorf("%s: prompt cache %v, want %v", tt.name, c[0].PromptCache, tt.want)
		}
	}
}
