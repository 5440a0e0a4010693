package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// TestModelsCommand: curate models prints the table, what curate sends a
// named model (nothing it refuses), and its --json is a table --models
// reads back; a broken --models file is a usage error naming it.
func TestModelsCommand(t *testing.T) {
	code, stdout, stderr := clitest.Run(t, nil, "models")
	if code != 0 || !strings.Contains(stdout, "claude-opus-4-8*") || !strings.Contains(stdout, "gpt-5.4-mini*") ||
		!strings.Contains(stdout, "qwen3-8b*") || !strings.Contains(stdout, "gemini-3.5-flash*") || !strings.Contains(stdout, "gpt-oss-120b") {
		t.Errorf("curate models: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, tt := range []struct {
		args []string
		want []string
		lack []string
	}{
		{[]string{"gpt-5-mini"}, []string{"gpt-5-mini (openai)", "temperature: not sent", `"max_completion_tokens"`, `"strict": true`, "price (the model table)"}, []string{`"temperature"`, `"max_tokens"`}},
		{[]string{"claude-opus-4-7"}, []string{"(anthropic)", "lengthened by the worked examples", `"output_config"`}, []string{`"temperature"`}},
		{[]string{"claude-sonnet-4-20250514"}, []string{"a forced tool without strict", `"tool_choice"`}, []string{`"strict"`, `"output_config"`}},
		{[]string{"--price", "claude-haiku-4-5=2/10", "claude-haiku-4-5"}, []string{"price (--price): $2/10"}, nil},
		{[]string{"--llm-provider", "compatible", "Qwen/Qwen3-8B"}, []string{"row compatible \"qwen3-8b*\"", "price: none in the table"}, nil},
		{[]string{"a-model-nobody-made"}, []string{"not in the model table"}, nil},
	} {
		code, stdout, stderr := clitest.Run(t, nil, append([]string{"models", "--store", filepath.Join(t.TempDir(), "none")}, tt.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", tt.args, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%v: lacks %q:\n%s", tt.args, w, stdout)
			}
		}
		for _, w := range tt.lack {
			if strings.Contains(stdout, w) {
				t.Errorf("%v: has %q:\n%s", tt.args, w, stdout)
			}
		}
	}
	dir := t.TempDir()
	_, table, _ := clitest.Run(t, nil, "models", "--json")
	f := filepath.Join(dir, "models.json")
	os.WriteFile(f, []byte(table), 0o644)
	if code, stdout, stderr := clitest.Run(t, nil, "models", "--models", f); code != 0 || !strings.Contains(stdout, "claude-opus-4-8*") {
		t.Errorf("the --json table read back: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"models":[{"provider":"openai","match":"x","token_param":"max_tokens","structured":"prompt","cache":"none"}]}`), 0o644)
	if code, _, stderr := clitest.Run(t, nil, "models", "--models", bad); code != 2 || !strings.Contains(stderr, "bad.json") || !strings.Contains(stderr, "no source") {
		t.Errorf("a broken --models file: exit %d\n%s", code, stderr)
	}
}

// TestEstimatePrices: an estimate given a price and no model, or a model
// that neither --price nor the model table prices, says so and exits 2
// before anything is read; a model the table prices is estimated with its
// price, a self-hosted one the table knows without one.
func TestEstimatePrices(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"estimate", "--price", "gpt-4o-mini=0.15/0.60"}, 2, "--price is given but no model"},
		{[]string{"run", "--dry-run", "--price", "gpt-4o-mini=0.15/0.60"}, 2, "--price is given but no model"},
		{[]string{"estimate", "--llm-provider", "openai", "--llm-model", "no-such-model"}, 2, "no price for no-such-model: the model table does not know it"},
		{[]string{"estimate", "--llm-provider", "openai", "--llm-model", "no-such-model", "--price", "no-such-model=1/2"}, 0, "llm cost: $"},
		{[]string{"estimate", "--llm-provider", "openai", "--llm-model", "gpt-5.4-mini"}, 0, "llm cost: $"},
		{[]string{"estimate", "--llm-provider", "anthropic", "--llm-model", "claude-opus-4-8", "--llm-mode", "batch"}, 0, "one request of each batch sent ahead to write it"},
		{[]string{"estimate", "--llm-base", "http://127.0.0.1:8000/v1", "--llm-model", "Qwen/Qwen3-8B"}, 0, "no price for Qwen/Qwen3-8B"},
	} {
		args := append(append([]string{}, tt.args...), "--store", filepath.Join(dir, "store"), "2401.00001")
		code, stdout, stderr := clitest.Run(t, nil, args...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an estimate left %v", entries)
	}
}
