package guards

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// TestRunMisbehavingLLM runs the pipeline on the demo corpus against an
// OpenAI-compatible endpoint that never answers validly: the run ends with
// every target named as failed with its reason, token totals printed, and
// the planted API key nowhere in the output or the store.
func TestRunMisbehavingLLM(t *testing.T) {
	const key = "sk-PLANTED-cli-0123456789"
	// It takes only the planted key, and answers in prose.
	llm := simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMKey: key, LLMAnswer: func(sim.LLMRequest) (sim.LLMReply, bool) {
		return sim.LLMReply{Text: "I would rather not answer in JSON.", Usage: &sim.LLMUsage{Prompt: 100, Completion: 10}}, true
	}})
	srv, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"LLM_API_KEY": key}
	code, out, stderr := clitest.Run(t, env, "run", "--store", dir, "--targets", clitest.WriteTargets(t, demo.TargetIDs()),
		"--arxiv-base", srv.URL(sim.Arxiv), "--ar5iv-base", srv.URL(sim.Ar5iv), "--arxiv-interval", "1ms",
		"--s2-base", srv.URL(sim.S2), "--arxiv-api-base", srv.URL(sim.ArxivAPI), "--oai-base", srv.OAIBase(), "--s2-interval", "1ms",
		"--llm-base", llm.BaseURL(), "--llm-model", "fake-1", "--price", "fake-1=1/2", "--log", "debug")
	if code != 1 {
		t.Errorf("exit %d, want 1 (targets failed)", code)
	}
	for _, id := range demo.TargetIDs() {
		if !strings.Contains(out, id+"\tclassify\tfailed\t") {
			t.Errorf("target %s not named as failed in classify:\n%s", id, out)
		}
	}
	if !strings.Contains(stderr, "classify") || !strings.Contains(stderr, "fake-1") || !strings.Contains(stderr, "$0.") {
		t.Errorf("no LLM usage and cost in the summary:\n%s", stderr)
	}
	calls := llm.Calls()
	if len(calls) == 0 {
		t.Fatal("the endpoint was never called")
	}
	for _, c := range calls {
		if c.Status != http.StatusOK {
			t.Fatalf("the endpoint answered %d: curate did not send the key", c.Status)
		}
	}
	if strings.Contains(out+stderr, key) {
		t.Errorf("the API key leaked into the output")
	}
	// Every file (the ledger included) and every blob, decompressed.
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blobs := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if name, ok := strings.CutSuffix(d.Name(), ".zst"); ok {
			if b, err = st.Blob(store.Hash(name)); err != nil {
				return err
			}
			blobs++
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the API key is in %s", p)
		}
		return nil
	})
	if err != nil || blobs == 0 {
		t.Fatalf("scanned %d blobs: %v", blobs, err)
	}
}
