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
	Stage, Model string
	Calls        int64 // requests the endpoint answered, usable or not
	CachedCalls  int64 // requests answered from the cache
	Failures     int64 // requests that ended in an error
	Spent        Usage // tokens used by calls to the endpoint, failed ones included
	Saved        Usage // tokens the cached answers originally cost
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
func (m *Meter) add(stage, model string, u Usage, o outcome) {
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
}

// RecordHeuristic counts one answer of a stage's heuristic backend, so the
// run's usage table shows how many items were decided without a model.
func (m *Meter) RecordHeuristic(stage string) {
	m.add(stage, HeuristicModel, Usage{}, answered)
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
		out[t.Stage] = s
	}
	return out
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices maps model names to prices.
type Prices map[string]Price

// ParsePrices parses a --price value: comma-separated
// model=input/output entries in dollars per million tokens, e.g.
// "gpt-4o-mini=0.15/0.60,gpt-4o=2.50/10".
func ParsePrices(s string) (Prices, error) {
	p := Prices{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		model, io, ok := strings.Cut(entry, "=")
		in, out, ok2 := strings.Cut(io, "/")
		model = strings.TrimSpace(model)
		if !ok || !ok2 || model == "" {
			return nil, fmt.Errorf("parse price %q: want model=input/output dollars per million tokens", entry)
		}
		var pr Price
		var err error
		if pr.Input, err = parseDollars(in); err != nil {
			return nil, fmt.Errorf("parse price %q: input: %w", entry, err)
		}
		if pr.Output, err = parseDollars(out); err != nil {
			return nil, fmt.Errorf("parse price %q: output: %w", entry, err)
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
		if m == "" || pr.Input < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("load prices %s: model %q: empty name or negative price", path, m)
		}
	}
	return p, nil
}

// Lookup returns the price of model: an exact entry, else the longest entry
// that is a prefix of it, so "gpt-4o-mini" prices the dated snapshot
// "gpt-4o-mini-2024-07-18".
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for m := range p {
		if strings.HasPrefix(model, m) && len(m) > len(best) {
			best, found = m, true
		}
	}
	return p[best], found
}

// Cost returns the dollar cost of u with model, and false if the model has
// no price.
func (p Prices) Cost(model string, u Usage) (float64, bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return (float64(u.PromptTokens)*pr.Input + float64(u.CompletionTokens)*pr.Output) / 1e6, true
}

// StageCost is the estimated cost of one stage.
type StageCost struct {
	Stage string
	Spent float64 // dollars spent on calls to the endpoint
	Saved float64 // dollars the cache hits would have cost
	// Unpriced lists models the stage used that have no price; their tokens
	// are not in Spent or Saved.
	Unpriced []string
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
		spent, ok1 := p.Cost(t.Model, t.Spent)
		saved, ok2 := p.Cost(t.Model, t.Saved)
		if !ok1 || !ok2 {
			out[i].Unpriced = append(out[i].Unpriced, t.Model)
			continue
		}
		out[i].Spent += spent
		out[i].Saved += saved
	}
	slices.SortFunc(out, func(a, b StageCost) int { return cmp.Compare(a.Stage, b.Stage) })
	return out
}
