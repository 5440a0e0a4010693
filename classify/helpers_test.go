package classify

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// putTarget stores doc and its graph under key as fetch and citegraph do.
func putTarget(t *testing.T, st *store.Store, key string, doc *record.Document, g *record.Graph) {
	t.Helper()
	if _, err := record.Documents.Put(t.Context(), st, key, doc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := record.Graphs.Put(t.Context(), st, key, g, nil); err != nil {
		t.Fatal(err)
	}
}

// ref is one entry of a fake model answer.
type ref struct {
	N         any      `json:"n"`
	Role      string   `json:"role"`
	Labels    []string `json:"labels"`
	Rationale string   `json:"rationale"`
	Quotes    []string `json:"quotes"`
}

func src(n int, labels []string, quotes ...string) ref {
	return ref{N: n, Role: "source", Labels: labels, Rationale: "The target builds its method on it.", Quotes: quotes}
}

func other(n int) ref { return ref{N: n, Role: "other", Labels: []string{}, Quotes: []string{}} }

// answerJSON renders a model answer.
func answerJSON(refs ...ref) string {
	b, err := json.Marshal(map[string]any{"references": refs, "card": nil})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The sentences of the hand-made paper, by the references they cite.
const (
	sentBuildOn  = "We build on the sparse attention of Child et al. [3] to route tokens between blocks."
	sentFails    = "However, [5] fails to scale beyond short inputs, which leaves long documents unsolved."
	sentList     = "Earlier work studied recurrence [1, 2, 4, 6] and memory [6]."
	sentRelRec   = "Recurrent models [1, 2] and memory networks [4, 6] process documents sequentially."
	sentRelSpars = "Sparse attention [3] reduces the cost of attention."
	sentExtends  = "Our router extends the block design of [3] with learned gates."
	sentUnlike   = "Unlike [5], our router does not truncate the input."
	sentAdam     = "We use the Adam optimizer [7] for training."
	sentBaseline = "Our model outperforms the baseline of [8] on every document collection."
	sentTableRow = "Longformer [8] | 25.1 | 30.2"
)

// handEdges is the number of edges of the hand-made paper: eight
// bibliography entries and two Semantic Scholar edges the bibliography
// lacks.
const handEdges = 10

// handPaper returns a small paper whose sources are obvious: it builds on
// and extends [3] and answers the failure of [5]; [7] is a tool, [8] a
// baseline, [1, 2, 4, 6] background; one S2 edge is influential but never
// mentioned, another has only a context that is not in the page.
func handPaper(extra ...string) (*record.Document, *record.Graph) {
	title := "Sparse Routers for Long Documents"
	intro := []string{
		"Long documents remain hard for attention models. " + sentBuildOn + " " + sentFails,
		sentList,
	}
	intro = append(intro, extra...)
	doc := &record.Document{
		ID:       "2601.00001v1",
		Source:   record.SourceArxiv,
		Title:    &title,
		Authors:  []string{"A. Author"},
		Abstract: "We present a sparse router for long docu-\nments that scales to book-length inputs.",
		Sections: []record.Section{
			{ID: "S1", Number: "1", Heading: "Introduction", Level: 1, Paragraphs: intro},
			{ID: "S2", Number: "2", Heading: "Related Work", Level: 1, Paragraphs: []string{sentRelRec + " " + sentRelSpars}},
			{ID: "S3", Number: "3", Heading: "Method", Level: 1, Paragraphs: []string{sentExtends + " " + sentUnlike}},
			{ID: "S4", Number: "4", Heading: "Experiments", Level: 1, Paragraphs: []string{sentAdam + " " + sentBaseline}},
		},
		Tables: []record.Table{{ID: "S4.T1", Number: "1", Caption: "Results on long documents.",
			Rows: [][]string{{"Model", "A", "B"}, {"Longformer [8]", "25.1", "30.2"}}}},
		Mentions: []record.Mention{
			{RefKeys: []string{"bib.bib3"}, Sentence: sentBuildOn, SectionID: "S1"},
			{RefKeys: []string{"bib.bib5"}, Sentence: sentFails, SectionID: "S1"},
			{RefKeys: []string{"bib.bib1", "bib.bib2", "bib.bib4", "bib.bib6"}, Sentence: sentList, SectionID: "S1"},
			{RefKeys: []string{"bib.bib1", "bib.bib2", "bib.bib4", "bib.bib6"}, Sentence: sentRelRec, SectionID: "S2"},
			{RefKeys: []string{"bib.bib3"}, Sentence: sentRelSpars, SectionID: "S2"},
			{RefKeys: []string{"bib.bib3"}, Sentence: sentExtends, SectionID: "S3"},
			{RefKeys: []string{"bib.bib5"}, Sentence: sentUnlike, SectionID: "S3"},
			{RefKeys: []string{"bib.bib7"}, Sentence: sentAdam, SectionID: "S4"},
			{RefKeys: []string{"bib.bib8"}, Sentence: sentBaseline, SectionID: "S4"},
			{RefKeys: []string{"bib.bib8"}, Sentence: sentTableRow, SectionID: "S4"},
		},
		Conversion: record.Conversion{Severity: record.SeverityOK},
	}
	titles := []string{"", "Recurrent nets", "Gated recurrence", "Generating long sequences with sparse transformers",
		"Memory networks", "Truncated attention for documents", "Neural Turing machines",
		"Adam: a method for stochastic optimization", "Longformer"}
	for i := 1; i <= 8; i++ {
		doc.References = append(doc.References, record.Reference{
			Key: "bib.bib" + strconv.Itoa(i), Label: "[" + strconv.Itoa(i) + "]", Text: titles[i] + ". 2020.", Title: titles[i], Year: 2020,
		})
	}
	doc.FullText = fullText(doc)
	edges, rep := citegraph.Link(doc.ID, doc, nil)
	s2a, s2b := "s2-influential", "s2-context"
	edges = append(edges,
		record.Edge{TargetID: doc.ID, S2PaperID: &s2a, Intents: []string{"methodology"}, IsInfluential: true,
			Contexts: []string{}, Link: record.LinkNone},
		record.Edge{TargetID: doc.ID, S2PaperID: &s2b, Intents: []string{"background"},
			Contexts: []string{"We build on the ideas of this unseen paper, as the PDF says."}, Link: record.LinkNone},
	)
	return doc, &record.Graph{TargetID: "2601.00001", S2Status: record.S2OK, Edges: edges, Report: rep}
}

// fullText renders title, abstract and sections as latexml does.
func fullText(d *record.Document) string {
	var blocks []string
	if d.Title != nil {
		blocks = append(blocks, *d.Title)
	}
	if d.Abstract != "" {
		blocks = append(blocks, "Abstract\n"+d.Abstract)
	}
	var walk func([]record.Section)
	walk = func(ss []record.Section) {
		for _, s := range ss {
			blocks = append(blocks, strings.TrimSpace(s.Number+" "+s.Heading))
			blocks = append(blocks, s.Paragraphs...)
			walk(s.Sections)
		}
	}
	walk(d.Sections)
	return strings.Join(blocks, "\n\n")
}
