package llm

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// spender is a Completer that reports a fixed usage per call to a meter.
type spender struct {
	meter *Meter
	usage Usage
	calls int
}

func (s *spender) Complete(_ context.Context, req Request) (*Response, error) {
	s.calls++
	s.meter.add(req.Stage, "m1", s.usage, answered, false)
	return &Response{Text: "{}", JSON: json.RawMessage(`{}`), Model: "m1", Usage: s.usage}, nil
}

func (s *spender) Model() string { return "m1" }

func TestBudget(t *testing.T) {
	tests := []struct {
		name      string
		budget    Budget
		wantCalls int
	}{
		{"no limit", Budget{}, 10},
		{"tokens", Budget{MaxTokens: 2500}, 3}, // 1000 a call: the third starts at 2000 spent
		{"dollars", Budget{MaxUSD: 0.002, Prices: Prices{"m1": {Input: 1, Output: 1}}}, 2},
		{"dollars without a price never stop", Budget{MaxUSD: 0.002}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Meter{}
			s := &spender{meter: m, usage: Usage{PromptTokens: 900, CompletionTokens: 100, TotalTokens: 1000}}
			c := WithBudget(s, m, tt.budget)
			var refused int
			for range 10 {
				_, err := c.Complete(context.Background(), Request{Stage: "classify"})
				if errors.Is(err, ErrBudget) {
					refused++
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if s.calls != tt.wantCalls || refused != 10-tt.wantCalls {
				t.Errorf("%d calls, %d refused; want %d calls", s.calls, refused, tt.wantCalls)
			}
		})
	}
}
