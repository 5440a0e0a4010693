package sim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/summarize"
)

func newWorld(t *testing.T, cfg sim.WorldConfig) *sim.World {
	t.Helper()
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestPagesParse checks that every page of a world parses with the
// pipeline's own parser into what the world says: title, abstract, the
// bibliography with its arXiv IDs, and mention sentences that are the
// citation contexts Semantic Scholar gives.
func TestPagesParse(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 7, Targets: 40})
	for i := range w.NumTargets() {
		p := w.Target(i)
		site := p.HTML
		if site == sim.HTMLNone {
			continue
		}
		doc, err := latexml.Parse(w.Page(&p, site), latexml.Options{})
		if err != nil {
			t.Fatalf("%s: %v", p.ArxivID, err)
		}
		if doc.Title == nil || *doc.Title != p.Title {
			t.Errorf("%s: title %v, want %q", p.ArxivID, doc.Title, p.Title)
		}
		if !strings.HasPrefix(doc.ID, p.ArxivID) || doc.Source != site {
			t.Errorf("%s: parsed id %q source %q, served by %s", p.ArxivID, doc.ID, doc.Source, site)
		}
		if doc.Abstract == "" || len(doc.Sections) < 3 {
			t.Errorf("%s: abstract %q, %d sections", p.ArxivID, doc.Abstract, len(doc.Sections))
		}
		refs := w.References(&p)
		if len(doc.References) != len(refs) {
			t.Fatalf("%s: %d bibliography entries, want %d", p.ArxivID, len(doc.References), len(refs))
		}
		for k, r := range refs {
			got := doc.References[k]
			if got.ArxivID != r.Paper.ArxivID || r.Paper.ArxivID == "" && got.DOI != r.Paper.DOI {
				t.Errorf("%s [%d]: arXiv %q DOI %q, want %q %q", p.ArxivID, k+1, got.ArxivID, got.DOI, r.Paper.ArxivID, r.Paper.DOI)
			}
		}
		ctxs := w.Contexts(&p, refs)
		mentions := map[string][]string{}
		for _, m := range doc.Mentions {
			for _, k := range m.RefKeys {
				mentions[k] = append(mentions[k], m.Sentence)
			}
		}
		for k := range refs {
			key := doc.References[k].Key
			if !slices.Equal(mentions[key], ctxs[k]) {
				t.Errorf("%s %s: mentions %q, contexts %q", p.ArxivID, key, mentions[key], ctxs[k])
			}
		}
	}
	// Cited papers' pages parse too.
	for j := range 30 {
		p := w.Background(j)
		if p.HTML == sim.HTMLNone {
			continue
		}
		if _, err := latexml.Parse(w.Page(&p, p.HTML), latexml.Options{}); err != nil {
			t.Errorf("%s: %v", p.ArxivID, err)
		}
	}
}

// TestPaperTokens: a world with PaperTokens set lengthens every page to
// about that many tokens of text with prose that cites nothing and that
// package injection does not hold for text addressing a model; the
// mentions and the rest of the page are the short world's.
func TestPaperTokens(t *testing.T) {
	short := newWorld(t, sim.WorldConfig{Seed: 7, Targets: 12})
	long := newWorld(t, sim.WorldConfig{Seed: 7, Targets: 12, PaperTokens: 6000})
	for i := range long.NumTargets() {
		p := long.Target(i)
		if p.HTML == sim.HTMLNone {
			continue
		}
		doc, err := latexml.Parse(long.Page(&p, p.HTML), latexml.Options{})
		if err != nil {
			t.Fatalf("%s: %v", p.ArxivID, err)
		}
		var text int
		var walk func([]record.Section)
		walk = func(ss []record.Section) {
			for _, s := range ss {
				for _, para := range s.Paragraphs {
					text += len(para)
				}
				walk(s.Sections)
			}
		}
		walk(doc.Sections)
		text += len(doc.Abstract)
		if tokens := text / 4; tokens < 5700 || tokens > 6300 {
			t.Errorf("%s: %d tokens of text, want about 6,000", p.ArxivID, tokens)
		}
		if found := injection.ScanDocument(doc, nil); len(found) != 0 {
			t.Errorf("%s: the lengthened page addresses a model: %+v", p.ArxivID, found)
		}
		q := short.Target(i)
		if refs := long.References(&p); !reflect.DeepEqual(long.Contexts(&p, refs), short.Contexts(&q, short.References(&q))) {
			t.Errorf("%s: the lengthened page's citation contexts differ from the short page's", p.ArxivID)
		}
		if short, err := latexml.Parse(short.Page(&q, q.HTML), latexml.Options{}); err != nil || len(short.Mentions) != len(doc.Mentions) {
			t.Errorf("%s: %d mentions, the short page %d (%v)", p.ArxivID, len(doc.Mentions), len(short.Mentions), err)
		}
	}
	if _, err := sim.NewWorld(sim.WorldConfig{Targets: 1, PaperTokens: -1}); err == nil {
		t.Error("a negative paper length is taken")
	}
}

// TestWorld checks determinism, lookups and the shape of the world.
func TestWorld(t *testing.T) {
	cfg := sim.WorldConfig{Seed: 3, Targets: 300, NoHTML: []int{5}, Withheld: []int{6}}
	a, b := newWorld(t, cfg), newWorld(t, cfg)
	train, test := 0, 0
	seen := map[string]bool{}
	for i := range a.NumTargets() {
		p, q := a.Target(i), b.Target(i)
		if !bytes.Equal(a.Page(&p, sim.HTMLArxiv), b.Page(&q, sim.HTMLArxiv)) {
			t.Fatalf("target %d: two worlds of one seed differ", i)
		}
		if seen[p.ArxivID] || seen[p.Name] {
			t.Fatalf("target %d: %s / %s seen before", i, p.ArxivID, p.Name)
		}
		seen[p.ArxivID], seen[p.Name] = true, true
		if p.Published.Year() == 2026 {
			test++
		} else {
			train++
		}
		for _, r := range a.References(&p) {
			if !r.Paper.Published.Before(p.Published) {
				t.Errorf("%s (%s) cites the later %s (%s)", p.ArxivID, p.Published, r.Paper.Title, r.Paper.Published)
			}
		}
		got, ok := a.ByArxiv(p.ArxivID)
		if !ok || got.Title != p.Title {
			t.Fatalf("ByArxiv(%s) = %v, %v", p.ArxivID, got.Title, ok)
		}
		for _, id := range []string{a.S2ID(&p), "ARXIV:" + p.IDv(), "CorpusId:" + strconv.FormatInt(a.CorpusID(&p), 10)} {
			if got, ok := a.ByS2(id); !ok || got.Title != p.Title {
				t.Errorf("ByS2(%s) = %q, %v", id, got.Title, ok)
			}
		}
	}
	if train < 150 || test < 75 {
		t.Errorf("splits: %d train, %d test targets", train, test)
	}
	if a.Target(5).HTML != sim.HTMLNone || !slices.Equal(a.NoHTMLTargets(), []string{a.Target(5).ArxivID}) {
		t.Errorf("NoHTML target 5 has HTML %q", a.Target(5).HTML)
	}
	if _, ok := a.ByArxiv("2401.49999"); ok {
		t.Errorf("an ID outside the world resolves")
	}
	if _, err := sim.NewWorld(sim.WorldConfig{Targets: 10, RefsMin: 2}); err == nil {
		t.Errorf("more sources than references accepted")
	}
}

func start(t *testing.T, w *sim.World, opt sim.Options) *sim.Servers {
	t.Helper()
	s, err := sim.Start(w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestProtocols asks each service as curate does.
func TestProtocols(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 1, Targets: 20, NoHTML: []int{2}, Withheld: []int{3}})
	s := start(t, w, sim.Options{})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url string) (int, string, http.Header) {
		t.Helper()
		resp, err := noRedirect.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	p0, p2, p3 := w.Target(0), w.Target(2), w.Target(3)
	if code, body, _ := get(s.URL(sim.Arxiv) + "/html/" + p2.ArxivID); code != 404 || !strings.Contains(body, "No HTML for") {
		t.Errorf("arXiv for a paper without HTML: %d", code)
	}
	if code, _, h := get(s.URL(sim.Ar5iv) + "/html/" + p2.ArxivID); code != 307 || !strings.Contains(h.Get("Location"), "arxiv.org/abs/") {
		t.Errorf("ar5iv for a paper without HTML: %d %q", code, h.Get("Location"))
	}
	if code, body, _ := get(s.URL(sim.S2) + "/graph/v1/paper/ARXIV:" + p3.ArxivID + "/references?offset=0&limit=500"); code != 200 || !strings.Contains(body, `"data":null`) {
		t.Errorf("withheld list: %d %s", code, body)
	}
	code, body, _ := get(s.URL(sim.S2) + "/graph/v1/paper/ARXIV:" + p0.ArxivID + "/references?offset=0&limit=2")
	if code != 200 || !strings.Contains(body, `"next":2`) {
		t.Errorf("paged list: %d %.200s", code, body)
	}
	if code, body, _ := get(s.URL(sim.ArxivAPI) + "/api/query?id_list=" + p0.ArxivID + "," + p3.ArxivID); code != 200 || strings.Count(body, "<entry>") != 2 {
		t.Errorf("atom: %d %s", code, body)
	}
	if code, _, _ := get(s.URL(sim.S2) + "/graph/v1/paper/ARXIV:2401.49999"); code != 404 {
		t.Errorf("unknown paper: %d", code)
	}
	resp, err := http.Post(s.URL(sim.S2)+"/graph/v1/paper/batch?fields=title,abstract", "application/json",
		strings.NewReader(`{"ids":["`+w.S2ID(&p0)+`","CorpusId:1"]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(string(b), ",null]") || !strings.Contains(string(b), p0.Title) {
		t.Errorf("batch: %s", b)
	}
	if st := s.Service(sim.S2).Stats(); st.Requests != 4 || st.OK != 4 {
		t.Errorf("s2 stats %+v", st)
	}
}

// TestLimitsAndFaults checks that a service refuses what is over its rate
// and in-flight cap, and injects the faults it is told to.
func TestLimitsAndFaults(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 1, Targets: 5})
	s := start(t, w, sim.Options{
		Limits: map[string]sim.Limits{
			sim.Arxiv: {Rate: 10, Burst: 1, RetryAfter: 1500 * time.Millisecond},
			sim.LLM:   {MaxInFlight: 2, Latency: 200 * time.Millisecond},
		},
		Faults: map[string]sim.Faults{sim.S2: {P5xx: 0.3, PReset: 0.2, Burst429Every: 10, Burst429Len: 2}},
	})
	url := s.URL(sim.Arxiv) + "/html/" + w.Target(0).ArxivID
	codes := map[int]int{}
	var retryAfter string
	for range 5 {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		codes[resp.StatusCode]++
		if resp.StatusCode == 429 {
			retryAfter = resp.Header.Get("Retry-After")
		}
		resp.Body.Close()
	}
	if codes[429] < 3 || retryAfter != "2" {
		t.Errorf("5 requests at once to a 10/s service: %v, Retry-After %q", codes, retryAfter)
	}
	time.Sleep(120 * time.Millisecond)
	if resp, err := http.Get(url); err != nil || resp.StatusCode == 429 {
		t.Errorf("after a pause the bucket refills: %v %v", resp.StatusCode, err)
	}

	// Three chat requests at once against two slots: one is refused.
	var wg sync.WaitGroup
	var mu sync.Mutex
	llmCodes := map[int]int{}
	for range 3 {
		wg.Go(func() {
			resp, err := http.Post(s.URL(sim.LLM)+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			llmCodes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if llmCodes[200] != 2 || llmCodes[429] != 1 || s.Service(sim.LLM).Stats().MaxInFlight != 2 {
		t.Errorf("llm: %v, %+v", llmCodes, s.Service(sim.LLM).Stats())
	}

	// Faults on S2, drawn per request identity.
	for i := range 200 {
		p := w.Target(i % 5)
		resp, err := http.Get(s.URL(sim.S2) + "/graph/v1/paper/ARXIV:" + p.ArxivID + "?n=" + strconv.Itoa(i))
		if err == nil {
			resp.Body.Close()
		}
	}
	st := s.Service(sim.S2).Stats()
	if st.Burst429 != 40 || st.Resets < 15 || st.Errors5xx < 15 || st.OK < 60 || st.Requests != 200 {
		t.Errorf("s2 faults: %+v", st)
	}
	if st.Faults() != st.Burst429+st.Resets+st.Errors5xx {
		t.Errorf("Faults() = %d", st.Faults())
	}
}

// TestLLMAnswersPassTheStages runs the real classify and summarize code,
// through the real LLM client, against the simulated model: every answer
// passes, the sources are the world's, and every quote is verified.
func TestLLMAnswersPassTheStages(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 11, Targets: 12})
	s := start(t, w, sim.Options{})
	hc, err := httpx.New(httpx.Config{UserAgent: "sim-test"}, httpx.ServiceConfig{Name: "llm", BaseURL: s.URL(sim.LLM)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, llm.Config{Model: sim.Model, StructuredOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stage := &classify.Stage{LLM: c, Model: sim.Model}
	for i := range w.NumTargets() {
		p := w.Target(i)
		if p.HTML == sim.HTMLNone {
			continue
		}
		doc, err := latexml.Parse(w.Page(&p, p.HTML), latexml.Options{})
		if err != nil {
			t.Fatal(err)
		}
		edges, _ := citegraph.Link(p.ArxivID, doc, nil)
		sels, err := stage.Classify(ctx, doc, &record.Graph{TargetID: p.ArxivID, Edges: edges})
		if err != nil {
			t.Fatalf("%s: %v", p.ArxivID, err)
		}
		refs := w.References(&p)
		for k, sel := range sels.Selections {
			want := refs[k]
			if sel.Role != want.Role || want.Role == sim.RoleSource && !slices.Equal(sel.Labels, []string{want.Label}) {
				t.Errorf("%s [%d]: %s %v, want %s %s", p.ArxivID, k+1, sel.Role, sel.Labels, want.Role, want.Label)
			}
		}
		if sels.QuotesDropped != 0 || len(sels.Unquoted) != 0 {
			t.Errorf("%s: %d quotes dropped, unquoted %v", p.ArxivID, sels.QuotesDropped, sels.Unquoted)
		}
		for _, kind := range []string{record.CardGold, record.CardSource} {
			card, err := summarize.Summarize(ctx, c, summarize.Input{Key: p.ArxivID, Doc: doc}, kind)
			if err != nil {
				t.Fatalf("%s %s card: %v", p.ArxivID, kind, err)
			}
			if err := summarize.Validate(card, kind); err != nil {
				t.Errorf("%s %s card: %v", p.ArxivID, kind, err)
			}
		}
	}
	// An abstract-only source card too.
	q := w.Background(0)
	if _, err := summarize.Summarize(ctx, c, summarize.Input{Key: "x", Title: q.Title, Abstract: q.Abstract}, record.CardSource); err != nil {
		t.Errorf("abstract card: %v", err)
	}
	if st := s.Service(sim.LLM).Stats(); st.Invalid != 0 || st.OK != st.Requests {
		t.Errorf("llm stats %+v", st)
	}

	// Invalid answers are asked again and then answered.
	s.Service(sim.LLM).SetFaults(sim.Faults{PInvalid: 0.3})
	p := w.Target(1)
	doc, _ := latexml.Parse(w.Page(&p, p.HTML), latexml.Options{})
	fails := 0
	for i := range 20 {
		doc.Abstract += " " + strconv.Itoa(i) // a new prompt each time
		if _, err := summarize.Summarize(ctx, c, summarize.Input{Key: p.ArxivID, Doc: doc}, record.CardGold); err != nil {
			var ie *llm.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("not an invalid-answer error: %v", err)
			}
			fails++
		}
	}
	if st := s.Service(sim.LLM).Stats(); st.Invalid == 0 || fails > 3 {
		t.Errorf("with 3 answers in 10 invalid: %d of 20 cards failed, stats %+v", fails, st)
	}
	for _, a := range []string{sim.Answer("Classify the 2 references", true, "a"), sim.Answer("Write the idea card", true, "b")} {
		if a == sim.Answer("Classify the 2 references", false, "") || a == sim.Answer("Write the idea card", false, "") {
			t.Errorf("an invalid answer equals the valid one: %s", a)
		}
	}
}
