package topics

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/llm"
)

func TestHeuristicTag(t *testing.T) {
	tests := []struct {
		name string
		in   TagInput
		want string
	}{
		{"shared pair before its words", TagInput{
			Supporting: []string{"Span-Level Abstention for Retrieval-Augmented Question Answering", "Clause-Level Attribution and Abstention for Long-Form Answers"},
			Background: []string{"Reading with Receipts: Evidence-Linked Readers for Open-Domain Question Answering", "Abstain or Hedge"},
		}, "Question Answering, Abstention"},
		{"stop-words and numbers never count", TagInput{
			Supporting: []string{"A Study of the 2024 Approach", "The 2024 Approach: A New Study", "Epidemic Thresholds on Networks"},
			Background: []string{"Epidemic Thresholds Revisited", "Networks of Contacts"},
		}, "Epidemic Thresholds, Networks"},
		{"at most three terms, no word twice", TagInput{
			Supporting: []string{"Graph Neural Networks for Molecules", "Graph Neural Networks for Proteins", "Molecules and Proteins"},
			Background: []string{"Neural Networks", "Graph Kernels for Molecules"},
		}, "Neural Networks, Graph, Molecules"},
		{"accents and LaTeX fold", TagInput{
			Supporting: []string{`Erd\H{o}s-R\'enyi Graphs with Memory`, "Erdős–Rényi graphs"},
		}, "Erdos Renyi, Graphs"},
		{"no shared term: category and first title", TagInput{
			Category:   "cs.CL",
			Supporting: []string{"Zebra Finches Sing", "Abstention in Readers"},
		}, "cs.CL Abstention Readers"},
		{"nothing at all", TagInput{}, "Untitled topic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HeuristicTag(tt.in); got != tt.want {
				t.Errorf("HeuristicTag = %q, want %q", got, tt.want)
			}
			// The order of the titles does not matter.
			rev := TagInput{Category: tt.in.Category}
			for i := len(tt.in.Supporting) - 1; i >= 0; i-- {
				rev.Supporting = append(rev.Supporting, tt.in.Supporting[i])
			}
			for i := len(tt.in.Background) - 1; i >= 0; i-- {
				rev.Background = append(rev.Background, tt.in.Background[i])
			}
			if got := HeuristicTag(rev); got != tt.want {
				t.Errorf("reversed titles: HeuristicTag = %q, want %q", got, tt.want)
			}
		})
	}
}

// fakeLLM answers every request with answer (or err) and keeps the
// requests.
type fakeLLM struct {
	answer string
	err    error
	reqs   []llm.Request
}

func (f *fakeLLM) Model() string { return "fake-1" }

func (f *fakeLLM) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return nil, f.err
	}
	raw := json.RawMessage(f.answer)
	if err := req.Schema.Validate(raw); err != nil {
		return nil, &llm.InvalidError{Stage: req.Stage, Model: "fake-1", Attempts: 1, Reason: err.Error(), Raw: f.answer}
	}
	if err := req.Validate(raw); err != nil {
		return nil, &llm.InvalidError{Stage: req.Stage, Model: "fake-1", Attempts: 1, Reason: err.Error(), Raw: f.answer}
	}
	return &llm.Response{JSON: raw, Model: "fake-1"}, nil
}

func TestWriteTag(t *testing.T) {
	in := TagInput{Category: "cs.CL", Supporting: []string{"Span-Level Abstention", "Clause-Level Abstention"}, Background: []string{"Abstain or Hedge"}}
	version, err := TagPromptVersion()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		c        *fakeLLM
		model    string
		want     Tag
		fallback bool
		err      bool
	}{
		{"model", &fakeLLM{answer: `{"tag": "  Abstention in  question answering. "}`}, "fake-1",
			Tag{Text: "Abstention in question answering", Model: "fake-1", PromptVersion: version}, false, false},
		{"heuristic model asks nothing", &fakeLLM{}, llm.HeuristicModel,
			Tag{Text: "Abstention", Model: llm.HeuristicModel, PromptVersion: HeuristicTagVersion}, false, false},
		{"invalid answer falls back", &fakeLLM{answer: `{"tag": "one two three four five six seven eight nine ten eleven"}`}, "fake-1",
			Tag{Text: "Abstention", Model: llm.HeuristicModel, PromptVersion: HeuristicTagVersion}, true, false},
		{"two lines fall back", &fakeLLM{answer: `{"tag": "Abstention\nin QA"}`}, "fake-1",
			Tag{Text: "Abstention", Model: llm.HeuristicModel, PromptVersion: HeuristicTagVersion}, true, false},
		{"endpoint errors are errors", &fakeLLM{err: &llm.APIError{Stage: StageName, Model: "fake-1", Status: 401, Message: "no key"}}, "fake-1",
			Tag{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := WriteTag(context.Background(), tt.c, tt.model, in)
			if tt.err {
				var ae *llm.APIError
				if !errors.As(err, &ae) {
					t.Fatalf("err %v, want the APIError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.Fallback != "") != tt.fallback {
				t.Errorf("fallback %q, want one: %v", got.Fallback, tt.fallback)
			}
			got.Fallback = ""
			if got != tt.want {
				t.Errorf("tag %+v, want %+v", got, tt.want)
			}
			if llm.IsHeuristic(tt.model) {
				if len(tt.c.reqs) != 0 {
					t.Errorf("the heuristic asked the model")
				}
				return
			}
			r := tt.c.reqs[0]
			if r.Stage != StageName || r.PromptVersion != version || !strings.Contains(r.User, "Span-Level Abstention") || !strings.Contains(r.User, "Abstain or Hedge") || !strings.Contains(r.User, "cs.CL") {
				t.Errorf("request: stage %q version %q user %q", r.Stage, r.PromptVersion, r.User)
			}
		})
	}
}
