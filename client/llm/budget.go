package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrBudget is returned instead of a call once a run's budget is spent.
var ErrBudget = errors.New("llm budget exhausted")

// Budget caps what a run spends: tokens (prompt plus completion, cached
// answers not counted) and, when prices are known, dollars. Zero limits
// mean no cap.
type Budget struct {
	MaxTokens int64
	MaxUSD    float64
	Prices    Prices
}

// budgeted wraps a Completer and refuses calls once the meter shows the
// budget spent. A call already under way finishes, so a run may overshoot
// by the calls in flight; the refusal is an error the stages record as a
// failure, and the next run picks the work up.
type budgeted struct {
	next  Completer
	meter *Meter
	b     Budget
}

// WithBudget returns c limited by b, measured on meter (the meter c
// reports to). With no limits it returns c itself.
func WithBudget(c Completer, meter *Meter, b Budget) Completer {
	if b.MaxTokens <= 0 && b.MaxUSD <= 0 {
		return c
	}
	return &budgeted{next: c, meter: meter, b: b}
}

func (w *budgeted) check() error {
	var tokens int64
	var usd float64
	for _, t := range w.meter.Tallies() {
		tokens += t.Spent.TotalTokens
		if w.b.Prices != nil {
			if c, ok := w.b.Prices.TallyCost(t); ok {
				usd += c
			}
		}
	}
	if w.b.MaxTokens > 0 && tokens >= w.b.MaxTokens {
		return fmt.Errorf("%w: %d of %d tokens spent", ErrBudget, tokens, w.b.MaxTokens)
	}
	if w.b.MaxUSD > 0 && usd >= w.b.MaxUSD {
		return fmt.Errorf("%w: $%.4f of $%.4f spent", ErrBudget, usd, w.b.MaxUSD)
	}
	return nil
}

// Complete sends req unless the budget is spent.
func (w *budgeted) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := w.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", req.Stage, err)
	}
	return w.next.Complete(ctx, req)
}

// CompleteJSON is Complete with a validator, as *Client offers it.
func (w *budgeted) CompleteJSON(ctx context.Context, req Request, validate func(json.RawMessage) error) (*Response, error) {
	req.Validate = validate
	return w.Complete(ctx, req)
}

// Model reports the wrapped Completer's model, if it has one.
func (w *budgeted) Model() string {
	if m, ok := w.next.(interface{ Model() string }); ok {
		return m.Model()
	}
	return ""
}
