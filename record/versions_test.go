package record

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPaperVersionsCheck(t *testing.T) {
	d := func(day int) time.Time { return time.Date(2024, 3, day, 12, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		name string
		v    PaperVersions
		want string // "" for none
		noV1 bool
	}{
		{"one version", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}}}, "", false},
		{"three versions", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {2, d(5)}, {3, d(9)}}}, "", false},
		{"no id", PaperVersions{Versions: []PaperVersion{{1, d(1)}}}, "without a paper id", false},
		{"empty", PaperVersions{ID: "2403.00001"}, "no v1", true},
		{"starts at v2", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{2, d(5)}}}, "no v1 (versions [v2])", true},
		{"repeated", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {1, d(2)}}}, "v1 listed after v1", false},
		{"out of order", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {3, d(2)}, {2, d(3)}}}, "v2 listed after v3", false},
		{"undated", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {2, time.Time{}}}}, "v2 has no date", false},
		{"known in part", PaperVersions{ID: "2403.00001", Partial: true, Versions: []PaperVersion{{1, d(1)}, {4, d(9)}}}, "", false},
		{"versions missing, not said", PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {4, d(9)}}}, "versions [2 3] are missing from a history not marked partial", false},
	} {
		err := tt.v.Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		case errors.Is(err, ErrNoV1) != tt.noV1:
			t.Errorf("%s: errors.Is(ErrNoV1) = %v", tt.name, !tt.noV1)
		}
	}
}

func TestPaperVersionsMissing(t *testing.T) {
	d := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		versions []int
		want     []int
	}{
		{[]int{1}, nil},
		{[]int{1, 2, 3}, nil},
		{[]int{1, 3}, []int{2}},
		{[]int{1, 2, 5}, []int{3, 4}},
		{[]int{1, 3, 5}, []int{2, 4}},
	} {
		v := PaperVersions{ID: "2403.00001"}
		for _, n := range tt.versions {
			v.Versions = append(v.Versions, PaperVersion{Version: n, Date: d})
		}
		if got := v.Missing(); !slices.Equal(got, tt.want) {
			t.Errorf("%v: missing %v, want %v", tt.versions, got, tt.want)
		}
	}
}

func TestPaperVersionsLookups(t *testing.T) {
	d := func(day int) time.Time { return time.Date(2024, 3, day, 12, 0, 0, 0, time.UTC) }
	v := PaperVersions{ID: "2403.00001", Versions: []PaperVersion{{1, d(1)}, {2, d(5)}, {4, d(9)}}}
	if f, ok := v.First(); !ok || f.Version != 1 {
		t.Errorf("First: %v %v", f, ok)
	}
	if l, ok := v.Latest(); !ok || l.Version != 4 {
		t.Errorf("Latest: %v %v", l, ok)
	}
	if x, ok := v.Version(2); !ok || !x.Date.Equal(d(5)) {
		t.Errorf("Version(2): %v %v", x, ok)
	}
	if _, ok := v.Version(3); ok {
		t.Error("Version(3) found in a history without v3")
	}
	if _, ok := (PaperVersions{}).Latest(); ok {
		t.Error("Latest of an empty history")
	}
	if _, ok := (PaperVersions{Versions: []PaperVersion{{2, d(5)}}}).First(); ok {
		t.Error("First of a history without v1")
	}
}
