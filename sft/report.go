package sft

import (
	"cmp"
	"slices"
	"strings"

	"github.com/groundwork/curate/client/llm"
)

// Report is what a run did, as sft.json and the dataset card show it.
type Report struct {
	Dataset  string   `json:"dataset"`
	Teacher  string   `json:"teacher"`
	NumIdeas int      `json:"num_ideas"`
	Think    bool     `json:"think"`
	Splits   []string `json:"dataset_splits"`
	// PromptVersions: the model-input template the instances were built
	// with and the teacher's prompts.
	PromptVersions ReportVersions `json:"prompt_versions"`
	Instances      int            `json:"instances"` // sent to the teacher or skipped
	Rows           map[string]int `json:"rows"`      // by split
	Gate           GateStats      `json:"gate"`
	Rejects        map[string]int `json:"rejects"` // by reason
	Skipped        int            `json:"skipped"`
	// Pending counts the instances whose teacher answers wait in a
	// provider's batch (batch mode): a later run adds them.
	Pending  int          `json:"pending,omitempty"`
	Stopped  bool         `json:"stopped,omitempty"`
	Length   LengthStats  `json:"length"`
	Openings OpeningStats `json:"openings"`
	Usage    []UsageLine  `json:"usage"`
	// Cost is the dollars spent on teacher calls in this run; nil when a
	// model used has no price.
	Cost   *float64 `json:"cost_usd"`
	Saved  *float64 `json:"saved_by_cache_usd"`
	Budget float64  `json:"budget_usd,omitempty"`
}

// ReportVersions are the prompt versions a run used.
type ReportVersions struct {
	ModelInput string `json:"model_input"`
	PromptVersions
}

// GateStats count the answers the gate saw: Passed of Checked became
// completions, FirstAttempt of them without the retry.
type GateStats struct {
	Checked      int     `json:"checked"`
	Passed       int     `json:"passed"`
	FirstAttempt int     `json:"first_attempt"`
	PassRate     float64 `json:"pass_rate"`
}

// LengthStats describe the length filter.
type LengthStats struct {
	MaxTokens int    `json:"max_tokens"` // 0: no limit
	Counter   string `json:"counter"`
	Dropped   int    `json:"dropped"`
	Longest   int    `json:"longest"` // of the rows kept
	Mean      int    `json:"mean"`
}

// OpeningStats measure the uniqueness of the traces' first sentences.
type OpeningStats struct {
	Rows     int `json:"rows"`
	Distinct int `json:"distinct"`
}

// UsageLine is the teacher usage of one stage and model.
type UsageLine struct {
	Stage        string   `json:"stage"`
	Model        string   `json:"model"`
	Calls        int64    `json:"calls"`
	CachedCalls  int64    `json:"cached_calls"`
	Failures     int64    `json:"failures"`
	InputTokens  int64    `json:"input_tokens"`
	CachedTokens int64    `json:"cached_input_tokens"` // of InputTokens, read from the provider's prompt cache
	OutputTokens int64    `json:"output_tokens"`
	BatchCalls   int64    `json:"batch_calls,omitempty"`
	Estimated    bool     `json:"estimated,omitempty"`
	Cost         *float64 `json:"cost_usd"`
}

func (rep *Report) init(o Options) {
	rep.Dataset = o.Dataset
	rep.Teacher = o.Teacher.Model()
	rep.NumIdeas = o.NumIdeas
	rep.Think = !o.NoThink
	rep.Splits = o.Splits
	rep.PromptVersions.PromptVersions = o.Teacher.PromptVersions()
	rep.Budget = o.Budget
	rep.Length = LengthStats{MaxTokens: max(o.MaxTokens, 0), Counter: cmp.Or(o.CounterName, "estimate")}
}

func (rep *Report) fill(r *Result, g *generation) {
	o := g.opts
	rep.Instances = len(g.items)
	var versions []string
	for _, it := range g.items {
		if v := it.inst.Provenance.PromptVersions.Dataset; v != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	slices.Sort(versions)
	rep.PromptVersions.ModelInput = strings.Join(versions, ", ")
	rep.Rows = map[string]int{SplitTrain: 0, SplitValidation: 0}
	openings := map[string]bool{}
	total := 0
	for _, row := range r.Rows {
		rep.Rows[row.Split]++
		total += row.Tokens
		rep.Length.Longest = max(rep.Length.Longest, row.Tokens)
		if row.Think {
			rep.Openings.Rows++
			openings[normOpening(firstSentence(row.Opening, ""))] = true
		}
	}
	rep.Openings.Distinct = len(openings)
	if len(r.Rows) > 0 {
		rep.Length.Mean = total / len(r.Rows)
	}
	rep.Rejects = map[string]int{}
	for _, rj := range r.Rejects {
		rep.Rejects[rj.Reason]++
		if rj.Reason == ReasonTooLong {
			rep.Length.Dropped++
		}
	}
	rep.Skipped = len(r.Skipped)
	rep.Pending = len(r.Pending)
	rep.Stopped = r.Stopped
	if rep.Gate.Checked > 0 {
		rep.Gate.PassRate = float64(rep.Gate.Passed) / float64(rep.Gate.Checked)
	}
	rep.Usage, rep.Cost, rep.Saved = usage(o.Meter, o.Prices)
}

// usage summarizes the sft stages' tallies and prices them.
func usage(m *llm.Meter, prices llm.Prices) ([]UsageLine, *float64, *float64) {
	var lines []UsageLine
	cost, saved, priced := 0.0, 0.0, true
	for _, t := range sftTallies(m) {
		l := UsageLine{Stage: t.Stage, Model: t.Model, Calls: t.Calls, CachedCalls: t.CachedCalls, Failures: t.Failures,
			InputTokens: t.Spent.PromptTokens, CachedTokens: t.Spent.CachedTokens, OutputTokens: t.Spent.CompletionTokens,
			BatchCalls: t.BatchCalls, Estimated: t.Spent.Estimated}
		c, ok1 := prices.TallyCost(t) // batch calls at the batch price
		s, ok2 := prices.Cost(t.Model, t.Saved)
		switch {
		case llm.IsHeuristic(t.Model):
			c, s, ok1, ok2 = 0, 0, true, true
		case !ok1 || !ok2:
			priced = false
		}
		if ok1 {
			l.Cost = &c
			cost += c
			saved += s
		}
		lines = append(lines, l)
	}
	if !priced {
		return lines, nil, nil
	}
	return lines, &cost, &saved
}
