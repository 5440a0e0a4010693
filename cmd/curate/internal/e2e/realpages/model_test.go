package realpages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// A careful reader of real papers, as the simulated model plays it for
// curate's classify and tuples tasks (the cards are the simulated
// model's own, sim.CurateModel): it reads what the prompt gives, the
// paper block and the references with the sentences citing them, and
// quotes them as a model types them back.

var (
	classifyTask = regexp.MustCompile(`(?m)^Task: classify the (\d+) references`)
	tupleTask    = regexp.MustCompile(`(?m)^Task: write the idea tuple`)
	refHead      = regexp.MustCompile(`^\[(\d+)\] `)
	// What a model types differently from the page: typography, and the
	// space a conversion leaves before a mark where it took a footnote
	// mark or a citation key out.
	spaceBeforeMark = regexp.MustCompile(`\s+([,.;:!?)\]])`)
	asciiTypography = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`, "\u2013", "-", "\u2014", "-", "\u00a0", " ")
)

func retype(s string) string {
	return spaceBeforeMark.ReplaceAllString(asciiTypography.Replace(s), "$1")
}

func promptText(r sim.LLMRequest) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "user" {
			b.WriteString(m.Content + "\n")
		}
	}
	return b.String()
}

// readerModel answers the classify task with the four references cited
// most often in the paper as its sources (each labelled, reasoned and
// quoted by its own citing sentence, typed back), and the tuples task
// with a claim of its own words in every field, each quoting a sentence
// of the paper block typed back, those with formulas, spaced marks and
// non-ASCII characters first.
func readerModel(r sim.LLMRequest) (sim.LLMReply, bool) {
	text := promptText(r)
	switch {
	case classifyTask.MatchString(text):
		return sim.Say(classifyReading(text)), true
	case tupleTask.MatchString(text):
		return sim.Say(tupleReading(text)), true
	}
	return sim.CurateModel(r)
}

func classifyReading(text string) string {
	n, _ := strconv.Atoi(classifyTask.FindStringSubmatch(text)[1])
	block := text[strings.Index(text, "<references>"):]
	mentions := map[int][]string{}
	titles := map[int]string{}
	cur := 0
	for _, line := range strings.Split(block, "\n") {
		if m := refHead.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.Atoi(m[1])
			titles[cur] = strings.TrimPrefix(line, m[0])
			continue
		}
		if s, ok := strings.CutPrefix(line, "- "); ok && cur > 0 && len(strings.Fields(s)) >= 6 {
			mentions[cur] = append(mentions[cur], s)
		}
	}
	var ranked []int
	for k := range mentions {
		ranked = append(ranked, k)
	}
	slices.SortFunc(ranked, func(a, b int) int {
		if d := len(mentions[b]) - len(mentions[a]); d != 0 {
			return d
		}
		return a - b
	})
	sources := map[int]int{}
	for i, k := range ranked[:min(4, len(ranked))] {
		sources[k] = i
	}
	labels := []string{"foundation", "motivates", "extends", "exposes_gap"}
	type ref struct {
		N         int      `json:"n"`
		Role      string   `json:"role"`
		Labels    []string `json:"labels"`
		Rationale string   `json:"rationale"`
		Quotes    []string `json:"quotes"`
	}
	out := []ref{}
	for k := 1; k <= n; k++ {
		r := ref{N: k, Role: "other", Labels: []string{}, Quotes: []string{}}
		if i, ok := sources[k]; ok {
			r.Role, r.Labels = "source", []string{labels[i]}
			r.Rationale = fmt.Sprintf("The paper cites %q %d times where it sets out its own work.", titles[k], len(mentions[k]))
			r.Quotes = []string{retype(mentions[k][0])}
		}
		out = append(out, r)
	}
	b, _ := json.Marshal(map[string]any{"references": out, "card": nil, "idea": nil})
	return string(b)
}

func tupleReading(text string) string {
	block := text
	if i := strings.Index(block, "<paper>"); i >= 0 {
		block = block[i:]
	}
	if i := strings.Index(block, "</paper>"); i >= 0 {
		block = block[:i]
	}
	var ss []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "Title: ") || strings.HasPrefix(line, "Text: ") || strings.HasPrefix(line, "[Left out") {
			continue
		}
		for _, s := range paperprompt.Sentences(line) {
			if n := len(strings.Fields(s)); n >= 6 && n <= 80 && !slices.Contains(ss, s) {
				ss = append(ss, s)
			}
		}
	}
	hard := func(s string) int {
		n := 0
		if strings.Contains(s, `\`) {
			n += 4
		}
		if retype(s) != s {
			n += 3
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r > 127 }) {
			n += 2
		}
		return n
	}
	slices.SortStableFunc(ss, func(a, b string) int { return hard(b) - hard(a) })
	next := 0
	claim := func(kind string, k int) map[string]any {
		s := ss[next%max(len(ss), 1)]
		next++
		return map[string]any{"claim": fmt.Sprintf("The paper states a point of kind %s, number %d.", kind, k), "quote": retype(s)}
	}
	idea := map[string]any{}
	for _, f := range record.TupleFields {
		kind := strings.ReplaceAll(f, "_", " ")
		cs := []map[string]any{claim(kind, 1)}
		if f != record.TupleSummary {
			cs = append(cs, claim(kind, 2))
		}
		if f == record.TupleMethods {
			cs[0]["steps"] = []map[string]any{claim("method step", 1)}
		}
		idea[f] = cs
	}
	b, _ := json.Marshal(map[string]any{"references": []any{}, "card": nil, "idea": idea})
	return string(b)
}

// TestE2ERealPagesModel runs the real pages with the simulated model
// (OpenAI's protocol, structured output) playing a careful reader for
// classify and the idea tuples: the tuples are the model's, one call per
// target, each quote typed back as a model types it (ASCII typography, no
// space before a mark where the page has one) and stored as the page's
// own words; every exported idea is complete and quotes the recorded
// page verbatim.
func TestE2ERealPagesModel(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	c, docs := realCorpus(t)
	s, err := sim.Start(c, sim.Options{Services: []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH, sim.LLM}, LLMAnswer: readerModel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	work := t.TempDir()
	storeDir, ds := filepath.Join(work, "store"), filepath.Join(work, "ds")
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	args := append([]string{"run", "--store", storeDir, "--out", ds, "--targets", targetsFile(t), "--post-knowledge", "3", "--test-from", "2025-09-01",
		"--oai-versions", "--oai-base", s.URL(sim.OAIPMH) + sim.OAIPath, "--oai-harvest", "all",
		"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1", "--log", "warn"}, s.Flags()...)
	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	pub, err := dataset.ReadDataset(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Instances) < len(realTargets)-1 {
		t.Fatalf("%d instances of %d targets: dropped %+v", len(pub.Instances), len(realTargets), pub.Dropped)
	}
	st, err := store.OpenReadOnly(context.Background(), storeDir)
	if err != nil {
		t.Fatal(err)
	}
	retyped := 0
	for _, in := range pub.Instances {
		r, ok, err := record.IdeaTupleSets.Lookup(context.Background(), st, in.Target.ArxivID)
		if err != nil || !ok || r.Backend != record.TupleBackendLLM || r.Model != sim.Model || r.Unverified != 0 || len(r.Missing) != 0 {
			t.Errorf("%s: tuple %+v %v", in.Target.ArxivID, r, err)
			continue
		}
		text := pageText(docs[in.Target.ArxivID])
		for _, f := range record.TupleFields {
			for _, cl := range r.Idea.Claims(f) {
				if !strings.Contains(text, collapse(cl.Quote)) {
					t.Errorf("%s %s: stored quote %q is not the page's text", in.Target.ArxivID, f, cl.Quote)
				} else if retype(cl.Quote) != cl.Quote {
					retyped++ // the model typed it otherwise; the page's words were kept
				}
			}
		}
	}
	st.Close()
	if retyped == 0 {
		t.Error("no quote was typed back otherwise than the page has it: the run proves nothing of verification")
	}
	if calls := clitest.UsageColumn(t, stderr, "tuples", "calls"); calls != strconv.Itoa(len(pub.Instances)) && calls != strconv.Itoa(len(realTargets)) {
		t.Errorf("%s tuples calls for %d instances", calls, len(pub.Instances))
	}

	out := filepath.Join(work, "innoeval")
	if code, _, stderr := clitest.Run(t, nil, "export", "--format", "innoeval", "--encoding", "jsonl", "--out", out, ds); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	n := 0
	for _, split := range []string{"train", "validation", "test"} {
		b, err := os.ReadFile(filepath.Join(out, split+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			var row dataset.InnoEvalRow
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			n++
			text := pageText(docs[row.InstanceID])
			for _, f := range record.TupleFields {
				if record.TupleRequired(f) && len(row.Idea.Claims(f)) == 0 {
					t.Errorf("%s: no claim in %s", row.InstanceID, f)
				}
				for _, cl := range row.Idea.Claims(f) {
					if !strings.Contains(text, collapse(cl.Quote)) || strings.Contains(cl.Quote, revisionMark) {
						t.Errorf("%s %s: exported quote %q is not the recorded page's", row.InstanceID, f, cl.Quote)
					}
				}
			}
			if len(row.PostKnowledge) != 2 {
				t.Errorf("%s: %d post-knowledge papers, want 2", row.InstanceID, len(row.PostKnowledge))
			}
		}
	}
	if n != len(pub.Instances) {
		t.Errorf("%d rows exported of %d instances", n, len(pub.Instances))
	}
	t.Logf("%d instances; %d stored quotes the model typed otherwise than the page", len(pub.Instances), retyped)
}
