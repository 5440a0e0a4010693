package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t.Add(12 * time.Hour)
}

// history is a paper's versions at the given days.
func history(id string, days ...string) []record.PaperVersion {
	var out []record.PaperVersion
	for i, d := range days {
		out = append(out, record.PaperVersion{Version: i + 1, Date: day(d)})
	}
	return out
}

// cutTarget is a train target (cutoff 2024-06-10) read at v2, its v1
// having had no HTML, with sources of every kind the cut tells apart:
//
//	bib.bib1  one version, before the cutoff: pinned
//	bib.bib2  revised after the cutoff, read at its pinned v1
//	bib.bib3  revised after the cutoff, read at v2 (v1 had no text)
//	bib.bib4  first published after the cutoff, carded (as under off)
//	bib.bib5  first published after the cutoff, not carded; it is the
//	          test target 2603.00005
//	bib.bib6  not on arXiv: no versions
func cutTarget() TargetInputs {
	id := "2406.00001"
	specs := []srcSpec{
		{key: "bib.bib1", arxiv: "2301.00011", title: "Source one"},
		{key: "bib.bib2", arxiv: "2302.00012", title: "Source two"},
		{key: "bib.bib3", arxiv: "2303.00013", title: "Source three"},
		{key: "bib.bib4", arxiv: "2409.00014", title: "Source four"},
		{key: "bib.bib5", arxiv: "2603.00005", title: "The later test paper", noCard: true},
		{key: "bib.bib6", doi: "10.1000/j.6", title: "A journal paper"},
	}
	t := makeTargetWith(id, "2024-06-10", "cs.CL", specs)
	t.GoldVersion = 2
	versions := map[string]int{"bib.bib1": 1, "bib.bib2": 1, "bib.bib3": 2, "bib.bib4": 1}
	for i := range t.Sources {
		t.Sources[i].Version = versions[t.Sources[i].RefKey]
	}
	cutoff := day("2024-06-10")
	pin := func(key, arxivID string, days ...string) record.SourcePin {
		h := record.PaperVersions{ID: arxivID, Versions: history(arxivID, days...)}
		p, err := knowledgecut.PinAt(h, cutoff)
		if err != nil {
			panic(err)
		}
		return record.SourcePin{RefKey: key, PaperPin: record.PaperPin{ArxivID: arxivID, Pin: &p, Versions: h.Versions}}
	}
	th := record.PaperVersions{ID: id, Versions: history(id, "2024-06-10", "2024-09-01")}
	tp, _ := knowledgecut.PinTarget(th)
	t.Cut = &record.KnowledgeCut{Target: id, Cutoff: cutoff, TargetPin: record.PaperPin{ArxivID: id, Pin: &tp, Versions: th.Versions},
		Sources: []record.SourcePin{
			pin("bib.bib1", "2301.00011", "2023-01-05"),
			pin("bib.bib2", "2302.00012", "2023-02-05", "2024-08-01"),
			pin("bib.bib3", "2303.00013", "2023-03-05", "2024-08-02"),
			pin("bib.bib4", "2409.00014", "2024-09-05"),
			pin("bib.bib5", "2603.00005", "2026-03-03"),
		}}
	return t
}

// TestKnowledgeCutModes: the instance records the cutoff and the versions
// read; a source first published after the cutoff is never a source
// (unless off), whether carded or not; flag keeps a source read after
// the cutoff and marks it, strict drops it; a source not on arXiv is kept
// with no version; off records versions without a cutoff.
func TestKnowledgeCutModes(t *testing.T) {
	type src struct {
		version, date string
		revised       bool
	}
	for _, tc := range []struct {
		mode    knowledgecut.Mode
		cutoff  string
		sources map[string]src
		cut     map[string]string // ref key -> why
	}{
		{knowledgecut.Flag, "2024-06-10",
			map[string]src{"bib.bib1": {"v1", "2023-01-05", false}, "bib.bib2": {"v1", "2023-02-05", false}, "bib.bib3": {"v2", "2024-08-02", true}, "bib.bib6": {}},
			map[string]string{"bib.bib4": knowledgecut.DroppedFirstAfter, "bib.bib5": knowledgecut.DroppedFirstAfter}},
		{knowledgecut.Strict, "2024-06-10",
			map[string]src{"bib.bib1": {"v1", "2023-01-05", false}, "bib.bib2": {"v1", "2023-02-05", false}, "bib.bib6": {}},
			map[string]string{"bib.bib3": knowledgecut.DroppedAfterCutoff, "bib.bib4": knowledgecut.DroppedFirstAfter, "bib.bib5": knowledgecut.DroppedFirstAfter}},
		{knowledgecut.Off, "",
			map[string]src{"bib.bib1": {"v1", "2023-01-05", false}, "bib.bib2": {"v1", "2023-02-05", false}, "bib.bib3": {"v2", "2024-08-02", false}, "bib.bib4": {"v1", "2024-09-05", false}, "bib.bib6": {}},
			nil},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			opts := fixedOptions()
			opts.KnowledgeCut = tc.mode
			ins, dropped, err := Consolidate([]TargetInputs{cutTarget()}, opts)
			if err != nil || len(ins) != 1 {
				t.Fatalf("consolidate: %v, %d instances, dropped %+v", err, len(ins), dropped)
			}
			in := ins[0]
			if in.KnowledgeCutoff != tc.cutoff || in.Target.Version != "v2" || in.Target.VersionDate != "2024-09-01" {
				t.Errorf("cutoff %q, target %s %s", in.KnowledgeCutoff, in.Target.Version, in.Target.VersionDate)
			}
			got := map[string]src{}
			for _, s := range in.Sources {
				got[s.RefKey] = src{s.Version, s.VersionDate, s.RevisedAfterCutoff}
			}
			if len(got) != len(tc.sources) {
				t.Errorf("sources %+v, want %+v", got, tc.sources)
			}
			for k, want := range tc.sources {
				if got[k] != want {
					t.Errorf("%s: %+v, want %+v", k, got[k], want)
				}
			}
			if len(in.CutSources) != len(tc.cut) {
				t.Errorf("cut %+v, want %v", in.CutSources, tc.cut)
			}
			for _, c := range in.CutSources {
				if tc.cut[c.RefKey] != c.Dropped || c.Known != (c.Dropped == knowledgecut.DroppedFirstAfter) {
					t.Errorf("cut %+v, want %q (known: the target was read after its cutoff)", c, tc.cut[c.RefKey])
				}
			}
		})
	}
}

// TestKnowledgeCutStrictUnknown: under strict, a source whose history,
// or whose target's, is unknown is not shown to be of the time: dropped
// (version_unknown); under flag it is kept without a date.
func TestKnowledgeCutStrictUnknown(t *testing.T) {
	tgt := makeTarget("2401.00001", "2024-01-10", "cs.CL", 4)
	for i := range tgt.Sources {
		tgt.Sources[i].Version = 1
	}
	opts := fixedOptions()
	opts.KnowledgeCut = knowledgecut.Strict
	_, dropped, _ := Consolidate([]TargetInputs{tgt}, opts)
	if len(dropped) != 1 || dropped[0].Reason != DropFewSources || !strings.Contains(dropped[0].Detail, "by the knowledge cut") {
		t.Errorf("strict without a cut: %+v", dropped)
	}
	opts.KnowledgeCut = knowledgecut.Flag
	ins, _, _ := Consolidate([]TargetInputs{tgt}, opts)
	if len(ins) != 1 || len(ins[0].Sources) != 4 || ins[0].Sources[0].Version != "v1" || ins[0].Sources[0].VersionDate != "" || ins[0].KnowledgeCutoff != "" {
		t.Errorf("flag without a cut: %+v", ins)
	}
}

// TestKnowledgeCutContamination: a source cut from a train target read
// after its cutoff, which is a test target, still contaminates the
// instance (its text and gold card know the test target); cut from a
// target read at v1, it does not.
func TestKnowledgeCutContamination(t *testing.T) {
	tgts := []TargetInputs{cutTarget(), makeTarget("2603.00005", "2026-03-03", "q-bio.NC", 4)}
	opts := fixedOptions()
	r := mustBuild(t, tgts, opts)
	if r.Contamination.Counts[KindTestTargetAsSource] != 1 || len(r.Dropped) != 1 || r.Dropped[0].TargetID != "2406.00001" {
		t.Errorf("read after the cutoff: contamination %v, dropped %+v", r.Contamination.Counts, r.Dropped)
	}
	tgts = []TargetInputs{cutTarget(), makeTarget("2603.00005", "2026-03-03", "q-bio.NC", 4)}
	tgts[0].GoldVersion = 1
	r = mustBuild(t, tgts, opts)
	if r.Contamination.Counts[KindTestTargetAsSource] != 0 || len(r.Dropped) != 0 {
		t.Errorf("read at v1: contamination %v, dropped %+v", r.Contamination.Counts, r.Dropped)
	}
}

// TestCheckKnowledgeCut: a strict dataset passes --check, and the card
// says what the cut did; a source planted with a version dated after its
// instance's cutoff, the manifest rewritten to match, fails it, as does
// one whose date was removed. Under flag the same row passes.
func TestCheckKnowledgeCut(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []knowledgecut.Mode{knowledgecut.Strict, knowledgecut.Flag} {
		opts := fixedOptions()
		opts.KnowledgeCut = mode
		tgts := append(corpus()[:2], cutTarget())
		tgts[2].GoldVersion = 1
		r := mustBuild(t, tgts, opts)
		dir := filepath.Join(t.TempDir(), "ds")
		writeTestDataset(t, dir, r, WriteOptions{})
		if rep, err := Check(ctx, dir); err != nil || !rep.OK() {
			t.Fatalf("%s: a clean dataset: %v %+v", mode, err, rep)
		}
		card := readFile(t, filepath.Join(dir, ReadmeFile))
		if !strings.Contains(card, "Knowledge cut: `"+string(mode)+"`") || !strings.Contains(card, "first published after the cutoff 2") ||
			!strings.Contains(card, "`knowledge_cutoff`") {
			t.Errorf("%s: the card's knowledge cut:\n%s", mode, card)
		}
		for _, plant := range []struct{ name, date, problem string }{
			{"after", "2024-07-01", "after the knowledge cutoff"},
			{"undated", "", "missing"},
		} {
			pdir := filepath.Join(t.TempDir(), "ds")
			writeTestDataset(t, pdir, r, WriteOptions{})
			doctor(t, pdir, trainShard, func(rows []record.Instance) []record.Instance {
				for i := range rows {
					if rows[i].Target.ArxivID == "2406.00001" {
						rows[i].Sources[0].VersionDate = plant.date
					}
				}
				return rows
			})
			remanifest(t, pdir)
			rep, err := Check(ctx, pdir)
			if mode == knowledgecut.Flag {
				if err != nil {
					t.Errorf("flag, planted %s: %v", plant.name, err)
				}
				continue
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(strings.Join(rep.Problems, "\n"), plant.problem) ||
				!strings.Contains(strings.Join(rep.Problems, "\n"), "2406.00001") {
				t.Errorf("strict, planted %s: %v, problems %q", plant.name, err, rep.Problems)
			}
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
