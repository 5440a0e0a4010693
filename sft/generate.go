package sft

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// Defaults of Options.
const (
	DefaultNumIdeas  = 3
	DefaultMaxTokens = 15_872
	DefaultValSize   = holdout.DefaultSize
	DefaultWorkers   = 4
	// openingsBatch is how many openings one teacher call writes.
	openingsBatch = 20
)

// Splits of the SFT data. Train and validation hold the dataset's train
// targets only; rows of test targets, made only when Options.Splits asks
// for the dataset's test split, form their own split and never join the
// other two.
const (
	SplitTrain      = "train"
	SplitValidation = holdout.SplitValidation
	SplitTest       = "test"
)

// Splits lists the SFT splits in file order.
func Splits() []string { return []string{SplitTrain, SplitValidation, SplitTest} }

// Options configure Generate. The zero value, with a Teacher, is usable.
type Options struct {
	Teacher Teacher
	// NumIdeas is K (default DefaultNumIdeas). An instance built for
	// another K gets the model input re-rendered with the dataset's
	// template, which must be the version the instance was built with.
	NumIdeas int
	// NoThink writes the no-think variant: an empty think block and the
	// same answers, and no trace or opening calls.
	NoThink bool
	// MaxTokens drops rows whose prompt and completion together count
	// more tokens (default DefaultMaxTokens; negative: no limit).
	MaxTokens int
	// Counter counts tokens; nil uses Estimate.
	Counter Counter
	// ValSize is how many rows are held out as the validation split
	// (default DefaultValSize; negative: none), at most half of the rows.
	ValSize int
	// Splits are the dataset splits that feed the SFT data (default
	// train only: test targets are for evaluation).
	Splits []string
	// Limit, when positive, keeps the first Limit instances by ID.
	Limit int
	// Workers is how many instances are with the teacher at once
	// (default DefaultWorkers).
	Workers int
	// Meter is where the teacher's LLM client records usage (share it
	// with the client); Prices turn it into dollars; Budget, when
	// positive, stops starting teacher calls once the sft stages have
	// spent that many dollars in this run. Calls in flight finish.
	Meter  *llm.Meter
	Prices llm.Prices
	Budget float64
	// Stop, when closed, stops starting teacher calls (an interrupt);
	// the Result then says Stopped.
	Stop <-chan struct{}
	// Settle, when set, is called after a phase (ideas, traces) left
	// instances waiting on teacher answers in a provider's batch (batch
	// mode), with their number; it may end the wait (submit, wait for
	// the answers) and returns true to ask for those instances again.
	// Instances still waiting at the end are listed in Result.Pending.
	Settle func(ctx context.Context, waiting int) bool
	// Dataset names the input in the dataset card; CounterName says how
	// tokens were counted (default "estimate").
	Dataset     string
	CounterName string
	Logger      *slog.Logger
}

// Row is one SFT example as the JSONL files hold it.
type Row struct {
	InstanceID   string        `json:"instance_id"`
	Split        string        `json:"split"`         // SplitTrain, SplitValidation or SplitTest
	DatasetSplit string        `json:"dataset_split"` // the instance's split in the input dataset
	Prompt       string        `json:"prompt"`
	Response     string        `json:"response"` // the completion: think block, then answer block
	NumIdeas     int           `json:"num_ideas"`
	Think        bool          `json:"think"`
	Opening      string        `json:"opening,omitempty"`
	Cards        []record.Card `json:"cards"`
	Teacher      string        `json:"teacher"`
	// Tokens is the prompt and completion length the filter measured.
	Tokens int `json:"tokens"`
	// TeacherUsage sums the tokens of the row's teacher calls (their
	// original cost when they came from the cache).
	TeacherUsage llm.Usage `json:"teacher_usage"`
	Cached       bool      `json:"cached"`   // every call answered from the cache
	Attempts     int       `json:"attempts"` // answers asked for the ideas (2: retried once)
}

// Reject is an instance that did not become a row, with the reason.
type Reject struct {
	InstanceID string `json:"instance_id"`
	Stage      string `json:"stage"`  // StageIdeas, StageOpenings, StageTrace, "gate" or "length"
	Reason     string `json:"reason"` // a gate reason or a Reason constant
	Detail     string `json:"detail"`
	Attempts   int    `json:"attempts,omitempty"`
	Tokens     int    `json:"tokens,omitempty"`
	Raw        string `json:"raw,omitempty"` // the last answer, when there was one
}

// Result is what Generate produced.
type Result struct {
	Rows    []Row    // train rows then validation rows, each by instance ID
	Rejects []Reject // by instance ID
	// Skipped lists the instances never sent to the teacher because the
	// budget was spent or Stop was closed.
	Skipped []string
	// Pending lists the instances whose teacher answers wait in a
	// provider's batch: neither rows nor rejects; a later run adds them.
	Pending []string
	Stopped bool
	Report  Report
}

// Generate writes the SFT rows of instances (a published dataset's, as
// the caller read them back): the teacher's ideas, the openings, the
// traces, the gate, the length filter and the validation split.
func Generate(ctx context.Context, instances []record.Instance, opts Options) (*Result, error) {
	if opts.Teacher == nil {
		return nil, errors.New("sft: no teacher")
	}
	opts.NumIdeas = cmp.Or(opts.NumIdeas, DefaultNumIdeas)
	opts.MaxTokens = cmp.Or(opts.MaxTokens, DefaultMaxTokens)
	opts.ValSize = cmp.Or(opts.ValSize, DefaultValSize)
	opts.Workers = cmp.Or(max(opts.Workers, 0), DefaultWorkers)
	if len(opts.Splits) == 0 {
		opts.Splits = []string{record.SplitTrain}
	}
	if opts.Counter == nil {
		opts.Counter = Estimate{}
	}
	if opts.Meter == nil {
		opts.Meter = new(llm.Meter)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.NumIdeas < 1 {
		return nil, fmt.Errorf("sft: num ideas %d, want at least 1", opts.NumIdeas)
	}
	g := &generation{opts: opts, log: opts.Logger, heuristic: llm.IsHeuristic(opts.Teacher.Model())}
	ins, err := g.inputs(instances)
	if err != nil {
		return nil, err
	}
	g.items = make([]item, len(ins))
	for i := range ins {
		g.items[i].in = &ins[i].input
		g.items[i].inst = ins[i].inst
	}
	g.log.Info("sft: generating", "instances", len(ins), "teacher", opts.Teacher.Model(), "k", opts.NumIdeas, "think", !opts.NoThink)

	if err := g.phase(ctx, g.ideas); err != nil {
		return nil, err
	}
	if !opts.NoThink {
		if err := g.openings(ctx); err != nil {
			return nil, err
		}
		if err := g.phase(ctx, g.trace); err != nil {
			return nil, err
		}
	}
	return g.finish(), nil
}

// generation is the state of one Generate call.
type generation struct {
	opts      Options
	log       *slog.Logger
	heuristic bool
	items     []item

	mu      sync.Mutex
	stopped bool // Stop was closed
	broke   bool // the budget was reached
}

// item is one instance on its way to a row.
type item struct {
	inst    *record.Instance
	in      *Input
	cards   []record.Card
	opening string
	trace   string
	usage   llm.Usage
	cached  bool
	calls   int
	ideasAt int // attempts of the ideas call
	reject  *Reject
	skipped bool
	// pending: a teacher answer waits in a provider's batch.
	pending bool
}

type input struct {
	inst  *record.Instance
	input Input
}

// inputs selects the instances of the chosen splits, orders them by ID and
// builds each one's teacher input.
func (g *generation) inputs(instances []record.Instance) ([]input, error) {
	var sel []*record.Instance
	seen := map[string]bool{}
	for i := range instances {
		in := &instances[i]
		if !slices.Contains(g.opts.Splits, in.Split) {
			continue
		}
		if seen[in.InstanceID] {
			return nil, fmt.Errorf("sft: instance %s appears twice in the dataset", in.InstanceID)
		}
		seen[in.InstanceID] = true
		sel = append(sel, in)
	}
	slices.SortFunc(sel, func(a, b *record.Instance) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	if g.opts.Limit > 0 && len(sel) > g.opts.Limit {
		sel = sel[:g.opts.Limit]
	}
	var tmpl *modelinput.Template
	out := make([]input, len(sel))
	for i, in := range sel {
		prompt := in.Prompt
		if in.NumIdeas != g.opts.NumIdeas {
			if tmpl == nil {
				var err error
				if tmpl, err = modelinput.Load(); err != nil {
					return nil, fmt.Errorf("sft: %w", err)
				}
			}
			if v := in.Provenance.PromptVersions.Dataset; v != tmpl.Version() {
				return nil, fmt.Errorf("sft: instance %s was built for K = %d with template %q; this curate renders %q, so its model input for K = %d would differ: rebuild the dataset or use --num-ideas %d",
					in.InstanceID, in.NumIdeas, v, tmpl.Version(), g.opts.NumIdeas, in.NumIdeas)
			}
			var err error
			if prompt, err = tmpl.Render(in.Sources, g.opts.NumIdeas); err != nil {
				return nil, fmt.Errorf("sft: instance %s: %w", in.InstanceID, err)
			}
		}
		if strings.TrimSpace(prompt) == "" {
			return nil, fmt.Errorf("sft: instance %s has no model input", in.InstanceID)
		}
		out[i] = input{inst: in, input: Input{InstanceID: in.InstanceID, Prompt: prompt, NumIdeas: g.opts.NumIdeas, Documents: record.PromptDocuments(in.Sources)}}
	}
	return out, nil
}

// proceed reports whether another teacher call may start: not after Stop,
// not once the budget is spent.
func (g *generation) proceed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped || g.broke {
		return false
	}
	if g.opts.Stop != nil {
		select {
		case <-g.opts.Stop:
			g.stopped = true
			g.log.Warn("sft: stopping: no new teacher calls; calls in flight finish")
			return false
		default:
		}
	}
	if g.opts.Budget > 0 {
		if spent := g.spent(); spent >= g.opts.Budget {
			g.broke = true
			g.log.Warn("sft: budget reached: no new teacher calls", "spent", fmt.Sprintf("$%.4f", spent), "budget", fmt.Sprintf("$%.2f", g.opts.Budget))
			return false
		}
	}
	return true
}

// spent is the dollars the sft stages spent in this run.
func (g *generation) spent() float64 {
	total := 0.0
	for _, c := range g.opts.Prices.Costs(sftTallies(g.opts.Meter)) {
		total += c.Spent
	}
	return total
}

func sftTallies(m *llm.Meter) []llm.Tally {
	var out []llm.Tally
	for _, t := range m.Tallies() {
		if strings.HasPrefix(t.Stage, "sft-") {
			out = append(out, t)
		}
	}
	return out
}

// phase runs f on every live item, then, while items wait on answers in
// a batch and Settle ends their wait, on those items again.
func (g *generation) phase(ctx context.Context, f func(context.Context, *item) error) error {
	if err := g.each(ctx, f, func(*item) bool { return true }); err != nil {
		return err
	}
	for g.opts.Settle != nil {
		n := 0
		for i := range g.items {
			if g.items[i].pending {
				n++
			}
		}
		if n == 0 || !g.opts.Settle(ctx, n) {
			return nil
		}
		again := map[*item]bool{}
		for i := range g.items {
			if it := &g.items[i]; it.pending {
				it.pending, again[it] = false, true
			}
		}
		if err := g.each(ctx, f, func(it *item) bool { return again[it] }); err != nil {
			return err
		}
	}
	return nil
}

// each runs f on every live item that want takes, with opts.Workers at a
// time. An error from f stops the run and is returned.
func (g *generation) each(ctx context.Context, f func(context.Context, *item) error, want func(*item) bool) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan *item)
	var wg sync.WaitGroup
	for range g.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := f(ctx, it); err != nil {
					cancel(err)
				}
			}
		}()
	}
	for i := range g.items {
		it := &g.items[i]
		if it.reject != nil || it.skipped || it.pending || !want(it) {
			continue
		}
		select {
		case work <- it:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// account adds a call's cost to an item and meters heuristic calls.
func (g *generation) account(it *item, stage string, c Call) {
	if g.heuristic {
		g.opts.Meter.RecordHeuristic(stage)
	}
	it.usage = it.usage.Add(c.Usage)
	it.cached = (it.calls == 0 || it.cached) && c.Cached
	it.calls++
}

// failed turns a teacher error into the item's reject, or returns it when
// it should stop the run: a cancelled context or an endpoint that refuses
// the request (a configuration problem every instance would hit).
func (g *generation) failed(it *item, stage string, err error) error {
	var re *RejectError
	var ae *llm.APIError
	switch {
	case errors.Is(err, llm.ErrPending):
		it.pending = true // neither a row nor a reject yet
		return nil
	case errors.As(err, &re):
		it.reject = &Reject{InstanceID: it.in.InstanceID, Stage: cmp.Or(re.Stage, stage), Reason: re.Reason, Detail: re.Detail, Attempts: re.Attempts, Raw: re.Raw}
	case errors.As(err, &ae), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	default:
		it.reject = &Reject{InstanceID: it.in.InstanceID, Stage: stage, Reason: ReasonTeacherError, Detail: err.Error()}
	}
	g.log.Warn("sft: instance rejected", "instance", it.in.InstanceID, "stage", it.reject.Stage, "reason", it.reject.Reason, "detail", clip(it.reject.Detail, 300))
	return nil
}

func (g *generation) ideas(ctx context.Context, it *item) error {
	if !g.proceed() {
		it.skipped = true
		return nil
	}
	res, err := g.opts.Teacher.Ideas(ctx, it.in)
	if err != nil {
		return g.failed(it, StageIdeas, err)
	}
	g.account(it, StageIdeas, res.Call)
	it.cards, it.ideasAt = res.Cards, res.Attempts
	return nil
}

// openings draws the run's openings and gives instance i (in ID order)
// opening i, whether or not the instances before it got ideas, so that a
// run resumed after a budget stop asks for the same openings again (from
// the cache) and gives every instance the one it had.
func (g *generation) openings(ctx context.Context) error {
	need := 0
	for i, it := range g.items {
		if it.cards != nil && it.reject == nil && !it.skipped && !it.pending {
			need = i + 1
		}
	}
	var pool []string
	for len(pool) < need {
		if !g.proceed() {
			break
		}
		n := openingsBatch
		if g.heuristic {
			n = need - len(pool) // free: one call for all
		}
		res, err := g.opts.Teacher.Openings(ctx, n, pool)
		var re *RejectError
		switch {
		case errors.As(err, &re):
			// No more openings: the instances without one are rejected.
			g.log.Warn("sft: no more openings", "have", len(pool), "need", need, "reason", re.Detail)
			return g.noOpening(pool, re.Detail)
		case err != nil:
			return err
		}
		if g.heuristic {
			g.opts.Meter.RecordHeuristic(StageOpenings)
		}
		pool = append(pool, res.Sentences...)
	}
	return g.noOpening(pool, "")
}

// noOpening assigns the pool's openings; items beyond it are rejected
// with detail, or skipped when the run stopped or ran out of budget.
func (g *generation) noOpening(pool []string, detail string) error {
	for i := range g.items {
		it := &g.items[i]
		if it.cards == nil || it.reject != nil || it.skipped || it.pending {
			continue
		}
		switch {
		case i < len(pool):
			it.opening = pool[i]
		case detail != "":
			it.reject = &Reject{InstanceID: it.in.InstanceID, Stage: StageOpenings, Reason: ReasonOpening, Detail: detail}
		default:
			it.skipped = true
		}
	}
	return nil
}

// trace asks for the hindsight trace and checks it; a trace that fails
// its check is asked for once more with the reason.
func (g *generation) trace(ctx context.Context, it *item) error {
	feedback := ""
	for attempt := 1; ; attempt++ {
		if !g.proceed() {
			it.skipped = true
			return nil
		}
		res, err := g.opts.Teacher.Trace(ctx, it.in, it.cards, it.opening, feedback)
		if err != nil {
			return g.failed(it, StageTrace, err)
		}
		g.account(it, StageTrace, res.Call)
		cerr := checkTrace(res.Text, it.opening)
		if cerr == nil {
			it.trace = strings.TrimSpace(res.Text)
			return nil
		}
		if attempt == 2 {
			it.reject = &Reject{InstanceID: it.in.InstanceID, Stage: StageTrace, Reason: ReasonTraceInvalid, Detail: cerr.Error(), Attempts: attempt, Raw: res.Text}
			g.log.Warn("sft: instance rejected", "instance", it.in.InstanceID, "stage", StageTrace, "reason", ReasonTraceInvalid, "detail", cerr)
			return nil
		}
		feedback = cerr.Error()
	}
}

// finish builds the completions, applies the gate and the length filter,
// holds out the validation split and writes the report.
func (g *generation) finish() *Result {
	r := &Result{}
	rep := &r.Report
	rep.init(g.opts)
	for i := range g.items {
		it := &g.items[i]
		if it.skipped {
			r.Skipped = append(r.Skipped, it.in.InstanceID)
			continue
		}
		if it.pending || (it.cards == nil && it.reject == nil) {
			// Waiting on the teacher's answer in a batch.
			r.Pending = append(r.Pending, it.in.InstanceID)
			continue
		}
		if it.reject != nil {
			// A rejected answer the gate saw counts against its pass
			// rate; a trace or opening failure is not the gate's.
			if it.reject.Stage == StageIdeas && isGateReason(it.reject.Reason) {
				rep.Gate.Checked++
			}
			r.Rejects = append(r.Rejects, *it.reject)
			continue
		}
		rep.Gate.Checked++
		completion, err := gate.Format(it.trace, it.cards)
		if err == nil {
			_, err = gate.Check(completion, g.opts.NumIdeas)
		}
		if err != nil {
			r.Rejects = append(r.Rejects, Reject{InstanceID: it.in.InstanceID, Stage: "gate", Reason: cmp.Or(gate.ReasonOf(err), ReasonTeacherInvalid), Detail: err.Error(), Raw: completion})
			continue
		}
		rep.Gate.Passed++
		if it.ideasAt <= 1 {
			rep.Gate.FirstAttempt++
		}
		tokens := g.opts.Counter.Count(it.in.Prompt) + g.opts.Counter.Count(completion) + TemplateOverhead
		if g.opts.MaxTokens > 0 && tokens > g.opts.MaxTokens {
			r.Rejects = append(r.Rejects, Reject{InstanceID: it.in.InstanceID, Stage: "length", Reason: ReasonTooLong,
				Detail: fmt.Sprintf("prompt and completion count %d tokens, over the limit of %d", tokens, g.opts.MaxTokens), Tokens: tokens})
			continue
		}
		r.Rows = append(r.Rows, Row{
			InstanceID: it.in.InstanceID, DatasetSplit: it.inst.Split,
			Prompt: it.in.Prompt, Response: completion, NumIdeas: g.opts.NumIdeas,
			Think: !g.opts.NoThink, Opening: it.opening, Cards: it.cards, Teacher: g.opts.Teacher.Model(),
			Tokens: tokens, TeacherUsage: it.usage, Cached: it.cached, Attempts: it.ideasAt,
		})
	}
	holdOut(r.Rows, g.opts.ValSize)
	slices.SortStableFunc(r.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(splitOrder(a.Split), splitOrder(b.Split)), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	r.Stopped = g.stopped
	rep.fill(r, g)
	return r
}

func isGateReason(reason string) bool { return slices.Contains(gate.Reasons(), reason) }

func splitOrder(s string) int { return slices.Index(Splits(), s) }

// holdOut assigns the SFT splits: rows of the dataset's test targets go
// to SplitTest; of the others, the valSize that package holdout chooses
// (the rule curate export uses too) are validation; the rest are train.
func holdOut(rows []Row, valSize int) {
	var ids []string
	for i := range rows {
		if rows[i].DatasetSplit == record.SplitTest {
			rows[i].Split = SplitTest
			continue
		}
		rows[i].Split = SplitTrain
		ids = append(ids, rows[i].InstanceID)
	}
	val := holdout.Validation(ids, valSize)
	for i := range rows {
		if rows[i].Split == SplitTrain && val[rows[i].InstanceID] {
			rows[i].Split = SplitValidation
		}
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
