package classify

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

func TestHeuristicHandPaper(t *testing.T) {
	doc, g := handPaper()
	meter := new(llm.Meter)
	out, err := (&Stage{Meter: meter}).Classify(t.Context(), doc, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Selections) != handEdges {
		t.Fatalf("%d selections for %d edges", len(out.Selections), handEdges)
	}
	if out.Model != llm.HeuristicModel || out.PromptVersion != HeuristicPromptVersion {
		t.Errorf("selections say model %q, prompt %q", out.Model, out.PromptVersion)
	}
	want := map[string]struct {
		labels []string
		quotes []string
	}{
		"bib.bib3": {[]string{"foundation", "extends"}, []string{sentBuildOn, sentExtends, sentRelSpars}},
		"bib.bib5": {[]string{"exposes_gap"}, []string{sentFails, sentUnlike}},
	}
	for _, sel := range out.Selections {
		if sel.Model != "heuristic" || sel.PromptVersion != "heuristic-v1" || sel.TargetID != "2601.00001" {
			t.Errorf("%s: model %q, prompt %q, target %q", sel.RefKey, sel.Model, sel.PromptVersion, sel.TargetID)
		}
		w, isSource := want[sel.RefKey]
		if !isSource {
			if sel.Role != record.RoleOther || len(sel.Labels) > 0 || len(sel.Quotes) > 0 {
				t.Errorf("%s: %s %v %q, want other without labels or quotes (%s)", sel.RefKey, sel.Role, sel.Labels, sel.Quotes, sel.Rationale)
			}
			continue
		}
		if sel.Role != record.RoleSource {
			t.Errorf("%s: role %s, want source (%s)", sel.RefKey, sel.Role, sel.Rationale)
			continue
		}
		if !slices.Equal(sel.Labels, w.labels) {
			t.Errorf("%s: labels %v, want %v", sel.RefKey, sel.Labels, w.labels)
		}
		if !slices.Equal(sel.Quotes, w.quotes) {
			t.Errorf("%s: quotes %q\nwant %q", sel.RefKey, sel.Quotes, w.quotes)
		}
	}
	if out.Sources != 2 || out.QuotesKept != 5 || out.QuotesDropped != 0 || len(out.Unquoted) != 0 {
		t.Errorf("sources %d, quotes kept %d dropped %d, unquoted %v", out.Sources, out.QuotesKept, out.QuotesDropped, out.Unquoted)
	}

	// The rationale names the evidence.
	r3 := out.Selections[2].Rationale
	for _, part := range []string{"Cited 3 times", "Introduction, Related Work and Method", "'we build on'", "'extends'"} {
		if !strings.Contains(r3, part) {
			t.Errorf("rationale of [3] %q lacks %q", r3, part)
		}
	}
	if r5 := out.Selections[4].Rationale; !strings.Contains(r5, "'however … fails'") || !strings.Contains(r5, "'unlike'") {
		t.Errorf("rationale of [5] = %q", r5)
	}
	for i, part := range map[int]string{
		6: "tool, dataset or benchmark", // [7] Adam
		7: "table row",                  // [8] the baseline
		8: "Not cited in the text; S2 marks it influential; S2 intents methodology; score 5.00, but no citing sentence of the page to quote.",
	} {
		if r := out.Selections[i].Rationale; !strings.Contains(r, part) {
			t.Errorf("rationale of edge %d = %q, want it to mention %q", i+1, r, part)
		}
	}

	// Edges without a bibliography key get their S2 ID.
	if k := out.Selections[8].RefKey; k != "s2:s2-influential" {
		t.Errorf("ref key of the S2-only edge = %q", k)
	}
	tallies := meter.Tallies()
	if len(tallies) != 1 || tallies[0].Stage != Name || tallies[0].Model != llm.HeuristicModel || tallies[0].Calls != 1 {
		t.Errorf("meter = %+v, want one heuristic answer for classify", tallies)
	}
}

// TestHeuristicNeverInvents: evidence that cannot be quoted from the page,
// however strong, never makes a source, and no source is chosen below the
// floor just to reach three.
func TestHeuristicNeverInvents(t *testing.T) {
	doc, g := handPaper()
	// Without the two clear sources nothing is left that deserves it.
	for i := range g.Edges {
		if k := g.Edges[i].RefKey; k != nil && (*k == "bib.bib3" || *k == "bib.bib5") {
			g.Edges[i].Contexts = nil
			g.Edges[i].RefKey = nil
		}
	}
	var mentions []record.Mention
	for _, m := range doc.Mentions {
		if !slices.Contains(m.RefKeys, "bib.bib3") && !slices.Contains(m.RefKeys, "bib.bib5") {
			mentions = append(mentions, m)
		}
	}
	doc.Mentions = mentions
	out, err := (&Stage{}).Classify(t.Context(), doc, g)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sources != 0 {
		for _, s := range out.Selections {
			if s.Role == record.RoleSource {
				t.Errorf("invented source %s: %s", s.RefKey, s.Rationale)
			}
		}
	}
}

// TestHeuristicFixtures classifies the references of every recorded page,
// linked from its bibliography alone as when S2 has no list.
func TestHeuristicFixtures(t *testing.T) {
	dir := fixtures.Dir(t, "arxiv-html")
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture pages in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			page, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := latexml.Parse(page, latexml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			edges, rep := citegraph.Link(doc.ID, doc, nil)
			g := &record.Graph{TargetID: doc.ID, S2Status: record.S2Withheld, Edges: edges, Report: rep}
			out, err := (&Stage{}).Classify(t.Context(), doc, g)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Selections) != len(edges) {
				t.Fatalf("%d selections for %d edges", len(out.Selections), len(edges))
			}
			keys := map[string]bool{}
			ver := NewVerifier(doc)
			for i, s := range out.Selections {
				if keys[s.RefKey] {
					t.Errorf("ref key %q twice", s.RefKey)
				}
				keys[s.RefKey] = true
				if e := edges[i]; e.RefKey != nil && *e.RefKey != s.RefKey {
					t.Errorf("selection %d has ref key %q, edge %q", i, s.RefKey, *e.RefKey)
				}
				if s.Model != "heuristic" || s.PromptVersion != "heuristic-v1" {
					t.Errorf("%s: model %q prompt %q", s.RefKey, s.Model, s.PromptVersion)
				}
				switch s.Role {
				case record.RoleSource:
					if len(s.Labels) == 0 || s.Rationale == "" || len(s.Quotes) == 0 {
						t.Errorf("source %s: labels %v, rationale %q, %d quotes", s.RefKey, s.Labels, s.Rationale, len(s.Quotes))
					}
				case record.RoleOther:
					if len(s.Labels) > 0 || len(s.Quotes) > 0 {
						t.Errorf("other %s has labels %v or quotes", s.RefKey, s.Labels)
					}
				default:
					t.Errorf("%s: role %q", s.RefKey, s.Role)
				}
				for _, q := range s.Quotes {
					if got, ok := ver.Find(q); !ok || got != q {
						t.Errorf("%s: quote does not verify: %q", s.RefKey, q)
					}
					if !inPage(doc, q) {
						t.Errorf("%s: quote is not text of the page: %q", s.RefKey, q)
					}
				}
			}
			if len(edges) >= 10 && (out.Sources < 1 || out.Sources > maxSources) {
				t.Errorf("%d sources among %d references, want 1 to %d", out.Sources, len(edges), maxSources)
			}
			t.Logf("%d references, %d sources", len(edges), out.Sources)

			again, err := (&Stage{}).Classify(t.Context(), doc, g)
			if err != nil {
				t.Fatal(err)
			}
			again.CreatedAt = out.CreatedAt
			if !reflect.DeepEqual(out, again) {
				t.Error("two runs differ")
			}
		})
	}
}

// inPage reports whether q is, verbatim, part of the page's full text or
// one of its citing sentences.
func inPage(doc *record.Document, q string) bool {
	if strings.Contains(doc.FullText, q) {
		return true
	}
	for _, m := range doc.Mentions {
		if strings.Contains(m.Sentence, q) {
			return true
		}
	}
	return false
}

func TestFindCues(t *testing.T) {
	tests := []struct {
		sentence string
		want     map[int]string
	}{
		{"We build on [3] to route tokens.", map[int]string{cueFoundation: "we build on"}},
		{"Our work builds directly on Smith et al. (2020).", map[int]string{cueFoundation: "builds directly on"}},
		{"[3] is based on [2].", nil}, // not about the target
		{"Our method is based on [2].", map[int]string{cueFoundation: "based on"}},
		{"Following [4], we normalize the inputs.", map[int]string{cueFoundation: "following"}},
		{"In the following sections, we describe the model [9].", nil},
		{"We study who gains following aggregate shocks [7].", nil},
		{"We extend the estimator of [5] to censored data.", map[int]string{cueExtends: "we extend"}},
		{"Inspired by [6], we add a memory.", map[int]string{cueMotivates: "inspired by"}},
		{"This work is motivated by the findings of [6].", map[int]string{cueMotivates: "motivated by"}},
		{"However, [5] fails on long inputs.", map[int]string{cueGap: "however … fails"}},
		{"A key limitation of [5] is its cost.", map[int]string{cueGap: "limitation"}},
		{"Whether this holds in general [2] leaves open the question of scale.", map[int]string{cueGap: "leaves open"}},
		{"Unlike [5], we keep the whole input.", map[int]string{cueGap: "unlike"}},
		{"Such models cannot represent recursion [8].", map[int]string{cueGap: "cannot"}},
		{"We use the Adam optimizer [7].", nil},
	}
	for _, tt := range tests {
		got := findCues(tt.sentence)
		var want [numCues]string
		for c, p := range tt.want {
			want[c] = p
		}
		if got != want {
			t.Errorf("findCues(%q) = %q, want %q", tt.sentence, got, want)
		}
	}
}

func TestSectionMap(t *testing.T) {
	doc := &record.Document{Sections: []record.Section{
		{ID: "S1", Heading: "Overview"},
		{ID: "S2", Heading: "Background and Related Work"},
		{ID: "S3", Heading: "Our Approach", Sections: []record.Section{{ID: "S3.SS1", Heading: "Encoder"}}},
		{ID: "S4", Heading: "Experimental Setup"},
		{ID: "S5", Heading: "Conclusion"},
		{ID: "S6", Heading: "Data availability"},
		{ID: "A1", Heading: "Proofs", Appendix: true, Sections: []record.Section{{ID: "A1.SS1", Heading: "Method details"}}},
	}}
	m := sectionMap(doc)
	want := map[string]string{
		"S1": kindIntro, // no heading names an introduction: the first section is one
		"S2": kindRelated, "S3": kindMethod, "S3.SS1": kindMethod, "S4": kindExperiment,
		"S5": kindDiscussion, "S6": kindAppendix, "A1": kindAppendix, "A1.SS1": kindAppendix,
		"abstract": kindAbstract,
	}
	for id, k := range want {
		if m[id].kind != k {
			t.Errorf("section %s: kind %q, want %q", id, m[id].kind, k)
		}
	}
	if h := m["S3.SS1"].heading; h != "Our Approach" {
		t.Errorf("top-level heading of S3.SS1 = %q", h)
	}
}

func TestRefKeys(t *testing.T) {
	s := func(v string) *string { return &v }
	edges := []record.Edge{
		{RefKey: s("bib.bib1")},
		{S2PaperID: s("abc")},
		{},
		{S2PaperID: s("abc")}, // S2 lists the same paper twice
		{RefKey: s("")},
		{RefKey: s("edge:7")}, // a bibliography key that looks like a fallback
		{},
	}
	got := record.RefKeys(edges)
	want := []string{"bib.bib1", "s2:abc", "edge:3", "edge:4", "edge:5", "edge:7", "edge:7.2"}
	if !slices.Equal(got, want) {
		t.Errorf("RefKeys = %q, want %q", got, want)
	}
}

func TestHeuristicEmptyGraph(t *testing.T) {
	doc, _ := handPaper()
	out, err := (&Stage{}).Classify(t.Context(), doc, &record.Graph{TargetID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Selections) != 0 || out.Sources != 0 || out.CreatedAt.After(time.Now()) {
		t.Errorf("selections for an empty graph: %+v", out)
	}
}
