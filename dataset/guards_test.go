package dataset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGuards: a target whose text addresses a model, one no model was
// asked about for it, and one whose gold card is not grounded are held
// back, each with its own reason; the dataset card, guards.json and
// report.json count them, and the quotes the classifier dropped, over
// every target read. With IncludeSuspect they are published and counted
// as such, except the one never classified.
func TestGuards(t *testing.T) {
	targets := func() []TargetInputs {
		ts := corpus()
		planted := makeTarget("2401.00031", "2024-01-31", "cs.CL", 4)
		planted.Instructions = 2
		planted.Suspect = []string{"instruction_like_text: the paper addresses a model in 2 places"}
		held := makeTarget("2402.00032", "2024-02-01", "cs.CL", 4)
		held.NotClassified, held.Instructions = true, 1
		held.Suspect = []string{"instruction_like_text: the paper addresses a model in section 1"}
		ungrounded := makeTarget("2602.00033", "2026-02-02", "cs.LG", 4)
		ungrounded.GoldSuspect = []string{"ungrounded_gold: 8% of the gold card's 24 claim words occur in the paper's abstract and introduction, below 50%"}
		ts[0].QuotesNotCiting, ts[0].QuotesNotInPaper = 3, 1
		ts[1].QuotesNotCiting = 2
		return append(ts, planted, held, ungrounded)
	}

	r := mustBuild(t, targets(), fixedOptions())
	reasons := map[string]string{}
	for _, d := range r.Dropped {
		reasons[d.TargetID] = d.Reason + ": " + d.Detail
	}
	for id, want := range map[string]string{"2401.00031": DropInstructions, "2402.00032": DropInstructions, "2602.00033": DropUngrounded} {
		if !strings.HasPrefix(reasons[id], want+": ") || !strings.Contains(reasons[id], "--include-suspect") {
			t.Errorf("%s dropped for %q, want %s", id, reasons[id], want)
		}
	}
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{Report: true})
	readme, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
	for _, want := range []string{
		"## Instructions planted in papers", "Of the 8 targets read:",
		"- text addressing a model: 2 targets (3 passages), all held back",
		"- gold cards not grounded in their paper: 1, all held back",
		"- sources' quotes dropped: 5 in no sentence citing their reference, 1 not in the paper",
		"instruction_like_text 2", "ungrounded_gold 1",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	g, err := ReadGuards(out)
	if err != nil {
		t.Fatal(err)
	}
	want := Guards{Targets: 8, InstructionTargets: []string{"2401.00031", "2402.00032"}, InstructionPassages: 3,
		UngroundedGold: []string{"2602.00033"}, QuotesNotCiting: 5, QuotesNotInPaper: 1, Published: []string{}}
	if !guardsEqual(g, &want) {
		t.Errorf("guards.json %+v, want %+v", g, want)
	}
	var rep ReportData
	b, _ := os.ReadFile(filepath.Join(out, ReportJSON))
	if err := json.Unmarshal(b, &rep); err != nil || !guardsEqual(rep.Guards, &want) {
		t.Errorf("report.json guards %+v (%v)", rep.Guards, err)
	}
	// curate report rebuilds report.json from the files: the guards stay.
	p, err := ReadDataset(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ReportGuards(p.Instances, p.Dropped, p.Contamination, g, filepath.Join(t.TempDir(), "rep")); err != nil || !guardsEqual(d.Guards, &want) {
		t.Errorf("report from the files: %+v %v", d, err)
	}

	opts := fixedOptions()
	opts.IncludeSuspect = true
	r = mustBuild(t, targets(), opts)
	out = filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{})
	if g, _ = ReadGuards(out); g == nil || !slices.Equal(g.Published, []string{"2401.00031", "2602.00033"}) {
		t.Errorf("published with --include-suspect: %+v", g)
	}
	readme, _ = os.ReadFile(filepath.Join(out, ReadmeFile))
	for _, want := range []string{"(3 passages), 1 published by --include-suspect", "not grounded in their paper: 1, 1 published by --include-suspect"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	for _, d := range r.Dropped {
		if d.TargetID == "2402.00032" && (d.Reason != DropIncomplete || !strings.Contains(d.Detail, "not classified")) {
			t.Errorf("a target never classified, included: %+v", d)
		}
	}
}

func guardsEqual(a, b *Guards) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Targets == b.Targets && slices.Equal(a.InstructionTargets, b.InstructionTargets) && a.InstructionPassages == b.InstructionPassages &&
		slices.Equal(a.UngroundedGold, b.UngroundedGold) && a.QuotesNotCiting == b.QuotesNotCiting && a.QuotesNotInPaper == b.QuotesNotInPaper &&
		slices.Equal(a.Published, b.Published)
}
