package reward

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/record"
)

var update = flag.Bool("update", false, "regenerate the GATE SPEC block of "+FileName)

// TestSpecCurrent: the gate rules in the Python file are the Go gate's.
func TestSpecCurrent(t *testing.T) {
	want, err := Generate(source)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(FileName, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(source, want) {
		t.Errorf("%s's GATE SPEC block is not the Go gate's (gate.Spec): run go test ./reward -update", FileName)
	}
}

// judgeServer speaks OpenAI's chat-completions protocol as two judges
// would. Impact: the idea whose core_claim says STRONG wins; with both or
// neither, the idea shown first (Idea A) wins, a position bias that the
// two orderings turn into a tie. Similarity: 5 on every field when both
// ideas' problem_gap say DUP, else 1, 2 and 3 (a distance of 0.75). The
// first request is refused with 429 and Retry-After, as a busy server
// does.
type judgeServer struct {
	mu       sync.Mutex
	requests []judgeRequest
	refused  bool
}

type judgeRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role, Content string
	} `json:"messages"`
	Temperature float64 `json:"temperature"`
	Auth        string  `json:"-"`
}

func (s *judgeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req judgeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	if !s.refused {
		s.refused = true
		s.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
		return
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	user := req.Messages[1].Content
	var answer string
	if strings.Contains(req.Messages[0].Content, "long-term scientific impact") {
		a, b, _ := strings.Cut(strings.TrimPrefix(user, "Idea A:\n"), "\n\nIdea B:\n")
		sa, sb := strings.Contains(a, "STRONG"), strings.Contains(b, "STRONG")
		answer = `<think>weighing</think>{"winner": "A"}`
		if sb && !sa {
			answer = `The second. {"winner": "B"}`
		}
	} else {
		a, b, _ := strings.Cut(strings.TrimPrefix(user, "Idea 1:\n"), "\n\nIdea 2:\n")
		answer = `{"problem_gap": 1, "core_claim": 2, "method": 3}`
		if strings.Contains(a, "DUP") && strings.Contains(b, "DUP") {
			answer = `{"problem_gap": 5, "core_claim": 5, "method": 5}`
		}
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

func (s *judgeServer) calls() (impact, similarity int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.requests {
		if strings.Contains(r.Messages[0].Content, "long-term scientific impact") {
			impact++
		} else {
			similarity++
		}
	}
	return impact, similarity
}

// TestScoreWithJudges runs the reward's verl and TRL entry points with
// the system python3 against OpenAI-compatible judges and checks the
// recipe's arithmetic: 0 for a rollout the gate rejects (no judge asked),
// ε for a valid one, plus Σ q(uᵢ)·min_{j<i} d(uᵢ,uⱼ) with q from both
// orderings (1 / 0.5 / 0) and d the mean of (5 − similarity)/4.
func TestScoreWithJudges(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testneeds.Skip(t, testneeds.Python, "the Python reward is not run: %v", err)
	}
	cards := []record.Card{
		{ProblemGap: "[Evidence Gap] DUP nobody audits spans.", CoreClaim: "We claim that STRONG audits expose errors.", Method: "[Empirical Mapping] Build a benchmark.", Inspiration: "Document 1 and Document 2."},
		{ProblemGap: "[Scope Mismatch] Readers assume clean text.", CoreClaim: "We claim that noise breaks readers.", Method: "[Relax / Extend Scope] Test on scans.", Inspiration: "Document 2."},
		{ProblemGap: "[Evidence Gap] DUP again, no span audits.", CoreClaim: "We claim that STRONG span audits matter.", Method: "[Empirical Mapping] Audit spans.", Inspiration: "Document 1."},
	}
	completion, err := gate.Format("thinking", cards)
	if err != nil {
		t.Fatal(err)
	}
	gold := `{"problem_gap":"[Evidence Gap] Gold gap.","core_claim":"We claim that the gold holds.","method":"[Empirical Mapping] Gold method.","inspiration":"Document 1."}`
	// q = 1, 0.5, 1; d(u2,u1) = 0.75, d(u3,u1) = 0, d(u3,u2) = 0.75.
	full := Epsilon + 1 + 0.5*0.75 + 1*0
	window1 := Epsilon + 1 + 0.5*0.75 + 1*0.75

	srv := &judgeServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	script := `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import groundwork_reward as r
c, gold = sys.argv[2], sys.argv[3]
out = {}
out["verl"] = r.compute_score("groundwork/ideation", c, gold, {"num_ideas": 3, "index": 0})
out["invalid"] = r.compute_score("groundwork/ideation", c.replace("<think>", ""), gold, {"num_ideas": 3})
out["wrong_k"] = r.compute_score("groundwork/ideation", c, gold, {"num_ideas": 2})
out["gate_mode"] = r.compute_score("groundwork/ideation", c, gold, {"num_ideas": 3}, reward_mode="gate")
out["window1"] = r.compute_score("groundwork/ideation", c, gold, {"num_ideas": 3}, window=1)
out["batch"] = r.compute_score_batch(["groundwork/ideation"] * 2, [c, "no blocks"], [gold, gold], [{"num_ideas": 3}, {"num_ideas": 3}])
out["trl"] = r.grpo_reward(prompts=[[{"role": "user", "content": "p"}]] * 2, completions=[[{"role": "assistant", "content": c}], c], gold=[gold, gold], num_ideas=[3, 3], instance_id=["a", "b"])
try:
    r.compute_score("other/source", c, gold, {"num_ideas": 3})
    out["other"] = "scored"
except ValueError as e:
    out["other"] = str(e)
print(json.dumps(out))
`
	cmd := exec.Command(py, "-c", script, ".", completion, gold)
	cmd.Env = append(os.Environ(),
		"GROUNDWORK_QUALITY_URL="+ts.URL+"/v1", "GROUNDWORK_QUALITY_MODEL=impact-judge", "GROUNDWORK_QUALITY_API_KEY=sk-test",
		"GROUNDWORK_DISTANCE_MODEL=distance-judge", "GROUNDWORK_REWARD_MODE=", "GROUNDWORK_WINDOW=", "GROUNDWORK_WORKERS=4")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	var got struct {
		Verl     float64   `json:"verl"`
		Invalid  float64   `json:"invalid"`
		WrongK   float64   `json:"wrong_k"`
		GateMode float64   `json:"gate_mode"`
		Window1  float64   `json:"window1"`
		Batch    []float64 `json:"batch"`
		TRL      []float64 `json:"trl"`
		Other    string    `json:"other"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"verl compute_score", got.Verl, full},
		{"a rollout without a think block", got.Invalid, 0},
		{"a rollout with the wrong K", got.WrongK, 0},
		{"gate mode", got.GateMode, Epsilon},
		{"window 1", got.Window1, window1},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s: reward %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(got.Batch) != 2 || !near(got.Batch[0], full) || got.Batch[1] != 0 {
		t.Errorf("compute_score_batch = %v, want [%v 0]", got.Batch, full)
	}
	if len(got.TRL) != 2 || !near(got.TRL[0], full) || !near(got.TRL[1], full) {
		t.Errorf("grpo_reward = %v, want [%v %v] (a conversational and a plain completion)", got.TRL, full, full)
	}
	if !strings.Contains(got.Other, "is not 'groundwork/ideation'") {
		t.Errorf("another data_source without verl: %q", got.Other)
	}
	// Judges are asked only for valid rollouts: per scoring, 2 impact calls
	// per card (both orderings) and the distances to earlier cards (1 + 2;
	// 1 + 1 with window 1) of cards with q > 0. Scored with judges: verl,
	// window1, batch[0], trl ×2.
	impact, similarity := srv.calls()
	if impact != 5*6 || similarity != 4*3+2 {
		t.Errorf("%d impact and %d similarity calls, want %d and %d", impact, similarity, 5*6, 4*3+2)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	models := map[string]bool{}
	orders := map[string]bool{}
	for _, r := range srv.requests {
		models[r.Model] = true
		if r.Auth != "Bearer sk-test" || r.Temperature != 0 {
			t.Errorf("request with Authorization %q, temperature %v", r.Auth, r.Temperature)
		}
		if strings.HasPrefix(r.Messages[1].Content, "Idea A:\nproblem_gap: [Evidence Gap] Gold gap.") {
			orders["gold first"] = true
		} else if strings.HasPrefix(r.Messages[1].Content, "Idea A:\n") {
			orders["idea first"] = true
		}
	}
	if !models["impact-judge"] || !models["distance-judge"] || len(models) != 2 {
		t.Errorf("models asked: %v", models)
	}
	if !orders["gold first"] || !orders["idea first"] {
		t.Errorf("the impact judge did not see both orderings: %v", orders)
	}
}
