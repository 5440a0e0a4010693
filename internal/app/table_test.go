package app

import (
	"errors"
	"slices"
	"testing"
)

// The table is consistent: names are unique, every stage needs only
// stages before it, reads only kinds an earlier stage writes, and every
// per-target stage has a runner.
func TestStageTable(t *testing.T) {
	written := map[string]bool{}
	seen := map[string]bool{}
	var a App
	for i, s := range Stages() {
		if seen[s.Name] {
			t.Errorf("stage %s declared twice", s.Name)
		}
		if s.About == "" {
			t.Errorf("stage %s has no About line", s.Name)
		}
		for _, n := range s.Needs {
			if !seen[n] {
				t.Errorf("stage %s needs %s, which does not come before it", s.Name, n)
			}
		}
		for _, k := range s.Reads {
			if !written[k] {
				t.Errorf("stage %s reads %s, which no earlier stage writes", s.Name, k)
			}
		}
		if s.PerTarget != (s.Workers > 0) {
			t.Errorf("stage %s: per target %v with %d workers", s.Name, s.PerTarget, s.Workers)
		}
		if s.PerTarget {
			if i > 0 && !Stages()[i-1].PerTarget {
				t.Errorf("per-target stage %s comes after the dataset", s.Name)
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("stage %s has no runner: %v", s.Name, r)
					}
				}()
				a.runner(s.Name)
			}()
		}
		seen[s.Name] = true
		for _, k := range s.Writes {
			written[k] = true
		}
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		dataset bool
		err     bool
	}{
		{nil, PerTargetNames(), true, false},
		{[]string{"summarize", "fetch"}, []string{"fetch", "summarize"}, false, false},
		{[]string{" classify ", "dataset"}, []string{"classify"}, true, false},
		{[]string{"dataset"}, nil, true, false},
		{[]string{"fetch", "bogus"}, nil, false, true},
	}
	for _, tt := range tests {
		got, dataset, err := Select(tt.in)
		if tt.err {
			if !errors.Is(err, ErrUsage) {
				t.Errorf("Select(%q): error %v, want a usage error", tt.in, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) || dataset != tt.dataset {
			t.Errorf("Select(%q) = %q, %v, %v; want %q, %v", tt.in, got, dataset, err, tt.want, tt.dataset)
		}
	}
}

func TestWithNeeds(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{Citegraph}, []string{Fetch, Citegraph}},
		{[]string{Summarize}, []string{Sources, PDFs, Summarize}},
		{[]string{Summarize, Fetch}, []string{Fetch, Sources, PDFs, Summarize}},
		{[]string{Classify}, []string{Classify}},
	}
	for _, tt := range tests {
		if got := WithNeeds(tt.in...); !slices.Equal(got, tt.want) {
			t.Errorf("WithNeeds(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
