// Package estimate says, before a run starts, how long it will take and
// what it will cost: from the requests each service still has to answer,
// the interval each service's rules impose (robots.txt crawl delays
// included), the requests allowed in flight, and the LLM tokens each stage
// still needs, priced at the sync and batch rates where they are given.
//
// It is pure arithmetic over what the caller counted; nothing here reads
// the store or the network.
package estimate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Service is the HTTP work left for one service in one stage.
type Service struct {
	Stage    string // the stage that makes the requests ("fetch", "graph", ...)
	Name     string // the service ("arxiv", "s2", ...): stages sharing one share its limiter
	Requests int    // requests still needed
	// Interval is the effective spacing between request starts (the
	// larger of the configured interval and the robots.txt Crawl-delay);
	// IntervalSource says which (robots.Pace.Source).
	Interval       time.Duration
	IntervalSource string
	MaxInFlight    int           // requests allowed at once; 0 means no cap
	Latency        time.Duration // expected time to one answer; 0 if unknown
}

// Price is what a model costs, in dollars per million tokens: input read
// from the prompt cache, and input written to it with the five-minute and
// the one-hour lifetime, have prices of their own.
type Price struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CachedInput  float64 `json:"cached_input"`
	CacheWrite   float64 `json:"cache_write"`
	CacheWrite1h float64 `json:"cache_write_1h"`
}

// CacheTokens are the input tokens the prompt cache serves (Read) and
// those written to it, by lifetime.
type CacheTokens struct {
	Read    int64 `json:"read,omitempty"`
	Write5m int64 `json:"write_5m,omitempty"`
	Write1h int64 `json:"write_1h,omitempty"`
}

// LLM is the model work left for one stage.
type LLM struct {
	Stage        string
	Model        string
	Calls        int
	InputTokens  int64 // prompt tokens over all calls
	OutputTokens int64 // completion tokens over all calls
	Concurrency  int   // calls at once; 0 means 1
	// Latency is the expected time one call takes; 0 if unknown.
	Latency time.Duration
	// RequestsPerMinute and TokensPerMinute are the provider's limits; 0
	// means none.
	RequestsPerMinute, TokensPerMinute int
	// Batch sends the stage through a batch API: its cost is BatchPrice's
	// and its time the provider's window (BatchWindow, default 24h), an
	// upper bound.
	Batch       bool
	BatchWindow time.Duration
	// Price and BatchPrice are the sync and batch prices; nil when not
	// given.
	Price, BatchPrice *Price
	// Cache and BatchCache are what of InputTokens the prompt cache serves
	// and is written in sync mode and in batch mode.
	Cache, BatchCache CacheTokens
}

// Input is everything an estimate is made from.
type Input struct {
	Targets  int // targets of the run, for per-target figures; 0 if unknown
	Services []Service
	LLM      []LLM
}

// ServiceEstimate is the time one service needs over all stages.
type ServiceEstimate struct {
	Name           string        `json:"service"`
	Requests       int           `json:"requests"`
	PerTarget      float64       `json:"requests_per_target,omitempty"`
	Interval       time.Duration `json:"-"`
	IntervalSource string        `json:"interval_source,omitempty"`
	MaxInFlight    int           `json:"max_in_flight"`
	// Spacing is the time per request the service sustains: the interval,
	// or latency over requests in flight if that is longer.
	Spacing time.Duration `json:"-"`
	Wall    time.Duration `json:"-"`
}

// StageEstimate is one stage's share: its requests, its LLM work, the
// time they would take alone, and the cost.
type StageEstimate struct {
	Stage    string         `json:"stage"`
	Requests map[string]int `json:"requests,omitempty"` // by service
	Model    string         `json:"model,omitempty"`
	Calls    int            `json:"llm_calls,omitempty"`
	Input    int64          `json:"input_tokens,omitempty"`
	Output   int64          `json:"output_tokens,omitempty"`
	Batch    bool           `json:"batch,omitempty"`
	Wall     time.Duration  `json:"-"`
	// WallUpTo marks a Wall that is an upper bound (a batch window).
	WallUpTo bool `json:"wall_is_upper_bound,omitempty"`
	// SyncCost and BatchCost are in dollars; nil when the price is not
	// given or the stage has no LLM work.
	SyncCost  *float64 `json:"sync_cost_usd,omitempty"`
	BatchCost *float64 `json:"batch_cost_usd,omitempty"`
}

// Estimate is the answer.
type Estimate struct {
	Targets  int               `json:"targets,omitempty"`
	Services []ServiceEstimate `json:"services"`
	Stages   []StageEstimate   `json:"stages"`
	// Wall is the run's time: stages overlap (a target moves on as soon
	// as its stage is done), so the slowest service or LLM stage sets it.
	// Serial is the time if the stages ran one after another, the most it
	// can take.
	Wall       time.Duration `json:"-"`
	Serial     time.Duration `json:"-"`
	Bottleneck string        `json:"bottleneck,omitempty"`
	// Cost is the run's LLM cost in dollars at the prices each stage will
	// pay (batch for batch stages, else sync); nil if a needed price is
	// missing (Notes says which).
	Cost  *float64 `json:"cost_usd"`
	Notes []string `json:"notes,omitempty"`
}

const defaultBatchWindow = 24 * time.Hour

// Compute makes an estimate. It fails, naming the entry, on negative
// counts or durations, a stage or service without a name, or one service
// given different intervals or caps in different stages (they share one
// limiter, so they cannot differ).
func Compute(in Input) (Estimate, error) {
	if err := validate(in); err != nil {
		return Estimate{}, err
	}
	e := Estimate{Targets: in.Targets}
	stages := map[string]*StageEstimate{}
	var order []string
	stage := func(name string) *StageEstimate {
		if s := stages[name]; s != nil {
			return s
		}
		stages[name] = &StageEstimate{Stage: name}
		order = append(order, name)
		return stages[name]
	}

	// Services: one limiter per name, whatever stage asks.
	byName := map[string]*ServiceEstimate{}
	var names []string
	latency := map[string]time.Duration{}
	for _, s := range in.Services {
		se := byName[s.Name]
		if se == nil {
			se = &ServiceEstimate{Name: s.Name, Interval: s.Interval, IntervalSource: s.IntervalSource, MaxInFlight: s.MaxInFlight}
			byName[s.Name] = se
			names = append(names, s.Name)
		}
		se.Requests += s.Requests
		latency[s.Name] = max(latency[s.Name], s.Latency)
		st := stage(s.Stage)
		if st.Requests == nil {
			st.Requests = map[string]int{}
		}
		st.Requests[s.Name] += s.Requests
	}
	for _, name := range names {
		se := byName[name]
		se.Spacing = spacing(se.Interval, se.MaxInFlight, latency[name])
		se.Wall = requestsWall(se.Requests, se.Spacing, latency[name])
		if in.Targets > 0 {
			se.PerTarget = float64(se.Requests) / float64(in.Targets)
		}
		if se.Requests > 0 && se.Spacing == 0 {
			e.Notes = append(e.Notes, fmt.Sprintf("%s: no interval, cap or latency given; its time is not counted", name))
		}
		e.Services = append(e.Services, *se)
		if se.Wall > e.Wall {
			e.Wall, e.Bottleneck = se.Wall, name
		}
	}
	for _, s := range in.Services {
		st := stages[s.Stage]
		se := byName[s.Name]
		st.Wall = max(st.Wall, requestsWall(st.Requests[s.Name], se.Spacing, latency[s.Name]))
	}

	// LLM stages.
	total, priced := 0.0, true
	for _, l := range in.LLM {
		st := stage(l.Stage)
		if st.Model != "" && st.Model != l.Model {
			st.Model += "," + l.Model
		} else {
			st.Model = l.Model
		}
		st.Calls += l.Calls
		st.Input += l.InputTokens
		st.Output += l.OutputTokens
		st.Batch = st.Batch || l.Batch
		w, upTo := llmWall(l)
		if w == 0 && l.Calls > 0 {
			e.Notes = append(e.Notes, fmt.Sprintf("%s: no latency or rate limit given for %s; its time is not counted", l.Stage, l.Model))
		}
		if w > st.Wall {
			st.Wall, st.WallUpTo = w, upTo
		}
		if w > e.Wall {
			e.Wall, e.Bottleneck = w, "llm "+l.Stage
		}
		sync, batch := cost(l, l.Price, l.Cache), cost(l, l.BatchPrice, l.BatchCache)
		st.SyncCost, st.BatchCost = add(st.SyncCost, sync), add(st.BatchCost, batch)
		pay, kind := sync, "sync"
		if l.Batch {
			pay, kind = batch, "batch"
		}
		switch {
		case l.InputTokens == 0 && l.OutputTokens == 0:
		case pay == nil:
			priced = false
			e.Notes = append(e.Notes, fmt.Sprintf("%s: no %s price for %s; the run's cost is unknown", l.Stage, kind, l.Model))
		default:
			total += *pay
		}
	}
	if priced {
		e.Cost = &total
	}
	for _, name := range order {
		e.Stages = append(e.Stages, *stages[name])
		e.Serial += stages[name].Wall
	}
	return e, nil
}

func validate(in Input) error {
	if in.Targets < 0 {
		return fmt.Errorf("estimate: %d targets", in.Targets)
	}
	seen := map[string]Service{}
	for _, s := range in.Services {
		switch {
		case s.Stage == "" || s.Name == "":
			return fmt.Errorf("estimate: service %q in stage %q: empty name", s.Name, s.Stage)
		case s.Requests < 0 || s.Interval < 0 || s.MaxInFlight < 0 || s.Latency < 0:
			return fmt.Errorf("estimate: service %s in stage %s: negative requests, interval, max in flight or latency", s.Name, s.Stage)
		}
		if p, ok := seen[s.Name]; ok && (p.Interval != s.Interval || p.MaxInFlight != s.MaxInFlight) {
			return fmt.Errorf("estimate: service %s: interval %s and max in flight %d in stage %s, %s and %d in stage %s: one service has one limiter",
				s.Name, p.Interval, p.MaxInFlight, p.Stage, s.Interval, s.MaxInFlight, s.Stage)
		}
		seen[s.Name] = s
	}
	for _, l := range in.LLM {
		switch {
		case l.Stage == "":
			return fmt.Errorf("estimate: llm work for model %q: empty stage", l.Model)
		case l.Calls < 0 || l.InputTokens < 0 || l.OutputTokens < 0 || l.Concurrency < 0 || l.Latency < 0 ||
			l.RequestsPerMinute < 0 || l.TokensPerMinute < 0 || l.BatchWindow < 0:
			return fmt.Errorf("estimate: llm stage %s: negative calls, tokens, concurrency, latency, limit or window", l.Stage)
		}
		for _, p := range []*Price{l.Price, l.BatchPrice} {
			if p == nil {
				continue
			}
			for _, v := range []float64{p.Input, p.Output, p.CachedInput, p.CacheWrite, p.CacheWrite1h} {
				if v < 0 || math.IsNaN(v) {
					return fmt.Errorf("estimate: llm stage %s: price %+v is not a price", l.Stage, *p)
				}
			}
		}
		for _, c := range []CacheTokens{l.Cache, l.BatchCache} {
			if c.Read < 0 || c.Write5m < 0 || c.Write1h < 0 || c.Read+c.Write5m+c.Write1h > l.InputTokens {
				return fmt.Errorf("estimate: llm stage %s: cache tokens %+v of %d input tokens", l.Stage, c, l.InputTokens)
			}
		}
	}
	return nil
}

// spacing is the time per request a service sustains: its interval, or
// the latency shared among the requests in flight if that is longer.
func spacing(interval time.Duration, inFlight int, latency time.Duration) time.Duration {
	if inFlight > 0 && latency > 0 {
		return max(interval, latency/time.Duration(inFlight))
	}
	return interval
}

// requestsWall is the time from the first request's start to the last
// answer: n-1 spacings and one latency.
func requestsWall(n int, spacing, latency time.Duration) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(n-1)*spacing + latency
}

// llmWall is an LLM stage's time: the most of what concurrency, the
// request limit and the token limit allow; for a batch stage, its window.
func llmWall(l LLM) (time.Duration, bool) {
	if l.Calls == 0 {
		return 0, false
	}
	if l.Batch {
		return cmp.Or(l.BatchWindow, defaultBatchWindow), true
	}
	var w time.Duration
	if l.Latency > 0 {
		c := max(l.Concurrency, 1)
		rounds := (l.Calls + c - 1) / c
		w = time.Duration(rounds) * l.Latency
	}
	if l.RequestsPerMinute > 0 {
		w = max(w, minutes(float64(l.Calls)/float64(l.RequestsPerMinute)))
	}
	if l.TokensPerMinute > 0 {
		w = max(w, minutes(float64(l.InputTokens+l.OutputTokens)/float64(l.TokensPerMinute)))
	}
	return w, false
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }

func cost(l LLM, p *Price, cache CacheTokens) *float64 {
	if p == nil || l.InputTokens == 0 && l.OutputTokens == 0 {
		return nil
	}
	plain := l.InputTokens - cache.Read - cache.Write5m - cache.Write1h
	c := float64(plain)/1e6*p.Input + float64(l.OutputTokens)/1e6*p.Output
	c += float64(cache.Read)/1e6*p.CachedInput + float64(cache.Write5m)/1e6*p.CacheWrite + float64(cache.Write1h)/1e6*p.CacheWrite1h
	return &c
}

func add(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	s := *a + *b
	return &s
}

// Service returns the estimate for the named service.
func (e Estimate) Service(name string) (ServiceEstimate, bool) {
	i := slices.IndexFunc(e.Services, func(s ServiceEstimate) bool { return s.Name == name })
	if i < 0 {
		return ServiceEstimate{}, false
	}
	return e.Services[i], true
}
