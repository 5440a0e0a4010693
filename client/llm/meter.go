package llm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Meter sums token usage per stage and model. Several Clients may share one
// Meter so a run reports one table. It is safe for concurrent use; the zero
// value is ready.
type Meter struct {
	mu      sync.Mutex
	tallies map[tallyKey]*Tally
}

type tallyKey struct{ stage, model string }

// Tally is the usage of one stage with one model.
type Tally struct {
	Stage       string `json:"stage"`
	Model       string `json:"model"`
	Calls       int64  `json:"calls"`        // requests the endpoint answered, usable or not
	CachedCalls int64  `json:"cached_calls"` // requests answered from the cache
	Failures    int64  `json:"failures"`     // requests that ended in an error
	Spent       Usage  `json:"spent"`        // tokens used by calls to the endpoint, failed ones included
	Saved       Usage  `json:"saved"`        // tokens the cached answers originally cost
	// BatchCalls and Batch are the part of Calls and Spent that went
	// through a batch API, billed at the batch price.
	BatchCalls int64 `json:"batch_calls"`
	Batch      Usage `json:"batch"`
}

// outcome is how a request ended, for the Meter.
type outcome int

const (
	answered  outcome = iota // a usable answer from the endpoint
	fromCache                // a usable answer from the cache
	invalid                  // answers from the endpoint, none usable
	failed                   // an error before a usable answer (HTTP, context)
)

// add records one request's outcome and the tokens it used.
func (m *Meter) add(stage, model string, u Usage, o outcome, batch bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tallies == nil {
		m.tallies = make(map[tallyKey]*Tally)
	}
	k := tallyKey{stage, model}
	t := m.tallies[k]
	if t == nil {
		t = &Tally{Stage: stage, Model: model}
		m.tallies[k] = t
	}
	switch o {
	case fromCache:
		t.CachedCalls++
		t.Saved = t.Saved.Add(u)
		return
	case answered:
		t.Calls++
	case invalid:
		t.Calls++
		t.Failures++
	case failed:
		t.Failures++
	}
	t.Spent = t.Spent.Add(u)
	if batch {
		if o == answered || o == invalid {
			t.BatchCalls++
		}
		t.Batch = t.Batch.Add(u)
	}
}

// RecordHeuristic counts one answer of a stage's heuristic backend, so the
// run's usage table shows how many items were decided without a model.
func (m *Meter) RecordHeuristic(stage string) {
	m.add(stage, HeuristicModel, Usage{}, answered, false)
}

// Tallies returns a snapshot, sorted by stage and model.
func (m *Meter) Tallies() []Tally {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Tally, 0, len(m.tallies))
	for _, t := range m.tallies {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Tally) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Model, b.Model))
	})
	return out
}

// ByStage returns the tallies summed over models, keyed by stage; Model is
// the stage's model, or a comma-separated list if it used several.
func (m *Meter) ByStage() map[string]Tally {
	out := make(map[string]Tally)
	for _, t := range m.Tallies() {
		s, ok := out[t.Stage]
		if !ok {
			out[t.Stage] = t
			continue
		}
		s.Model += "," + t.Model
		s.Calls += t.Calls
		s.CachedCalls += t.CachedCalls
		s.Failures += t.Failures
		s.Spent = s.Spent.Add(t.Spent)
		s.Saved = s.Saved.Add(t.Saved)
		s.BatchCalls += t.BatchCalls
		s.Batch = s.Batch.Add(t.Batch)
		out[t.Stage] = s
	}
	return out
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput is the price of prompt tokens read from the provider's
	// cache; nil means Input (no discount assumed).
	CachedInput *float64 `json:"cached_input,omitempty"`
	// CacheWrite is the price of prompt tokens written to the cache with
	// the five-minute lifetime; nil means 1.25 × Input, Anthropic's
	// five-minute write price (OpenAI reports no writes).
	CacheWrite *float64 `json:"cache_write,omitempty"`
	// CacheWrite1h is the price of prompt tokens written with the
	// one-hour lifetime; nil means 2 × Input, Anthropic's.
	CacheWrite1h *float64 `json:"cache_write_1h,omitempty"`
	// Batch is the factor of batch-API calls; nil means 0.5, the batch
	// price of OpenAI and Anthropic.
	Batch *float64 `json:"batch,omitempty"`
}

// DefaultBatchFactor is what batch calls cost relative to the standard
// price, when a Price says nothing else.
const DefaultBatchFactor = 0.5

func (p Price) cachedInput() float64 {
	if p.CachedInput != nil {
		return *p.CachedInput
	}
	return p.Input
}

func (p Price) cacheWrite() float64 {
	if p.CacheWrite != nil {
		return *p.CacheWrite
	}
	return 1.25 * p.Input
}

func (p Price) cacheWrite1h() float64 {
	if p.CacheWrite1h != nil {
		return *p.CacheWrite1h
	}
	return 2 * p.Input
}

// CachedInputPrice is the price of input read from the prompt cache.
func (p Price) CachedInputPrice() float64 { return p.cachedInput() }

// CacheWritePrice is the price of input written to the prompt cache with
// lifetime ttl ("1h", else five minutes).
func (p Price) CacheWritePrice(ttl string) float64 {
	if ttl == TTL1h {
		return p.cacheWrite1h()
	}
	return p.cacheWrite()
}

// BatchFactor is what batch calls cost relative to the standard price.
func (p Price) BatchFactor() float64 { return p.batch() }

func (p Price) batch() float64 {
	if p.Batch != nil {
		return *p.Batch
	}
	return DefaultBatchFactor
}

// Prices maps model names to prices.
type Prices map[string]Price

// ParsePrices parses a --price value: comma-separated
// model=input/output[/cached_input[/cache_write[/cache_write_1h]]]
// entries in dollars per million tokens, e.g.
// "gpt-4o-mini=0.15/0.60/0.075,claude-sonnet-4-6=3/15/0.30/3.75/6".
func ParsePrices(s string) (Prices, error) {
	p := Prices{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		model, io, ok := strings.Cut(entry, "=")
		model = strings.TrimSpace(model)
		parts := strings.Split(io, "/")
		if !ok || model == "" || len(parts) < 2 || len(parts) > 5 {
			return nil, fmt.Errorf("parse price %q: want model=input/output[/cached_input[/cache_write[/cache_write_1h]]] dollars per million tokens", entry)
		}
		names := []string{"input", "output", "cached input", "cache write", "one-hour cache write"}
		vals := make([]float64, len(parts))
		for i, part := range parts {
			f, err := parseDollars(part)
			if err != nil {
				return nil, fmt.Errorf("parse price %q: %s: %w", entry, names[i], err)
			}
			vals[i] = f
		}
		pr := Price{Input: vals[0], Output: vals[1]}
		if len(vals) > 2 {
			pr.CachedInput = &vals[2]
		}
		if len(vals) > 3 {
			pr.CacheWrite = &vals[3]
		}
		if len(vals) > 4 {
			pr.CacheWrite1h = &vals[4]
		}
		p[model] = pr
	}
	return p, nil
}

func parseDollars(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	if err != nil {
		return 0, err
	}
	if f < 0 || f != f {
		return 0, fmt.Errorf("%q is not a price", s)
	}
	return f, nil
}

// LoadPrices reads a price table from a JSON file of the form
// {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}, dollars per million
// tokens.
func LoadPrices(path string) (Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load prices: %w", err)
	}
	var p Prices
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("load prices %s: %w", path, err)
	}
	for m, pr := range p {
		if m == "" || pr.Input < 0 || pr.Output < 0 || pr.cachedInput() < 0 || pr.cacheWrite() < 0 || pr.cacheWrite1h() < 0 || pr.batch() < 0 {
			return nil, fmt.Errorf("load prices %s: model %q: empty name or negative price", path, m)
		}
	}
	return p, nil
}

// Lookup returns the price of model: an exact entry, else the longest entry
// that is a prefix of it (a trailing * allowed), so "gpt-4o-mini" prices
// the dated snapshot "gpt-4o-mini-2024-07-18".
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for m := range p {
		if pre := strings.TrimSuffix(m, "*"); strings.HasPrefix(model, pre) && (!found || len(m) > len(best)) {
			best, found = m, true
		}
	}
	return p[best], found
}

// Cost returns the dollar cost of u with model at the standard (not
// batch) price, prompt tokens read from or written to the prompt cache
// priced as such, and false if the model has no price.
func (p Prices) Cost(model string, u Usage) (float64, bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	plain := max(u.PromptTokens-u.CachedTokens-u.CacheWriteTokens, 0)
	w1h := min(u.CacheWrite1hTokens, u.CacheWriteTokens)
	return (float64(plain)*pr.Input + float64(u.CachedTokens)*pr.cachedInput() +
		float64(u.CacheWriteTokens-w1h)*pr.cacheWrite() + float64(w1h)*pr.cacheWrite1h() +
		float64(u.CompletionTokens)*pr.Output) / 1e6, true
}

// BatchCost is Cost at the model's batch price.
func (p Prices) BatchCost(model string, u Usage) (float64, bool) {
	c, ok := p.Cost(model, u)
	if !ok {
		return 0, false
	}
	pr, _ := p.Lookup(model)
	return c * pr.batch(), true
}

// TallyCost returns what a tally's spent tokens cost: its batch part at
// the batch price, the rest at the standard price.
func (p Prices) TallyCost(t Tally) (float64, bool) {
	all, ok := p.Cost(t.Model, t.Spent)
	if !ok {
		return 0, false
	}
	batch, _ := p.Cost(t.Model, t.Batch)
	discounted, _ := p.BatchCost(t.Model, t.Batch)
	return all - batch + discounted, true
}

// uncached is p with model's cache reads and writes at its input price:
// what the tokens would have cost without a prompt cache.
func (p Prices) uncached(model string) Prices {
	pr, ok := p.Lookup(model)
	if !ok {
		return Prices{}
	}
	in := pr.Input
	pr.CachedInput, pr.CacheWrite, pr.CacheWrite1h = &in, &in, &in
	return Prices{model: pr}
}

// StageCost is the estimated cost of one stage.
type StageCost struct {
	Stage string  `json:"stage"`
	Spent float64 `json:"spent_usd"` // dollars spent on calls to the endpoint
	Saved float64 `json:"saved_usd"` // dollars the cache hits would have cost
	// BatchSaved is what the batch calls would have cost more at the
	// standard price.
	BatchSaved float64 `json:"batch_saved_usd"`
	// PromptCache is what the provider's prompt cache saved: the spent
	// tokens priced as if none had been read from or written to it, less
	// what they cost. Negative when the writes cost more than the reads
	// saved.
	PromptCache float64 `json:"prompt_cache_usd"`
	// Unpriced lists models the stage used that have no price; their tokens
	// are not in Spent or Saved.
	Unpriced []string `json:"unpriced,omitempty"`
}

// Costs turns tallies into a cost per stage, sorted by stage. Heuristic
// backends cost nothing and are never unpriced.
func (p Prices) Costs(tallies []Tally) []StageCost {
	idx := map[string]int{}
	var out []StageCost
	for _, t := range tallies {
		i, ok := idx[t.Stage]
		if !ok {
			i = len(out)
			idx[t.Stage] = i
			out = append(out, StageCost{Stage: t.Stage})
		}
		if IsHeuristic(t.Model) {
			continue
		}
		spent, ok1 := p.TallyCost(t)
		saved, ok2 := p.Cost(t.Model, t.Saved)
		if !ok1 || !ok2 {
			out[i].Unpriced = append(out[i].Unpriced, t.Model)
			continue
		}
		full, _ := p.Cost(t.Model, t.Spent)
		out[i].Spent += spent
		out[i].Saved += saved
		out[i].BatchSaved += full - spent
		if plain, ok := p.uncached(t.Model).TallyCost(t); ok {
			out[i].PromptCache += plain - spent
		}
	}
	slices.SortFunc(out, func(a, b StageCost) int { return cmp.Compare(a.Stage, b.Stage) })
	return out
}
