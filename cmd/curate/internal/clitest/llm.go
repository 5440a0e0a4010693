package clitest

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// Provider is how a test points curate at one of the simulated LLM
// services: the flags after the world's own (which name the
// OpenAI-compatible service and its model).
func Provider(s *sim.Servers, provider, mode string) []string {
	var f []string
	switch provider {
	case "compatible":
		f = []string{"--llm-provider", "compatible"}
	case "openai":
		f = []string{"--llm-provider", "openai"}
	case "anthropic":
		f = []string{"--llm-provider", "anthropic", "--llm-base", s.URL(sim.Anthropic), "--llm-model", "claude-sonnet-4-6"}
	}
	f = append(f, "--llm-mode", mode)
	if mode == "batch" {
		f = append(f, "--llm-poll-interval", "5ms")
	}
	return f
}

// Prices prices the simulated models as their real counterparts.
const Prices = "sim-1=2.5/10/1.25,claude-sonnet-4-6=3/15/0.30/3.75"

// UsageColumn returns a stage's value in the named column of the LLM
// usage table curate prints on stderr.
func UsageColumn(t testing.TB, stderr, stage, column string) string {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "LLM usage") })
	if h < 0 {
		t.Fatalf("no usage table in:\n%s", stderr)
	}
	cols := splitColumns(lines[h])
	i := slices.Index(cols, column)
	if i < 0 {
		t.Fatalf("no column %q in %q", column, cols)
	}
	for _, l := range lines[h+1:] {
		f := splitColumns(l)
		if len(f) == len(cols) && f[0] == stage {
			return f[i]
		}
	}
	t.Fatalf("no usage row for %s in:\n%s", stage, stderr)
	return ""
}

// columnGap separates the columns of curate's tables.
var columnGap = regexp.MustCompile(`\s{2,}`)

func splitColumns(l string) []string { return columnGap.Split(strings.TrimSpace(l), -1) }
