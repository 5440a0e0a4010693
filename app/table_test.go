package app

import (
	"errors"
	"slices"
	"testing"
)

// The table is consistent: names are unique, every stage needs only
// stages before it and reads only kinds an earlier stage writes, every
// per-target stage has a pool, and the dataset reads what they write.
func TestStageTable(t *testing.T) {
	written := map[string]bool{}
	seen := map[string]bool{}
	for _, s := range Stages() {
		if seen[s.Name] {
			t.Errorf("stage %s declared twice", s.Name)
		}
		if s.About == "" {
			t.Errorf("stage %s has no About line", s.Name)
		}
		for _, n := range s.Before {
			if !seen[n] {
				t.Errorf("stage %s needs %s, which does not come before it", s.Name, n)
			}
		}
		for _, k := range s.Reads {
			if !written[k] {
				t.Errorf("stage %s reads %s, which no earlier stage writes", s.Name, k)
			}
		}
		seen[s.Name] = true
		for _, k := range s.Writes {
			written[k] = true
		}
	}
	for _, s := range PerTarget() {
		if s.Workers < 1 {
			t.Errorf("per-target stage %s has a pool of %d", s.Name, s.Workers)
		}
	}
	if n := Names(); n[len(n)-1] != Dataset {
		t.Errorf("stages %q: the dataset is not last", n)
	}
}

// The table of stages whose item is not a target declares each like the
// per-target table does, under names of its own.
func TestCorpusTable(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		seen[n] = true
	}
	for _, d := range CorpusStages() {
		if d.Name == "" || seen[d.Name] || d.About == "" {
			t.Errorf("corpus stage %+v: no name, a name taken, or no About line", d)
		}
		seen[d.Name] = true
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
		{[]string{"citegraph"}, []string{"fetch", "citegraph"}},
		{[]string{"summarize"}, []string{"versions", "sources", "pdfs", "summarize"}},
		{[]string{"summarize", "fetch"}, []string{"fetch", "versions", "sources", "pdfs", "summarize"}},
		{[]string{"classify"}, []string{"classify"}},
	}
	for _, tt := range tests {
		if got := WithNeeds(tt.in...); !slices.Equal(got, tt.want) {
			t.Errorf("WithNeeds(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
