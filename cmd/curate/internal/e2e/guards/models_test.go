package guards

import (
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

// TestE2EModels runs curate against simulated providers that apply the
// providers' documented per-model rules (temperature and max_tokens on
// gpt-5*, sampling parameters on Opus 4.7+, structured outputs and strict
// tools before Claude 4.5, least cacheable prefixes, reasoning counted as
// output): with each model (the and the recipe's gpt-5.4-mini and
// claude-opus-4-8) the run publishes rows, and no request is refused, in
// sync and in batch mode; on claude-sonnet-4-6 the prompt
// cache serves reads, the gold cards reading the paper their target's
// classify call wrote.
func TestE2EModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs curate ten times")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 6}
	for _, tc := range []struct{ provider, model, mode string }{
		{"openai", "gpt-5-mini", "sync"},
		{"openai", "gpt-5-mini", "batch"},
		{"anthropic", "claude-opus-4-7", "sync"},
		{"anthropic", "claude-sonnet-4-20250514", "sync"},
		{"anthropic", "claude-sonnet-4-20250514", "batch"},
		{"anthropic", "claude-haiku-4-5", "sync"},
		{"anthropic", "claude-haiku-4-5", "batch"},
		{"anthropic", "claude-sonnet-4-6", "sync"},
		// The recipe's OpenAI and Claude models.
		{"openai", "gpt-5.4-mini", "sync"},
		{"anthropic", "claude-opus-4-8", "batch"},
	} {
		t.Run(tc.model+"/"+tc.mode, func(t *testing.T) {
			s := clitest.Sim(t, world, sim.Options{})
			dir := t.TempDir()
			flags := append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn"}, clitest.Provider(s, tc.provider, tc.mode)...)
			flags = append(flags, "--llm-model", tc.model)
			if tc.mode == "batch" {
				flags = append(flags, "--llm-wait", "2m")
			}
			code, stdout, stderr := clitest.Run(t, map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}, clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if in, _ := clitest.Dataset(t, dir+"/dataset"); len(in) == 0 {
				t.Errorf("no row published:\n%s", stderr)
			}
			name := map[string]string{"openai": sim.LLM, "anthropic": sim.Anthropic}[tc.provider]
			for _, c := range s.Service(name).Calls() {
				if c.Status >= 400 {
					t.Errorf("%s %s answered %d", c.Method, c.Path, c.Status)
				}
			}
			for _, refused := range []string{"refused part of the request", "rejects the structured output", "llm answer invalid", "cut at its limit"} {
				if strings.Contains(stderr, refused) {
					t.Errorf("stderr says %q:\n%s", refused, stderr)
				}
			}
			for _, stage := range []string{"classify", "summarize"} {
				if f := clitest.UsageColumn(t, stderr, stage, "failed"); f != "0" {
					t.Errorf("%s: %s failed calls", stage, f)
				}
			}
			t.Logf("%s", stderr[strings.Index(stderr, "LLM usage"):])
			if tc.model != "claude-sonnet-4-6" {
				return
			}
			for _, stage := range []string{"classify", "summarize"} {
				read := strings.Fields(clitest.UsageColumn(t, stderr, stage, "from prompt cache"))
				if n, _ := strconv.Atoi(read[0]); n == 0 {
					t.Errorf("%s: no input read from the prompt cache:\n%s", stage, stderr)
				}
				if pc := clitest.UsageColumn(t, stderr, stage, "prompt cache"); !strings.HasPrefix(pc, "saved $") {
					t.Errorf("%s: the usage table says the prompt cache %q", stage, pc)
				}
			}
		})
	}
}

// TestE2ERefusal: a model's refusal fails its target, named, and is not
// asked again of the same model; --llm-fallback-model asks another model
// on the same endpoint once.
func TestE2ERefusal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs curate twice")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 8}
	run := func(extra ...string) (code int, stdout, stderr string, refused int) {
		s := clitest.Sim(t, world, sim.Options{Faults: map[string]sim.Faults{sim.LLM: {PRefusal: 0.3}}})
		dir := t.TempDir()
		flags := append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn"}, clitest.Provider(s, "openai", "sync")...)
		flags = append(append(flags, "--llm-model", "gpt-4o-mini"), extra...)
		code, stdout, stderr = clitest.Run(t, nil, clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags...)...)
		return code, stdout, stderr, strings.Count(stdout, "refused to answer")
	}
	code, stdout, stderr, refused := run()
	if code != 1 || refused == 0 {
		t.Fatalf("without a fallback: exit %d, %d refusals named\n%s\n%s", code, refused, stdout, stderr)
	}
	_, stdout2, stderr2, refused2 := run("--llm-fallback-model", "gpt-4o")
	t.Logf("refusals named: %d without a fallback, %d with one", refused, refused2)
	if refused2 >= refused || !strings.Contains(stderr2, "asking the fallback model") {
		t.Errorf("with a fallback: %d refusals named (without: %d)\n%s\n%s", refused2, refused, stdout2, stderr2)
	}
}
