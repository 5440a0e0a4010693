package summarize

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// fakeLLM is an in-process OpenAI-compatible chat-completions endpoint.
// answer sees the request (its messages) and returns the assistant's
// content; every request is recorded.
type fakeLLM struct {
	*testutil.Server
	t      *testing.T
	answer func(r fakeRequest) string
}

// fakeRequest is one chat request as the server saw it.
type fakeRequest struct {
	N        int         // 1-based call number
	Messages [][2]string // role, content
}

// title returns the paper title the user prompt names.
func (r fakeRequest) title() string {
	for _, m := range r.Messages {
		if m[0] == "user" {
			if t := titleLine.FindStringSubmatch(m[1]); t != nil {
				return t[1]
			}
		}
	}
	return ""
}

// source reports whether the request asks for a source card.
func (r fakeRequest) source() bool {
	for _, m := range r.Messages {
		if m[0] == "user" {
			return strings.Contains(m[1], "write the source card")
		}
	}
	return false
}

// followUp returns the last follow-up message, "" for a first request.
func (r fakeRequest) followUp() string {
	if len(r.Messages) <= 2 {
		return ""
	}
	return r.Messages[len(r.Messages)-1][1]
}

var titleLine = regexp.MustCompile(`(?m)^Title: (.*)$`)

func newFakeLLM(t *testing.T, answer func(r fakeRequest) string) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t, answer: answer}
	f.Server = testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) {
		content := f.answer(f.decode(r))
		testutil.WriteJSON(w, http.StatusOK, testutil.ChatCompletion("test-model-2026-01-01", content, "", &testutil.Usage{Prompt: 100, Completion: 50}))
	})
	return f
}

// decode reads a recorded request's messages.
func (f *fakeLLM) decode(r testutil.Request) fakeRequest {
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		f.t.Errorf("fake llm: request is not JSON: %v", err)
	}
	req := fakeRequest{N: r.N}
	for _, m := range body.Messages {
		req.Messages = append(req.Messages, [2]string{m.Role, m.Content})
	}
	return req
}

func (f *fakeLLM) calls() int { return f.Count() }

func (f *fakeLLM) requests() []fakeRequest {
	var out []fakeRequest
	for _, r := range f.Requests() {
		out = append(out, f.decode(r))
	}
	return out
}

// client returns an llm.Client for f; st (may be nil) holds its cache.
func (f *fakeLLM) client(t *testing.T, st *store.Store) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: f.URL + "/v1", Model: "test-model", StructuredOutput: true, Store: st}
	hc, err := httpx.New(httpx.Config{UserAgent: "curate-test", RetryMax: 1,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// validCard is a well-formed answer for a paper; source cards add results
// and takeaways.
func validCard(title string, source bool) string {
	c := map[string]string{
		"problem_gap": "[Evidence Gap] Nobody can yet measure how " + title + " behaves under long contexts.",
		"core_claim":  "We claim that accuracy falls linearly with instruction density for every model family.",
		"method":      "[Empirical Mapping] Build a graded benchmark and chart every model across densities.",
		"inspiration": "Smith et al. (2020) measured single instructions only. Lee and Park (2022) studied long prompts without grading. Joining their protocols is not obvious because each hides the other's failure mode.",
	}
	if !source {
		// A careful model's gold card says what testDoc's abstract and
		// introduction say, in its own words.
		c["problem_gap"] = "[Evidence Gap] It remains unclear how many instructions large language models can follow at once in the long prompts of " + title + "."
		c["core_claim"] = "We claim that accuracy falls steadily as the density of instructions in a prompt grows."
		c["method"] = "[Empirical Mapping] Build a benchmark of graded instruction densities and evaluate how accurately models follow each prompt."
	}
	if source {
		c["results"] = "Accuracy drops from 95% to 40% between 10 and 500 instructions."
		c["takeaways"] = "Instruction density is a first-class evaluation axis."
	}
	return wrapCard(c)
}

// wrapCard is a card's fields as the answer of a paper task: the card,
// and no references.
func wrapCard(c map[string]string) string {
	b, _ := json.Marshal(map[string]any{"references": []any{}, "card": c})
	return string(b)
}

// cardJSON is an answer's card alone, as a record.Card decodes it.
func cardJSON(answer string) string {
	var a struct {
		Card json.RawMessage `json:"card"`
	}
	json.Unmarshal([]byte(answer), &a)
	return string(a.Card)
}

// withField returns answer with one field of its card replaced.
func withField(answer, field, value string) string {
	var a struct {
		Card map[string]string `json:"card"`
	}
	json.Unmarshal([]byte(answer), &a)
	a.Card[field] = value
	return wrapCard(a.Card)
}

// testDoc is a small parsed paper with an introduction, a method, results,
// a conclusion and an appendix, enough for the heuristic.
func testDoc(id, title string) *record.Document {
	return &record.Document{
		ID:       id,
		Source:   record.SourceArxiv,
		Title:    &title,
		Abstract: "Large language models are deployed with ever longer prompts. However, it remains unclear how many instructions they can follow at once. We introduce a benchmark of graded instruction densities for " + title + ". We show that accuracy falls steadily as the number of instructions grows.",
		Sections: []record.Section{
			{ID: "S1", Number: "1", Heading: "Introduction", Level: 1, Paragraphs: []string{
				"Prompts in production carry dozens of constraints at once. Previous benchmarks (Smith et al., 2020) evaluate models with a single instruction only.",
			}},
			{ID: "S2", Number: "2", Heading: "Method", Level: 1, Paragraphs: []string{"We generate prompts with between ten and five hundred keyword instructions and grade each answer automatically."}},
			{ID: "S3", Number: "3", Heading: "Results", Level: 1, Paragraphs: []string{"The best model reaches 68% accuracy at five hundred instructions. Smaller models degrade much faster than larger ones."}},
			{ID: "S4", Number: "4", Heading: "Conclusion", Level: 1, Paragraphs: []string{"These findings suggest that instruction density should be reported alongside accuracy. Future work should study ordering effects."}},
			{ID: "A1", Number: "A", Heading: "Prompt templates", Level: 1, Appendix: true, Paragraphs: []string{"The full prompt templates are listed here for reproducibility of every experiment."}},
		},
		Mentions: []record.Mention{{RefKeys: []string{"bib.bib1"}, Sentence: "Previous benchmarks (Smith et al., 2020) evaluate models with a single instruction only.", SectionID: "S1"}},
	}
}

// sourceVersion is the prompt version source cards record.
func sourceVersion(t *testing.T) string {
	t.Helper()
	v, err := PromptVersion(record.CardSource)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
