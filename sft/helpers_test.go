package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// vocabulary for synthetic card text: random word sequences from it do
// not share 8-grams by chance, so the dataset's leak rule stays quiet.
var vocabulary = strings.Fields(`model data learning graph signal retrieval memory token
attention corpus benchmark error bias robust scale transfer domain proof bound
kernel search policy reward agent language vision protein market galaxy neuron
sample noise prior latent sparse dense layer loss gradient fairness privacy audit
measure compare diagnose cost compute latency energy quantum lattice fluid cell
gene climate sensor network cache schedule compiler query index ranking summary`)

func words(seed string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	r := rand.New(rand.NewPCG(h.Sum64(), 11))
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	return strings.Join(ws, " ") + "."
}

var (
	opps = []string{"Evidence Gap", "Scope Mismatch", "Failure / Risk Gap", "Resource Bottleneck"}
	pars = []string{"Empirical Mapping", "Relax / Extend Scope", "Robustification", "Optimization / Search"}
)

func sourceCard(seed string, i int) *record.Card {
	o, p := opps[i%len(opps)], pars[i%len(pars)]
	return &record.Card{
		ProblemGap: "[" + o + "] " + words(seed+"/gap", 20), CoreClaim: "We claim that " + words(seed+"/claim", 15),
		Method: "[" + p + "] " + words(seed+"/method", 20), Inspiration: words(seed+"/insp", 25),
		Results: words(seed+"/res", 15), Takeaways: words(seed+"/take", 10),
		Opportunity: o, Paradigm: p, Model: "test", PromptVersion: "source-v1",
	}
}

// goldMarker is in every gold card: it must never reach the teacher.
const goldMarker = "GOLDSECRET"

func ptr[T any](v T) *T { return &v }

// makeTarget is a train target (2024) with n sources.
func makeTarget(id string, n int) dataset.TargetInputs {
	t := dataset.TargetInputs{
		Graph: record.Graph{TargetID: id, Meta: record.TargetMeta{
			ArxivID: id, Title: "Target " + id, Published: fmt.Sprintf("2024-03-%02d", 1+hash64(id)%28), PrimaryCategory: "cs.CL", Categories: []string{"cs.CL"},
		}},
		Gold: &record.Card{
			ProblemGap: "[Evidence Gap] " + goldMarker + " gap " + id, CoreClaim: "We claim that " + goldMarker + " claim " + id,
			Method: "[Empirical Mapping] " + goldMarker + " method", Inspiration: goldMarker + " inspiration",
			Opportunity: "Evidence Gap", Paradigm: "Empirical Mapping", Model: "test", PromptVersion: "gold-v1",
		},
	}
	for i := range n {
		key := fmt.Sprintf("bib%d", i+1)
		t.Graph.Edges = append(t.Graph.Edges, record.Edge{
			TargetID: id, RefKey: ptr(key), ArxivID: ptr(fmt.Sprintf("190%d.%05d", i+1, hash64(id)%100000)),
			Title: ptr(fmt.Sprintf("Source %d of %s", i+1, id)), Year: ptr(2019 + i),
		})
		t.Selections = append(t.Selections, record.Selection{
			TargetID: id, RefKey: key, Role: record.RoleSource, Labels: []string{record.LabelFoundation},
			Rationale: "r", Quotes: []string{"q"}, Model: "test", PromptVersion: "classify-v1",
		})
		t.Sources = append(t.Sources, dataset.SourceInput{RefKey: key, Card: sourceCard(id+"/"+key, i), TextLevel: record.TextFull})
	}
	return t
}

// targetIDs are n train target IDs.
func targetIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("2403.%05d", 101+i*7)
	}
	return ids
}

// buildDataset runs the dataset stage on n hand-made targets and returns
// the published directory and its instances as ReadDataset gives them.
func buildDataset(t *testing.T, n, k int) (string, []record.Instance) {
	t.Helper()
	var targets []dataset.TargetInputs
	for i, id := range targetIDs(n) {
		targets = append(targets, makeTarget(id, 3+i%2))
	}
	res, err := dataset.Build(targets, dataset.Options{NumIdeas: k, PipelineVersion: "test", CreatedAt: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := dataset.Write(context.Background(), dir, res, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	pub, err := dataset.ReadDataset(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Instances) != n {
		t.Fatalf("dataset has %d instances, want %d (dropped %+v)", len(pub.Instances), n, pub.Dropped)
	}
	return dir, pub.Instances
}

// fakeLLM is the simulated OpenAI-compatible LLM with an answer hook that
// plays the teacher. By default it answers every call well; the hooks
// make chosen answers bad.
type fakeLLM struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	requests []fakeRequest
	opened   int // openings handed out

	// ideas, when set, replaces the answer to an ideas call; attempt is
	// 1, or 2 for the follow-up. Return "" for the default answer.
	ideas func(user string, attempt int) string
	// trace, likewise, for a trace call.
	trace func(user string, attempt int, opening string) string
	// openings, likewise, for an openings call asking for n.
	openings func(n, call int) []string
}

type fakeRequest struct {
	Stage    string
	System   string
	User     string
	Messages int
	Raw      string // every message's text
}

func newFakeLLM(t *testing.T) *fakeLLM {
	f := &fakeLLM{t: t}
	f.Server = simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMAnswer: f.answer}).Server
	return f
}

var (
	wantCount   = regexp.MustCompile(`a JSON array of exactly (\d+) object`)
	wantOpening = regexp.MustCompile(`begins with exactly this sentence: "([^"]*)"`)
	wantN       = regexp.MustCompile(`Write (\d+) new opening sentences`)
)

// answer answers one request as the teacher, by the stage its system
// prompt names.
func (f *fakeLLM) answer(r sim.LLMRequest) (sim.LLMReply, bool) {
	req := fakeRequest{Messages: len(r.Messages), System: r.System, User: r.User()}
	for _, m := range r.Messages {
		req.Raw += m.Content + "\n"
	}
	attempt := 1
	if len(r.Messages) > 3 {
		attempt = 2
	}
	switch {
	case strings.Contains(req.System, "teacher model"):
		req.Stage = StageIdeas
	case strings.Contains(req.System, "opening sentences"):
		req.Stage = StageOpenings
	case strings.Contains(req.System, "private thinking"):
		req.Stage = StageTrace
	default:
		f.t.Errorf("fake llm: unknown request %.200s", req.System)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	calls := 0
	for _, q := range f.requests {
		if q.Stage == req.Stage {
			calls++
		}
	}
	f.mu.Unlock()

	var content string
	switch req.Stage {
	case StageIdeas:
		if f.ideas != nil {
			content = f.ideas(req.User, attempt)
		}
		if content == "" {
			k := 3
			if m := wantCount.FindStringSubmatch(req.User); m != nil {
				k, _ = strconv.Atoi(m[1])
			}
			content = goodAnswer(k, req.User)
		}
	case StageOpenings:
		n, _ := strconv.Atoi(wantN.FindStringSubmatch(req.User)[1])
		var ss []string
		if f.openings != nil {
			ss = f.openings(n, calls)
		}
		if ss == nil {
			f.mu.Lock()
			for range n {
				f.opened++
				ss = append(ss, fmt.Sprintf("Opening number %d of this run: I want to see what these papers leave open.", f.opened))
			}
			f.mu.Unlock()
		}
		b, _ := json.Marshal(map[string]any{"openings": ss})
		content = string(b)
	case StageTrace:
		opening := wantOpening.FindStringSubmatch(req.User)[1]
		if f.trace != nil {
			content = f.trace(req.User, attempt, opening)
		}
		if content == "" {
			content = opening + " " + words(req.User, 80)
		}
	}
	return sim.LLMReply{Text: content, Usage: &sim.LLMUsage{Prompt: 1000, Completion: 200}}, true
}

// goodAnswer is a valid answer of k cards, different per prompt.
func goodAnswer(k int, seed string) string {
	type card struct {
		ProblemGap  string `json:"problem_gap"`
		CoreClaim   string `json:"core_claim"`
		Method      string `json:"method"`
		Inspiration string `json:"inspiration"`
	}
	cards := make([]card, k)
	for i := range cards {
		s := fmt.Sprintf("%s/%d", seed, i)
		cards[i] = card{"[bridge opportunity] " + words(s+"g", 12), "We claim that " + words(s+"c", 10), "[Synthesis / Unification] " + words(s+"m", 12), "Document 1 " + words(s+"i", 20)}
	}
	b, _ := json.Marshal(cards)
	return string(b)
}

func (f *fakeLLM) calls(stage string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if stage == "" || r.Stage == stage {
			n++
		}
	}
	return n
}

func (f *fakeLLM) all() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// teacherFor returns an LLM teacher on f with its cache in st (opened in
// dir when st is nil) and the meter the client records in.
func (f *fakeLLM) teacher(t *testing.T, st *store.Store) (*LLMTeacher, *llm.Meter) {
	t.Helper()
	meter := &llm.Meter{}
	cfg := llm.Config{BaseURL: f.URL + "/v1", Model: "teacher-1", Store: st, Meter: meter, InvalidRetries: 1, Concurrency: 4}
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", ""), RetryMax: -1}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := NewLLMTeacher(c, LLMConfig{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return tt, meter
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// instanceOf returns the ID of the instance whose prompt is user.
func instanceOf(instances []record.Instance, user string) string {
	for _, in := range instances {
		if in.Prompt == user || strings.HasPrefix(user, in.Prompt) {
			return in.InstanceID
		}
	}
	return ""
}
