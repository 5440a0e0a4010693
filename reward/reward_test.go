package reward

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/internal/trainerconf"
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
	py := python3(t)
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

// modelsServer answers GET /v1/models as an OpenAI-compatible server does
// (a list of model ids, or status) and counts the requests; chat
// completions answer as an impact judge preferring the idea shown first.
type modelsServer struct {
	status int
	models []string
	mu     sync.Mutex
	probes int
}

func (s *modelsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.mu.Lock()
		s.probes++
		s.mu.Unlock()
		if s.status != 0 {
			http.Error(w, `{"error":{"message":"no"}}`, s.status)
			return
		}
		var data []any
		for _, m := range s.models {
			data = append(data, map[string]any{"id": m, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		var req judgeRequest
		json.NewDecoder(r.Body).Decode(&req)
		answer := `{"winner": "A"}`
		if len(req.Messages) == 2 && !strings.Contains(req.Messages[0].Content, "long-term scientific impact") {
			answer = `{"problem_gap": 1, "core_claim": 1, "method": 1}`
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}}}})
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

// TestRewardFailsFast: the reward checks its judges once, at its first
// call and before the gate, so a job without judges (or with judges it
// cannot use) stops at its first rollout, whatever that rollout is, with
// a message naming the settings to fix; gate mode needs none. The first
// call here scores a rollout that fails the gate.
func TestRewardFailsFast(t *testing.T) {
	py := python3(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/v1"
	closed.Close()
	good := &modelsServer{models: []string{"impact-judge", "other"}}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	script := `
import json, sys
sys.path.insert(0, sys.argv[1])
import groundwork_reward as r
out = {}
for name, call in (("verl", lambda: r.compute_score("groundwork/ideation", "no blocks", "{}", {"num_ideas": 3})),
                   ("trl", lambda: r.grpo_reward(completions=["no blocks"], gold=["{}"], num_ideas=[3]))):
    try:
        out[name] = call()
    except r.JudgeError as e:
        out[name] = "JudgeError: " + str(e)
print(json.dumps(out))
`
	tests := []struct {
		name string
		env  []string
		srv  *modelsServer
		want []string // in the message of both entry points; none: they score
	}{
		{"no settings", nil, nil, []string{"no judges are configured", "GROUNDWORK_QUALITY_URL", "+custom_reward_function.reward_kwargs.quality_url", "GROUNDWORK_QUALITY_MODEL", "GROUNDWORK_REWARD_MODE=gate"}},
		{"no model", []string{"GROUNDWORK_QUALITY_URL=" + goodSrv.URL + "/v1"}, nil, []string{"has no model", "GROUNDWORK_QUALITY_MODEL"}},
		{"a model without an endpoint", []string{"GROUNDWORK_QUALITY_MODEL=impact-judge"}, nil, []string{"no endpoint", "GROUNDWORK_QUALITY_URL"}},
		{"unreachable", []string{"GROUNDWORK_QUALITY_URL=" + closedURL, "GROUNDWORK_QUALITY_MODEL=impact-judge"}, nil, []string{"cannot reach the judge at " + closedURL, "GROUNDWORK_QUALITY_URL"}},
		{"key refused", []string{"GROUNDWORK_QUALITY_MODEL=impact-judge"}, &modelsServer{status: http.StatusUnauthorized}, []string{"refused the API key", "GROUNDWORK_QUALITY_API_KEY", "OPENAI_API_KEY"}},
		{"model not served", []string{"GROUNDWORK_QUALITY_MODEL=impact-judge"}, &modelsServer{models: []string{"llama"}}, []string{"serves no model 'impact-judge'", "llama", "GROUNDWORK_QUALITY_MODEL"}},
		{"distance model not served", []string{"GROUNDWORK_QUALITY_MODEL=impact-judge", "GROUNDWORK_DISTANCE_MODEL=dist"}, &modelsServer{models: []string{"impact-judge"}}, []string{"serves no model 'dist'", "GROUNDWORK_DISTANCE_MODEL"}},
		{"a server without /models", []string{"GROUNDWORK_QUALITY_MODEL=impact-judge"}, &modelsServer{status: http.StatusNotFound}, nil},
		{"judges there", []string{"GROUNDWORK_QUALITY_URL=" + goodSrv.URL + "/v1", "GROUNDWORK_QUALITY_MODEL=impact-judge"}, nil, nil},
		{"gate mode", []string{"GROUNDWORK_REWARD_MODE=gate"}, nil, nil},
		{"a mode that is none", []string{"GROUNDWORK_REWARD_MODE=gates"}, nil, []string{"GROUNDWORK_REWARD_MODE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if tt.srv != nil {
				ts := httptest.NewServer(tt.srv)
				defer ts.Close()
				env = append(env, "GROUNDWORK_QUALITY_URL="+ts.URL+"/v1")
			}
			cmd := exec.Command(py, "-c", strings.Replace(script, `except r.JudgeError as e:`, `except (r.JudgeError, ValueError) as e:`, 1), ".")
			cmd.Env = append(cleanEnv(), env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v\n%s", err, stderr.String())
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, entry := range []string{"verl", "trl"} {
				msg, _ := got[entry].(string)
				if tt.want == nil {
					if msg != "" {
						t.Errorf("%s: %s", entry, msg)
					}
					continue
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("%s: %q lacks %q", entry, got[entry], w)
					}
				}
			}
		})
	}
	// Reachability is asked once per setting, however many rollouts are
	// scored at once: one /models request per process here (two judges
	// on one endpoint and model are one).
	cmd := exec.Command(py, "-c", `
import sys
sys.path.insert(0, ".")
import groundwork_reward as r
r.compute_score_batch(["groundwork/ideation"] * 32, ["no blocks"] * 32, ["{}"] * 32, [{"num_ideas": 3}] * 32)
r.compute_score("groundwork/ideation", "no blocks", "{}", {"num_ideas": 3})
`)
	cmd.Env = append(cleanEnv(), "GROUNDWORK_QUALITY_URL="+goodSrv.URL+"/v1", "GROUNDWORK_QUALITY_MODEL=impact-judge", "GROUNDWORK_WORKERS=16")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	good.mu.Lock()
	defer good.mu.Unlock()
	if good.probes != 1+2 { // this process, and "judges there" (verl, trl: one process, one reward each)
		t.Errorf("%d /models requests, want 3 (one per reward built)", good.probes)
	}
}

// cleanEnv is the environment without the reward's settings.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GROUNDWORK_") && !strings.HasPrefix(kv, "OPENAI_API_KEY=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestScoreRangeAndNormalized: a valid rollout scores between ε and ε + K,
// and the normalised entry points divide by ε + K.
func TestScoreRangeAndNormalized(t *testing.T) {
	py := python3(t)
	srv := &modelsServer{models: []string{"impact-judge"}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cards := []record.Card{
		{ProblemGap: "[Evidence Gap] A.", CoreClaim: "We claim that A.", Method: "[Empirical Mapping] A.", Inspiration: "Document 1."},
		{ProblemGap: "[Scope Mismatch] B.", CoreClaim: "We claim that B.", Method: "[Relax / Extend Scope] B.", Inspiration: "Document 2."},
	}
	completion, err := gate.Format("t", cards)
	if err != nil {
		t.Fatal(err)
	}
	// The judge always prefers the idea shown first (q = 0.5 each) and
	// rates every field 1 (d = 1): ε + 0.5 + 0.5·1.
	want := Epsilon + 1.0
	cmd := exec.Command(py, "-c", `
import json, sys
sys.path.insert(0, ".")
import groundwork_reward as r
c, k = sys.argv[1], 2
gold = '{"problem_gap":"[Evidence Gap] G.","core_claim":"We claim G.","method":"[Empirical Mapping] G.","inspiration":"Document 1."}'
print(json.dumps({
  "raw": r.compute_score("groundwork/ideation", c, gold, {"num_ideas": k}),
  "norm": r.compute_score_normalized("groundwork/ideation", c, gold, {"num_ideas": k}),
  "batch_norm": r.compute_score_batch_normalized(["groundwork/ideation"], [c], [gold], [{"num_ideas": k}]),
  "grpo_norm": r.grpo_reward_normalized(completions=[c], gold=[gold], num_ideas=[k]),
  "kwarg_norm": r.compute_score("groundwork/ideation", c, gold, {"num_ideas": k}, normalize="1"),
  "max": r.max_score(k),
}))`, completion)
	cmd.Env = append(cleanEnv(), "GROUNDWORK_QUALITY_URL="+ts.URL+"/v1", "GROUNDWORK_QUALITY_MODEL=impact-judge")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	var got struct {
		Raw       float64   `json:"raw"`
		Norm      float64   `json:"norm"`
		KwargNorm float64   `json:"kwarg_norm"`
		Max       float64   `json:"max"`
		BatchNorm []float64 `json:"batch_norm"`
		GRPONorm  []float64 `json:"grpo_norm"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(got.Raw, want) || !near(got.Max, Epsilon+2) || got.Raw < Epsilon || got.Raw > got.Max {
		t.Errorf("raw %v (want %v), max %v (want %v)", got.Raw, want, got.Max, Epsilon+2)
	}
	n := want / (Epsilon + 2)
	if !near(got.Norm, n) || !near(got.KwargNorm, n) || len(got.BatchNorm) != 1 || !near(got.BatchNorm[0], n) || len(got.GRPONorm) != 1 || !near(got.GRPONorm[0], n) {
		t.Errorf("normalised %v, batch %v, grpo %v; want %v", got.Norm, got.BatchNorm, got.GRPONorm, n)
	}
}

// python3 returns the Python interpreter python3 on PATH runs (a version
// manager's shim is a shell script that takes a second to start: asked
// once, the tests run the interpreter itself), skipping without one.
func python3(t *testing.T) string {
	t.Helper()
	pythonOnce.Do(func() {
		path, err := exec.LookPath("python3")
		if err != nil {
			pythonErr = err
			return
		}
		out, err := exec.Command(path, "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			pythonErr = fmt.Errorf("%s: %w", path, err)
			return
		}
		pythonPath = strings.TrimSpace(string(out))
	})
	if pythonErr != nil {
		testneeds.Skip(t, testneeds.Python, "the Python reward is not run: %v", pythonErr)
	}
	return pythonPath
}

var (
	pythonOnce sync.Once
	pythonPath string
	pythonErr  error
)

// TestDocstringSettings: the verl settings the reward's docstring prints
// are ones verl takes at the commit the exports name (the recorded
// excerpts of internal/trainerconf).
func TestDocstringSettings(t *testing.T) {
	schemas, err := trainerconf.Load(filepath.Join("..", "internal", "trainerconf", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, ok := strings.Cut(strings.TrimPrefix(string(source), `"""`), `"""`)
	if !ok {
		t.Fatal("no docstring")
	}
	// The docstring's verl lines, as the one main_ppo command they are
	// settings of.
	var words []string
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "    ") && strings.Contains(line, "=") && strings.Contains(line, ".") {
			for _, w := range strings.Fields(line) {
				if k, _, _ := strings.Cut(w, "="); strings.Contains(k, ".") && !strings.ContainsAny(k, "()") && strings.ToLower(k) == k {
					words = append(words, w)
				}
			}
		}
	}
	problems, checked := schemas.Check("```\npython3 -m verl.trainer.main_ppo "+strings.Join(words, " ")+"\n```\n", trainerconf.Options{})
	for _, p := range problems {
		t.Errorf("docstring: %v", p)
	}
	if len(checked) < 5 {
		t.Errorf("docstring: only %v checked", checked)
	}
	for _, fn := range []string{"compute_score", "compute_score_batch", "compute_score_normalized"} {
		if !strings.Contains(doc, fn) {
			t.Errorf("the docstring does not name %s", fn)
		}
	}
}
