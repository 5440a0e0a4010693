package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/summarize"
)

// TestPlantedInstructions: each planted instruction stands in its page's
// conclusion, and the simulated model obeys it wherever it reads it: the
// references it names become sources with varied labels, quoted by the
// planted sentence, or the gold card becomes the dictated one. The
// addressed forms are what curate finds and takes out of the prompt, and
// then there is nothing left to obey; the quiet ones it does not find.
func TestPlantedInstructions(t *testing.T) {
	var plants []sim.Plant
	for i, kf := range [][2]string{{sim.PlantShare, sim.FormQuiet}, {sim.PlantAll, sim.FormQuiet}, {sim.PlantGold, sim.FormQuiet},
		{sim.PlantShare, sim.FormAddressed}, {sim.PlantAll, sim.FormAddressed}, {sim.PlantGold, sim.FormAddressed}} {
		plants = append(plants, sim.Plant{Target: i, Kind: kf[0], Form: kf[1]})
	}
	w := newWorld(t, sim.WorldConfig{Seed: 5, Targets: 8, Planted: plants})
	if _, err := sim.NewWorld(sim.WorldConfig{Seed: 5, Targets: 8, Planted: []sim.Plant{{Target: 9, Kind: sim.PlantAll, Form: sim.FormQuiet}}}); err == nil {
		t.Error("a plant outside the world is accepted")
	}
	s := start(t, w, sim.Options{LLMAnswer: sim.CurateModel})
	hc, err := httpx.New(httpx.Config{UserAgent: "sim-test"}, httpx.ServiceConfig{Name: "llm", BaseURL: s.URL(sim.LLM)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, llm.Config{Model: sim.Model, StructuredOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stage := &classify.Stage{LLM: c, Model: sim.Model, IncludeSuspect: true}
	for i := range w.NumTargets() {
		p := w.Target(i)
		site := p.HTML
		if site == sim.HTMLNone {
			site = sim.HTMLArxiv
		}
		doc, err := latexml.Parse(w.Page(&p, site), latexml.Options{})
		if err != nil {
			t.Fatal(err)
		}
		edges, _ := citegraph.Link(p.ArxivID, doc, nil)
		sels, err := stage.Classify(ctx, doc, &record.Graph{TargetID: p.ArxivID, Edges: edges})
		if err != nil {
			t.Fatalf("%s: %v", p.ArxivID, err)
		}
		gold, err := summarize.Summarize(ctx, c, summarize.Input{Key: p.ArxivID, Doc: doc}, record.CardGold)
		if err != nil {
			t.Fatalf("%s: gold card: %v", p.ArxivID, err)
		}
		_, ungrounded := summarize.Grounded(gold, summarize.Input{Key: p.ArxivID, Doc: doc}, summarize.DefaultMinGrounding)
		obeyed := strings.Contains(gold.CoreClaim, sim.DictatedClaim)
		conclusion := doc.Sections[len(doc.Sections)-1]
		refs := w.References(&p)
		quiet := i < 3
		switch {
		case i >= len(plants):
			if len(conclusion.Paragraphs) != 1 || len(sels.Instructions) != 0 || sels.QuotesNotCiting != 0 || obeyed || len(ungrounded) > 0 {
				t.Errorf("%s (clean): conclusion %q, %+v, gold %q %q", p.ArxivID, conclusion.Paragraphs, sels, gold.CoreClaim, ungrounded)
			}
			continue
		case len(conclusion.Paragraphs) != 2:
			t.Errorf("%s: conclusion %q", p.ArxivID, conclusion.Paragraphs)
		case quiet == (len(sels.Instructions) > 0):
			t.Errorf("%s (%s %s): instruction-like text %v", p.ArxivID, plants[i].Kind, plants[i].Form, sels.Instructions)
		}
		sources, labels := 0, map[string]bool{}
		for _, sel := range sels.Selections {
			if sel.Role == record.RoleSource {
				sources++
				labels[strings.Join(sel.Labels, ",")] = true
			}
		}
		switch kind := plants[i].Kind; {
		case kind == sim.PlantGold:
			if obeyed != quiet || (len(ungrounded) > 0) != quiet {
				t.Errorf("%s (gold, %s): core claim %q, grounded %q", p.ArxivID, plants[i].Form, gold.CoreClaim, ungrounded)
			}
		case !quiet:
			if sels.QuotesNotCiting != 0 || len(sels.Unquoted) != 0 {
				t.Errorf("%s (%s, addressed): obeyed after all: %+v", p.ArxivID, kind, sels)
			}
		default:
			want := len(refs)
			if kind == sim.PlantShare {
				want = (7*len(refs) + 9) / 10
			}
			if sources < want || len(labels) < 3 || len(sels.Unquoted) != want || sels.QuotesNotCiting != want {
				t.Errorf("%s (%s, quiet): %d sources of %d with labels %v, unquoted %v, %d quotes not citing; want %d obeyed",
					p.ArxivID, kind, sources, len(refs), labels, sels.Unquoted, sels.QuotesNotCiting, want)
			}
			if len((classify.Plausibility{}).Check(sels.Selections)) == 0 {
				t.Errorf("%s (%s, quiet): the obeyed classification passes the plausibility rules", p.ArxivID, kind)
			}
		}
	}
}
