package dataset

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// trainWithSource returns a train target whose third source is leak.
func trainWithSource(id string, leak srcSpec) TargetInputs {
	leak.key = "bib.leak"
	return makeTargetWith(id, "2025-05-05", "cs.CL", []srcSpec{
		{key: "bib.1", arxiv: "1801.00001", doi: "10.1/one", s2: "s2-one", title: "A first honest source paper"},
		{key: "bib.2", arxiv: "1801.00002", doi: "10.1/two", s2: "s2-two", title: "A second honest source paper"},
		leak,
		{key: "bib.4", arxiv: "1801.00004", doi: "10.1/four", s2: "s2-four", title: "A fourth honest source paper"},
	})
}

// testTarget is the test target every case leaks.
func testTarget() TargetInputs { return makeTarget("2601.00004", "2026-01-01", "cs.CL", 3) }

func TestCleanCorpusHasNoViolations(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	if n := len(r.Contamination.Violations); n != 0 {
		t.Fatalf("%d violations in a clean corpus: %+v", n, r.Contamination.Violations)
	}
	if got := countSplits(r.Instances); got != (SplitCounts{Train: 3, Test: 2}) {
		t.Errorf("counts %+v", got)
	}
}

func TestContaminationPaths(t *testing.T) {
	tt4 := testTarget()
	title := tt4.Graph.Meta.Title
	tests := []struct {
		name      string
		targets   []TargetInputs
		kind      string
		match     string
		dropped   string // instance the default policy drops
		remaining int
	}{
		{
			name:    "test target as train source by arXiv ID",
			targets: []TargetInputs{tt4, trainWithSource("2505.00001", srcSpec{arxiv: "2601.00004v2", title: "Preprint"})},
			kind:    KindTestTargetAsSource, match: MatchArxivID, dropped: "2505.00001",
		},
		{
			name:    "by DOI only",
			targets: []TargetInputs{tt4, trainWithSource("2505.00001", srcSpec{doi: "https://doi.org/10.48550/ARXIV.2601.00004", title: "Other words"})},
			kind:    KindTestTargetAsSource, match: MatchDOI, dropped: "2505.00001",
		},
		{
			name:    "by S2 paper ID only",
			targets: []TargetInputs{tt4, trainWithSource("2505.00001", srcSpec{s2: "s2-target-2601.00004", title: "Other words"})},
			kind:    KindTestTargetAsSource, match: MatchS2, dropped: "2505.00001",
		},
		{
			name:    "by normalized title only",
			targets: []TargetInputs{tt4, trainWithSource("2505.00001", srcSpec{title: "  " + strings.ToUpper(title) + "!  "})},
			kind:    KindTestTargetAsSource, match: MatchTitle, dropped: "2505.00001",
		},
		{
			name: "the same target twice as v1 and v2",
			targets: []TargetInputs{
				makeTarget("2401.00001v1", "2024-01-01", "cs.CL", 3),
				makeTarget("2401.00001v2", "2024-01-01", "cs.CL", 4),
			},
			kind: KindDuplicate, match: MatchArxivID, dropped: "2401.00001", remaining: 1,
		},
		{
			name: "the same target under two arXiv IDs sharing a DOI",
			targets: func() []TargetInputs {
				a, b := makeTarget("2401.00001", "2024-01-01", "cs.CL", 3), makeTarget("2402.00009", "2024-02-01", "cs.CL", 3)
				b.Graph.Meta.DOI = "10.18653/V1/2024.ACL-LONG.1"
				a.Graph.Meta.DOI = "doi:10.18653/v1/2024.acl-long.1"
				return []TargetInputs{a, b}
			}(),
			kind: KindDuplicate, match: MatchDOI, dropped: "2402.00009", remaining: 1,
		},
		{
			name: "the same target under another title spelling",
			targets: func() []TargetInputs {
				a, b := makeTarget("2401.00001", "2024-01-01", "cs.CL", 3), makeTarget("2402.00009", "2024-02-01", "cs.CL", 3)
				b.Graph.Meta.Title = "G\\\"{o}del meets " + a.Graph.Meta.Title
				a.Graph.Meta.Title = "Gödel Meets " + a.Graph.Meta.Title
				b.Graph.Meta.S2PaperID = ""
				return []TargetInputs{a, b}
			}(),
			kind: KindDuplicate, match: MatchTitle, dropped: "2402.00009", remaining: 1,
		},
		{
			name: "a test target that is also a train target",
			targets: func() []TargetInputs {
				tr := makeTarget("2512.00007", "2025-12-20", "cs.CL", 3)
				tr.Graph.Meta.S2PaperID = tt4.Graph.Meta.S2PaperID
				return []TargetInputs{tt4, tr}
			}(),
			kind: KindTestTargetInTrain, match: MatchS2, dropped: "2512.00007",
		},
		{
			name: "own gold pasted into a source card",
			targets: func() []TargetInputs {
				tr := makeTarget("2505.00002", "2025-05-05", "cs.CL", 4)
				tr.Sources[1].Card.Results = "As shown: " + tr.Gold.CoreClaim
				return []TargetInputs{tt4, tr}
			}(),
			kind: KindGoldInPrompt, match: "core_claim", dropped: "2505.00002",
		},
		{
			name: "own gold lightly edited in a source card",
			targets: func() []TargetInputs {
				tr := makeTarget("2505.00002", "2025-05-05", "cs.CL", 4)
				ws := strings.Fields(tr.Gold.Inspiration)
				for i := 5; i < len(ws); i += 12 {
					ws[i] = "CHANGED"
				}
				tr.Sources[0].Card.Takeaways = strings.Join(ws, " ")
				return []TargetInputs{tt4, tr}
			}(),
			kind: KindGoldInPrompt, match: "inspiration", dropped: "2505.00002",
		},
		{
			name: "a test gold in a train prompt",
			targets: func() []TargetInputs {
				tr := makeTarget("2505.00002", "2025-05-05", "cs.CL", 4)
				tr.Sources[2].Card.Results = tt4.Gold.ProblemGap
				return []TargetInputs{tt4, tr}
			}(),
			kind: KindGoldInPrompt, match: "problem_gap", dropped: "2505.00002",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustBuild(t, tt.targets, fixedOptions())
			c := r.Contamination
			if len(c.Violations) != 1 {
				t.Fatalf("%d violations, want 1: %+v", len(c.Violations), c.Violations)
			}
			v := c.Violations[0]
			if v.Kind != tt.kind || v.Match != tt.match || c.Counts[tt.kind] != 1 {
				t.Errorf("violation %+v, want kind %s match %s", v, tt.kind, tt.match)
			}
			if !strings.HasSuffix(v.Resolution, " "+tt.dropped) {
				t.Errorf("resolution %q, want %s dropped", v.Resolution, tt.dropped)
			}
			want := max(tt.remaining, 1)
			if len(r.Instances) != want {
				t.Errorf("%d instances kept, want %d", len(r.Instances), want)
			}
			for _, in := range r.Instances {
				if in.InstanceID == tt.dropped && (tt.kind != KindDuplicate) {
					t.Errorf("%s kept", tt.dropped)
				}
			}
			if i := slices.IndexFunc(r.Dropped, func(d Dropped) bool { return d.Reason == DropContaminated }); i < 0 || InstanceID(r.Dropped[i].TargetID) != tt.dropped {
				t.Errorf("dropped list %+v lacks %s", r.Dropped, tt.dropped)
			}
		})
	}
}

func TestTitleWithDifferentS2IsNotIdentity(t *testing.T) {
	tt4 := testTarget()
	tr := trainWithSource("2505.00001", srcSpec{title: tt4.Graph.Meta.Title, s2: "another-paper"})
	r := mustBuild(t, []TargetInputs{tt4, tr}, fixedOptions())
	if n := len(r.Contamination.Violations); n != 0 {
		t.Errorf("%d violations for an equal title of a different S2 paper: %+v", n, r.Contamination.Violations)
	}
}

func TestPolicies(t *testing.T) {
	leaky := func() []TargetInputs {
		return []TargetInputs{
			testTarget(),
			makeTarget("2603.00005", "2026-03-03", "cs.CL", 3),
			trainWithSource("2505.00001", srcSpec{arxiv: "2601.00004", title: "Preprint"}),
			makeTarget("2401.00001", "2024-01-01", "cs.CL", 3),
		}
	}
	tests := []struct {
		policy  Policy
		kept    []string
		dropped SplitCounts
		err     error
	}{
		{PolicyDropTrain, []string{"2401.00001", "2601.00004", "2603.00005"}, SplitCounts{Train: 1}, nil},
		{"", []string{"2401.00001", "2601.00004", "2603.00005"}, SplitCounts{Train: 1}, nil},
		{PolicyDropTest, []string{"2401.00001", "2505.00001", "2603.00005"}, SplitCounts{Test: 1}, nil},
		{PolicyFail, nil, SplitCounts{}, ErrContaminated},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			opts := fixedOptions()
			opts.Policy = tt.policy
			r, err := Build(leaky(), opts)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if r.Contamination.Counts[KindTestTargetAsSource] != 1 || r.Contamination.Dropped != tt.dropped {
				t.Errorf("report %+v", r.Contamination)
			}
			if err != nil {
				return
			}
			var got []string
			for _, in := range r.Instances {
				got = append(got, in.InstanceID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.kept) {
				t.Errorf("kept %v, want %v", got, tt.kept)
			}
			if r.Contamination.After != countSplits(r.Instances) {
				t.Errorf("after %+v, kept %+v", r.Contamination.After, countSplits(r.Instances))
			}
		})
	}
	if _, err := ParsePolicy("drop-everything"); err == nil {
		t.Error("ParsePolicy accepted an unknown policy")
	}
}

func TestLeakRuleThresholds(t *testing.T) {
	gold := text("gold-threshold", 40)
	ws := strings.Fields(gold)
	tests := []struct {
		name   string
		prompt string
		leak   bool
	}{
		{"unrelated", text("other", 200), false},
		{"verbatim", "intro " + gold + " outro", true},
		{"a 20-word passage", text("pad", 30) + " " + strings.Join(ws[10:30], " ") + " " + text("pad2", 30), true},
		{"a 12-word passage", text("pad", 30) + " " + strings.Join(ws[10:22], " ") + " " + text("pad2", 30), false},
		{"every twelfth word changed", strings.Join(replaceEvery(ws, 12), " "), true},
		{"every fourth word changed (a paraphrase, not a copy)", strings.Join(replaceEvery(ws, 4), " "), false},
	}
	ins := []record.Instance{{Gold: record.Card{Inspiration: gold}}}
	x := newLeakIndex(ins, func(int) bool { return true })
	for _, tt := range tests {
		hits := x.find(tt.prompt, nil, func(int) bool { return true })
		if got := len(hits) > 0; got != tt.leak {
			t.Errorf("%s: leak %v (%v), want %v", tt.name, got, hits, tt.leak)
		}
	}
}

func replaceEvery(ws []string, n int) []string {
	out := slices.Clone(ws)
	for i := n - 1; i < len(out); i += n {
		out[i] = "zzz"
	}
	return out
}
