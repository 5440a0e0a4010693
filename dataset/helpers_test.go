package dataset

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/record"
)

// vocabulary for synthetic card text: random word sequences from it share
// no 8-gram by chance, so only planted text can trip the leak rule.
var vocabulary = strings.Fields(`model data learning graph signal retrieval memory token
attention corpus benchmark error bias robust scale transfer domain proof bound
kernel search policy reward agent language vision protein market galaxy neuron
sample noise prior latent sparse dense layer loss gradient fairness privacy audit
measure compare diagnose cost compute latency energy quantum lattice fluid cell
gene climate sensor network cache schedule compiler query index ranking summary
dialogue translation speech image video physics chemistry theorem algebra topology`)

// text returns n pseudo-random words determined by seed.
func text(seed string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 7))
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	return strings.Join(ws, " ") + "."
}

func card(seed string, source bool) *record.Card {
	c := &record.Card{
		ProblemGap:    "[Evidence Gap] " + text(seed+"/gap", 30),
		CoreClaim:     "We claim that " + text(seed+"/claim", 25),
		Method:        "[Empirical Mapping] " + text(seed+"/method", 30),
		Inspiration:   "Document 1 " + text(seed+"/insp", 40),
		Opportunity:   "Evidence Gap",
		Paradigm:      "Empirical Mapping",
		Model:         "test-model",
		PromptVersion: "gold-v1",
	}
	if source {
		c.Results = text(seed+"/results", 20)
		c.Takeaways = text(seed+"/takeaways", 15)
		c.PromptVersion = "source-v1"
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// srcSpec describes one reference of a synthetic target.
type srcSpec struct {
	key, arxiv, doi, s2, title string
	role                       string // default source
	noCard                     bool
}

// makeTarget builds a target with n sources (and one "other" reference).
// Source i gets a unique arXiv ID, DOI, S2 ID and title.
func makeTarget(id, published, cat string, n int) TargetInputs {
	var specs []srcSpec
	for i := 1; i <= n; i++ {
		specs = append(specs, srcSpec{
			key:   fmt.Sprintf("bib.bib%d", i),
			arxiv: fmt.Sprintf("19%02d.%05d", i, hashN(id)%100000),
			doi:   fmt.Sprintf("10.1000/%s.%d", id, i),
			s2:    fmt.Sprintf("s2-%s-%d", id, i),
			title: fmt.Sprintf("Source paper number %d of target %s", i, id),
		})
	}
	specs = append(specs, srcSpec{key: "bib.other", title: "An unrelated reference of " + id, role: record.RoleOther})
	return makeTargetWith(id, published, cat, specs)
}

func hashN(s string) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32())
}

func makeTargetWith(id, published, cat string, specs []srcSpec) TargetInputs {
	t := TargetInputs{
		Graph: record.Graph{
			TargetID: id,
			Meta: record.TargetMeta{
				ArxivID: id, Title: "Target paper " + id + " about " + text(id+"/title", 4),
				Published: published, PrimaryCategory: cat, Categories: []string{cat, "cs.AI"},
				DOI: "10.48550/arXiv." + id, S2PaperID: "s2-target-" + id,
			},
		},
		Gold: card("gold/"+id, false),
	}
	for i, s := range specs {
		e := record.Edge{TargetID: id, RefKey: ptr(s.key), Year: ptr(2019 + i%5)}
		if s.arxiv != "" {
			e.ArxivID = ptr(s.arxiv)
		}
		if s.doi != "" {
			e.DOI = ptr(s.doi)
		}
		if s.s2 != "" {
			e.S2PaperID = ptr(s.s2)
		}
		if s.title != "" {
			e.Title = ptr(s.title)
		}
		t.Graph.Edges = append(t.Graph.Edges, e)
		role := s.role
		if role == "" {
			role = record.RoleSource
		}
		sel := record.Selection{TargetID: id, RefKey: s.key, Role: role, Model: "classifier", PromptVersion: "classify-v1"}
		if role == record.RoleSource {
			sel.Labels = []string{record.Labels()[i%len(record.Labels())]}
			sel.Rationale = "It matters for " + id
			sel.Quotes = []string{"quote " + s.key}
			if !s.noCard {
				t.Sources = append(t.Sources, SourceInput{RefKey: s.key, Card: card("src/"+id+"/"+s.key, true), TextLevel: record.TextFull})
			}
		}
		t.Selections = append(t.Selections, sel)
	}
	return t
}

func fixedOptions() Options {
	return Options{PipelineVersion: "test", CreatedAt: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)}
}

func mustBuild(t *testing.T, targets []TargetInputs, opts Options) *Result {
	t.Helper()
	r, err := Build(targets, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

// corpus is a small clean corpus: 3 train targets, 2 test targets.
func corpus() []TargetInputs {
	return []TargetInputs{
		makeTarget("2401.00001", "2024-01-10", "cs.CL", 3),
		makeTarget("2402.00002", "2024-02-11", "cs.CL", 4),
		makeTarget("2512.00003", "2025-12-31", "cs.LG", 5),
		makeTarget("2601.00004", "2026-01-01", "cs.CL", 3),
		makeTarget("2603.00005", "2026-03-03", "q-bio.NC", 4),
	}
}

// testWriters names the stages that write the dataset's inputs, as the
// pipeline's stage table does.
var testWriters = Writers{"edges": "citegraph", "selections": "classify", "summary": "summarize", "document": "fetch"}

// testInputs are the dataset's inputs with testWriters and no fields.
var testInputs = Inputs{Writers: testWriters}
