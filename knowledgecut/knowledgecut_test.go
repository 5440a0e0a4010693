package knowledgecut_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// history builds a history of versions dated as given (v1 first).
func history(id string, dates ...string) record.PaperVersions {
	v := record.PaperVersions{ID: id}
	for i, d := range dates {
		v.Versions = append(v.Versions, record.PaperVersion{Version: i + 1, Date: day(d)})
	}
	return v
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]knowledgecut.Mode{"": knowledgecut.Flag, "flag": knowledgecut.Flag, "strict": knowledgecut.Strict, "off": knowledgecut.Off} {
		if got, err := knowledgecut.ParseMode(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Strict", "on", "none", " flag"} {
		if _, err := knowledgecut.ParseMode(in); err == nil || !strings.Contains(err.Error(), "want strict, flag or off") || !strings.Contains(err.Error(), in) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestCutoff(t *testing.T) {
	got, err := knowledgecut.Cutoff(history("2503.00001", "2025-03-10T17:30:00Z", "2025-06-01T09:00:00Z"))
	if err != nil || !got.Equal(day("2025-03-10T17:30:00Z")) {
		t.Errorf("cutoff %s %v, want v1's date", got, err)
	}
	noV1 := record.PaperVersions{ID: "2503.00001", Versions: []record.PaperVersion{{Version: 2, Date: day("2025-06-01T09:00:00Z")}}}
	if _, err := knowledgecut.Cutoff(noV1); !errors.Is(err, record.ErrNoV1) || !strings.Contains(err.Error(), "2503.00001") {
		t.Errorf("no v1: %v", err)
	}
	p, err := knowledgecut.PinTarget(history("2503.00001", "2025-03-10T17:30:00Z", "2025-06-01T09:00:00Z"))
	if err != nil || p.Version != 1 || !p.Later || p.Latest != 2 || p.FirstAfter {
		t.Errorf("target pin %+v %v, want v1 with a later version", p, err)
	}
}

// TestPinAt: the last version dated on or before the cutoff, whether the
// source was revised after, whether it existed at all.
func TestPinAt(t *testing.T) {
	cutoff := day("2025-03-10T17:30:00Z")
	for _, tt := range []struct {
		name       string
		v          record.PaperVersions
		version    int
		later      bool
		firstAfter bool
		latest     int
	}{
		{"one version before", history("a", "2024-01-01T00:00:00Z"), 1, false, false, 1},
		{"all versions before", history("a", "2023-01-01T00:00:00Z", "2024-01-01T00:00:00Z"), 2, false, false, 2},
		{"revised after", history("a", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-05-01T00:00:00Z"), 2, true, false, 3},
		{"revised after v1", history("a", "2024-01-01T00:00:00Z", "2025-04-01T00:00:00Z"), 1, true, false, 2},
		{"dated at the cutoff exactly", history("a", "2024-01-01T00:00:00Z", "2025-03-10T17:30:00Z"), 2, false, false, 2},
		{"a second after", history("a", "2024-01-01T00:00:00Z", "2025-03-10T17:30:01Z"), 1, true, false, 2},
		{"same day, later hour", history("a", "2025-03-10T18:00:00Z"), 0, true, true, 1},
		{"first published after", history("a", "2025-04-01T00:00:00Z", "2025-05-01T00:00:00Z"), 0, true, true, 2},
	} {
		p, err := knowledgecut.PinAt(tt.v, cutoff)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if p.Version != tt.version || p.Later != tt.later || p.FirstAfter != tt.firstAfter || p.Latest != tt.latest {
			t.Errorf("%s: %+v, want version %d later %v first after %v latest %d", tt.name, p, tt.version, tt.later, tt.firstAfter, tt.latest)
		}
		if tt.version > 0 {
			if x, _ := tt.v.Version(tt.version); !p.Date.Equal(x.Date) {
				t.Errorf("%s: date %s, want v%d's %s", tt.name, p.Date, tt.version, x.Date)
			}
		}
	}
	if _, err := knowledgecut.PinAt(record.PaperVersions{ID: "a"}, cutoff); !errors.Is(err, record.ErrNoV1) {
		t.Errorf("empty history: %v", err)
	}
	if _, err := knowledgecut.PinAt(history("a", "2024-01-01T00:00:00Z"), time.Time{}); err == nil {
		t.Error("no cutoff: no error")
	}
}

// partial builds a history known in part, as an arXiv API entry gives
// one: v1 and version n, dated as given, the versions between missing.
func partial(id string, v1 string, n int, latest string) record.PaperVersions {
	return record.PaperVersions{ID: id, Partial: true, Versions: []record.PaperVersion{{Version: 1, Date: day(v1)}, {Version: n, Date: day(latest)}}}
}

// TestPinAtGaps: a history known in part pins only where what it lacks
// cannot change the pin: a cutoff before v1 (no source), at v1's date
// exactly or on or after the latest version's (every missing version is
// dated strictly between its neighbours); a cutoff strictly between a
// listed version and the next listed one, with versions missing between
// them, is refused with ErrUnknownGap, naming the paper and the versions
// not known. A complete history of the same dates pins anywhere.
func TestPinAtGaps(t *testing.T) {
	v4 := partial("2401.00042", "2024-01-10T12:00:00Z", 4, "2025-06-01T08:00:00Z")
	v3 := record.PaperVersions{ID: "2401.00043", Partial: true, Versions: []record.PaperVersion{
		{Version: 1, Date: day("2024-01-10T12:00:00Z")}, {Version: 2, Date: day("2024-05-01T00:00:00Z")}, {Version: 4, Date: day("2025-06-01T08:00:00Z")}}}
	for _, tt := range []struct {
		name       string
		v          record.PaperVersions
		cutoff     string
		version    int // -1: refused
		firstAfter bool
	}{
		{"before v1", v4, "2024-01-01T00:00:00Z", 0, true},
		{"at v1's date exactly", v4, "2024-01-10T12:00:00Z", 1, false},
		{"a second after v1", v4, "2024-01-10T12:00:01Z", -1, false},
		{"between v1 and the latest", v4, "2024-09-01T00:00:00Z", -1, false},
		{"a second before the latest", v4, "2025-06-01T07:59:59Z", -1, false},
		{"at the latest's date", v4, "2025-06-01T08:00:00Z", 4, false},
		{"after the latest", v4, "2026-01-01T00:00:00Z", 4, false},
		{"between v1 and v2, both known", v3, "2024-03-01T00:00:00Z", 1, false},
		{"at v2, v3 missing after it", v3, "2024-05-01T00:00:00Z", 2, false},
		{"after v2, v3 missing", v3, "2024-06-01T00:00:00Z", -1, false},
		{"after the latest, v3 missing before it", v3, "2025-07-01T00:00:00Z", 4, false},
	} {
		p, err := knowledgecut.PinAt(tt.v, day(tt.cutoff))
		if tt.version < 0 {
			if !errors.Is(err, knowledgecut.ErrUnknownGap) || !strings.Contains(err.Error(), tt.v.ID) || !strings.Contains(err.Error(), "v3") {
				t.Errorf("%s: %+v %v, want ErrUnknownGap naming %s and v3", tt.name, p, err, tt.v.ID)
			}
			continue
		}
		if err != nil || p.Version != tt.version || p.FirstAfter != tt.firstAfter || p.Latest != 4 || p.Later != (tt.version < 4) {
			t.Errorf("%s: %+v %v, want v%d (first after %v) of latest v4", tt.name, p, err, tt.version, tt.firstAfter)
		}
	}
	// The target's own pin is v1 at its own cutoff, known in part or not.
	if p, err := knowledgecut.PinTarget(v4); err != nil || p.Version != 1 || !p.Later || p.Latest != 4 {
		t.Errorf("target known in part: %+v %v, want v1 of latest v4", p, err)
	}
	full := history("2401.00042", "2024-01-10T12:00:00Z", "2024-05-01T00:00:00Z", "2024-11-01T00:00:00Z", "2025-06-01T08:00:00Z")
	if p, err := knowledgecut.PinAt(full, day("2024-09-01T00:00:00Z")); err != nil || p.Version != 2 {
		t.Errorf("complete history: %+v %v, want v2", p, err)
	}
	// A list with versions missing that does not say so is refused.
	unmarked := v4
	unmarked.Partial = false
	if _, err := knowledgecut.PinAt(unmarked, day("2026-01-01T00:00:00Z")); err == nil || !strings.Contains(err.Error(), "not marked partial") {
		t.Errorf("versions missing, not marked partial: %v", err)
	}
}

// TestDecide: the modes on every kind of source, and what a dataset card
// counts of them.
func TestDecide(t *testing.T) {
	cutoff := day("2025-03-10T17:30:00Z")
	unrevised := history("u", "2024-01-01T00:00:00Z")
	revised := history("r", "2024-01-01T00:00:00Z", "2025-05-01T00:00:00Z")
	late := history("l", "2025-04-01T00:00:00Z")
	type src struct {
		name string
		v    record.PaperVersions
		used int // 0: nothing read
	}
	sources := []src{
		{"unrevised", unrevised, 1},
		{"revised, read pinned", revised, 1},
		{"revised, read as served now", revised, 2},
		{"first published after", late, 0},
	}
	for _, tt := range []struct {
		mode    knowledgecut.Mode
		keep    []bool
		dropped []string
		counts  knowledgecut.Counts
	}{
		{knowledgecut.Flag, []bool{true, true, true, false}, []string{"", "", "", knowledgecut.DroppedFirstAfter},
			knowledgecut.Counts{Pinned: 2, Older: 1, RevisedAfter: 1, DroppedFirstAfter: 1}},
		{knowledgecut.Strict, []bool{true, true, false, false}, []string{"", "", knowledgecut.DroppedAfterCutoff, knowledgecut.DroppedFirstAfter},
			knowledgecut.Counts{Pinned: 2, Older: 1, DroppedAfterCutoff: 1, DroppedFirstAfter: 1}},
		{knowledgecut.Off, []bool{true, true, true, true}, []string{"", "", "", ""},
			knowledgecut.Counts{Pinned: 2, Older: 1, RevisedAfter: 2}},
	} {
		var c knowledgecut.Counts
		for i, s := range sources {
			pin, err := knowledgecut.PinAt(s.v, cutoff)
			if err != nil {
				t.Fatal(err)
			}
			var read knowledgecut.Read
			used := s.used
			if tt.mode == knowledgecut.Off && used == 0 {
				used = pin.Latest // off reads as served now
			}
			if used > 0 {
				if read, err = knowledgecut.ReadAt(s.v, used, cutoff); err != nil {
					t.Fatal(err)
				}
			}
			d := knowledgecut.Decide(tt.mode, pin, read)
			if d.Keep != tt.keep[i] || d.Dropped != tt.dropped[i] {
				t.Errorf("%s, %s: %+v, want keep %v dropped %q", tt.mode, s.name, d, tt.keep[i], tt.dropped[i])
			}
			if d.Keep && (d.Read.Version != used || d.Read.RevisedAfterCutoff != d.Read.VersionDate.After(cutoff)) {
				t.Errorf("%s, %s: read %+v", tt.mode, s.name, d.Read)
			}
			c.Add(pin, d)
		}
		if c != tt.counts {
			t.Errorf("%s: counts %+v, want %+v", tt.mode, c, tt.counts)
		}
	}
	if _, err := knowledgecut.ReadAt(revised, 3, cutoff); err == nil || !strings.Contains(err.Error(), "v3") {
		t.Errorf("a version the history lacks: %v", err)
	}
}

// TestCheck: the dataset's check refuses, under strict only, a kept
// source dated after its cutoff or not dated.
func TestCheck(t *testing.T) {
	cutoff := day("2025-03-10T17:30:00Z")
	for _, tt := range []struct {
		mode  knowledgecut.Mode
		date  time.Time
		wrong bool
	}{
		{knowledgecut.Strict, day("2025-03-10T17:30:00Z"), false},
		{knowledgecut.Strict, day("2025-01-01T00:00:00Z"), false},
		{knowledgecut.Strict, day("2025-03-10T17:30:01Z"), true},
		{knowledgecut.Strict, time.Time{}, true},
		{knowledgecut.Flag, day("2026-01-01T00:00:00Z"), false},
		{knowledgecut.Off, day("2026-01-01T00:00:00Z"), false},
	} {
		err := knowledgecut.Check(tt.mode, cutoff, tt.date)
		if (err != nil) != tt.wrong || err != nil && !errors.Is(err, knowledgecut.ErrAfterCutoff) {
			t.Errorf("%s %s: %v, want an error %v", tt.mode, tt.date, err, tt.wrong)
		}
	}
}

// TestWorld applies the rule to the simulated world's version histories:
// the source revised after its target is pinned to its earlier version,
// the source first published after its target is dropped, and no kept
// source is read after the cutoff under strict.
func TestWorld(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 30, Revisions: true, RevisedSource: []int{5}, LateSource: []int{6}})
	if err != nil {
		t.Fatal(err)
	}
	historyOf := func(p sim.Paper) record.PaperVersions {
		v := record.PaperVersions{ID: p.ArxivID}
		for i, d := range p.Versions {
			v.Versions = append(v.Versions, record.PaperVersion{Version: i + 1, Date: d})
		}
		return v
	}
	for _, tc := range []struct {
		target int
		want   func(knowledgecut.Counts) bool
	}{
		{5, func(c knowledgecut.Counts) bool { return c.Older >= 1 && c.DroppedFirstAfter == 0 }},
		{6, func(c knowledgecut.Counts) bool { return c.DroppedFirstAfter == 1 }},
	} {
		target := w.Target(tc.target)
		cutoff, err := knowledgecut.Cutoff(historyOf(target))
		if err != nil {
			t.Fatal(err)
		}
		var c knowledgecut.Counts
		for _, ref := range w.References(&target) {
			if ref.Role != sim.RoleSource || ref.Paper.ArxivID == "" {
				continue
			}
			src, _ := w.ByArxiv(ref.Paper.ArxivID)
			pin, err := knowledgecut.PinAt(historyOf(src), cutoff)
			if err != nil {
				t.Fatal(err)
			}
			var read knowledgecut.Read
			if !pin.FirstAfter {
				if read, err = knowledgecut.ReadAt(historyOf(src), pin.Version, cutoff); err != nil {
					t.Fatal(err)
				}
			}
			d := knowledgecut.Decide(knowledgecut.Strict, pin, read)
			if d.Keep {
				if err := knowledgecut.Check(knowledgecut.Strict, cutoff, d.Read.VersionDate); err != nil {
					t.Errorf("target %d source %s: %v", tc.target, src.ArxivID, err)
				}
			}
			c.Add(pin, d)
		}
		if !tc.want(c) {
			t.Errorf("target %d: counts %+v", tc.target, c)
		}
	}
}

func TestUnknownStands(t *testing.T) {
	cutoff := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name   string
		asOf   time.Time
		cutoff time.Time
		want   bool
	}{
		{"answered a week after", cutoff.Add(knowledgecut.UnknownLag), cutoff, true},
		{"answered a year after", cutoff.AddDate(1, 0, 0), cutoff, true},
		{"answered the next day", cutoff.Add(24 * time.Hour), cutoff, false},
		{"answered before the cutoff", cutoff.Add(-time.Hour), cutoff, false},
		{"not an answer of no record", time.Time{}, cutoff, false},
		{"no cutoff", cutoff, time.Time{}, false},
	} {
		if got := knowledgecut.UnknownStands(record.PaperPin{Unknown: "no record", UnknownAsOf: tt.asOf}, tt.cutoff); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
