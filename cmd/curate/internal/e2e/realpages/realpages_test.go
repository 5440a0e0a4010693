package realpages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

// serve starts the services over the real corpus, the LLMs left out (the
// runs use the heuristic backend), and returns the flags that point
// curate at them, with the knowledge cut's versions from OAI-PMH.
func serve(t *testing.T) (*sim.Servers, map[string]*record.Document, []string) {
	t.Helper()
	c, docs := realCorpus(t)
	s, err := sim.Start(c, sim.Options{Services: []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	flags := []string{
		"--arxiv-base", s.URL(sim.Arxiv), "--ar5iv-base", s.URL(sim.Ar5iv), "--s2-base", s.URL(sim.S2), "--arxiv-api-base", s.URL(sim.ArxivAPI),
		"--oai-versions", "--oai-base", s.URL(sim.OAIPMH) + sim.OAIPath, "--oai-harvest", "all",
		"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1", "--log", "warn",
	}
	return s, docs, flags
}

func targetsFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, tg := range realTargets {
		b.WriteString(tg.id + "\n")
	}
	path := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pageText is the text of a page a quote must be found in: its prose as
// parsed, and its citing sentences (footnotes, captions), whitespace
// collapsed.
func pageText(doc *record.Document) string {
	text := collapse(latexml.FullText(doc))
	for _, m := range doc.Mentions {
		text += "\n" + collapse(m.Sentence)
	}
	return text
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestE2ERealPages runs curate over recorded real pages (seven targets
// of five fields, heuristic backend, --post-knowledge 3; 2507.13317's
// classification, every source labelled foundation, is held as suspect
// and kept with --include-suspect), then exports the dataset as innoeval.
// Every target is read at v1 where arXiv has its page (html/IDv1; the v2
// arXiv serves now of 2507.11127 is never asked for) and as ar5iv serves
// it where not (1706.03762); the knowledge cutoff is the v1 date; each
// source on arXiv records the version read and its date by its history
// (none has a page here: read from its abstract as served now, marked
// when revised after the cutoff). The paper S2 lists for 2507.11127 that
// was first published after its v1 is no source and never fetched: the
// v1 page has no sentence citing it to quote. Under strict no source
// kept is dated after its cutoff and --check passes. Every exported idea
// has a claim in each required field, every quote found verbatim in the
// recorded page's text (none of a later version's); post-knowledge is
// the two citing papers dated after the cutoff, the influential first;
// pre-knowledge the instance's sources. A second run asks no service
// anything.
func TestE2ERealPages(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s, docs, flags := serve(t)
	work := t.TempDir()
	storeDir, ds := filepath.Join(work, "store"), filepath.Join(work, "ds")
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	run := append([]string{"run", "--store", storeDir, "--out", ds, "--targets", targetsFile(t),
		"--post-knowledge", "3", "--include-suspect", "--test-from", "2025-09-01"}, flags...)
	code, stdout, stderr := clitest.Run(t, env, run...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// What arXiv and ar5iv were asked for the targets.
	asked := map[string][]string{}
	for _, c := range s.Service(sim.Arxiv).Calls() {
		asked[sim.Arxiv] = append(asked[sim.Arxiv], c.Path)
	}
	for _, c := range s.Service(sim.Ar5iv).Calls() {
		asked[sim.Ar5iv] = append(asked[sim.Ar5iv], c.Path)
	}
	for _, tg := range realTargets {
		var got []string
		for _, p := range asked[sim.Arxiv] {
			if strings.HasPrefix(p, "/html/"+tg.id) {
				got = append(got, p)
			}
		}
		want := []string{"/html/" + tg.id + "v1"}
		if tg.site == sim.HTMLAr5iv {
			want = append(want, "/html/"+tg.id)
			if !slices.Contains(asked[sim.Ar5iv], "/html/"+tg.id) {
				t.Errorf("%s: ar5iv not asked (%v)", tg.id, asked[sim.Ar5iv])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: arXiv asked %v, want %v", tg.id, got, want)
		}
	}
	for _, p := range asked[sim.Arxiv] {
		if strings.Contains(p, lateSource) {
			t.Errorf("arXiv asked %s for the source first published after its target", p)
		}
	}

	pub, err := dataset.ReadDataset(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Instances) != len(realTargets) {
		t.Fatalf("%d instances of %d targets (dropped %+v)", len(pub.Instances), len(realTargets), pub.Dropped)
	}
	byTarget := map[string]realTarget{}
	for _, tg := range realTargets {
		byTarget[tg.id] = tg
	}
	revised, pinned := 0, 0
	for _, in := range pub.Instances {
		tg := byTarget[in.Target.ArxivID]
		if in.KnowledgeCutoff != tg.versions[0] {
			t.Errorf("%s: knowledge_cutoff %q, want its v1 date %s", tg.id, in.KnowledgeCutoff, tg.versions[0])
		}
		wantVersion, wantDate := "v1", tg.versions[0]
		if tg.site == sim.HTMLAr5iv {
			// v1 has no HTML: read as ar5iv serves it, the version now.
			wantVersion, wantDate = fmt.Sprintf("v%d", len(tg.versions)), tg.versions[len(tg.versions)-1]
		}
		if in.Target.Version != wantVersion || in.Target.VersionDate != wantDate {
			t.Errorf("%s: read as %s %s, want %s %s", tg.id, in.Target.Version, in.Target.VersionDate, wantVersion, wantDate)
		}
		if (in.Split == record.SplitTest) != (tg.versions[0] >= "2025-09-01") {
			t.Errorf("%s (v1 %s) is in %s", tg.id, tg.versions[0], in.Split)
		}
		if len(in.Sources) < 3 {
			t.Errorf("%s: %d sources", tg.id, len(in.Sources))
		}
		cutoff := date(t, tg.versions[0])
		for _, src := range in.Sources {
			if src.ArxivID == lateSource {
				t.Errorf("%s: source %s, first published after the target's v1", tg.id, src.ArxivID)
			}
			if src.ArxivID == "" {
				continue
			}
			h := citedHistory(t, src.ArxivID, cutoff)
			latest := h[len(h)-1]
			// No page anywhere: read from the abstract, as served now.
			if src.Version != fmt.Sprintf("v%d", len(h)) || src.VersionDate != latest.Format(time.DateOnly) || src.RevisedAfterCutoff != latest.After(cutoff) {
				t.Errorf("%s: source %s read as %s %s (revised %v), want v%d %s (history %v)", tg.id, src.ArxivID, src.Version, src.VersionDate, src.RevisedAfterCutoff, len(h), latest.Format(time.DateOnly), h)
			}
			if src.RevisedAfterCutoff {
				revised++
			} else {
				pinned++
			}
		}
	}
	if revised == 0 || pinned == 0 {
		t.Errorf("sources on arXiv: %d revised after their cutoff, %d not: the test needs both", revised, pinned)
	}
	card, _ := os.ReadFile(filepath.Join(ds, dataset.ReadmeFile))
	if !strings.Contains(string(card), "Knowledge cut: `flag`") || !strings.Contains(string(card), "targets read at a later version than v1 (v1 has no HTML): 1.") {
		t.Errorf("the card's knowledge cut:\n%s", card)
	}

	// Strict, from the same store: nothing kept dated after its cutoff.
	strict := filepath.Join(work, "strict")
	if code, _, stderr := clitest.Run(t, env, "dataset", "--store", storeDir, "--out", strict, "--knowledge-cut", "strict", "--include-suspect", "--test-from", "2025-09-01"); code != 0 {
		t.Fatalf("dataset --knowledge-cut strict: exit %d\n%s", code, stderr)
	}
	spub, err := dataset.ReadDataset(context.Background(), strict)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range spub.Instances {
		for _, src := range in.Sources {
			if src.ArxivID != "" && (src.RevisedAfterCutoff || src.VersionDate == "" || src.VersionDate > in.KnowledgeCutoff) {
				t.Errorf("strict: %s keeps %s %s dated %q (cutoff %s)", in.Target.ArxivID, src.ArxivID, src.Version, src.VersionDate, in.KnowledgeCutoff)
			}
		}
	}
	if code, stdout, stderr := clitest.Run(t, nil, "dataset", "--check", strict); code != 0 {
		t.Errorf("strict --check: exit %d\n%s%s", code, stdout, stderr)
	}

	// The innoeval export, in JSONL and Parquet.
	rows := map[string][]dataset.InnoEvalRow{}
	for _, enc := range []string{"jsonl", "parquet"} {
		out := filepath.Join(work, "innoeval-"+enc)
		if code, _, stderr := clitest.Run(t, nil, "export", "--format", "innoeval", "--encoding", enc, "--out", out, ds); code != 0 {
			t.Fatalf("export innoeval %s: exit %d\n%s", enc, code, stderr)
		}
		for _, split := range []string{"train", "validation", "test"} {
			path := filepath.Join(out, split+"."+enc)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if enc == "parquet" {
				got, err := parquet.Read[dataset.InnoEvalRow](strings.NewReader(string(b)), int64(len(b)))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				rows[enc] = append(rows[enc], got...)
				continue
			}
			for line := range strings.Lines(string(b)) {
				var r dataset.InnoEvalRow
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				rows[enc] = append(rows[enc], r)
			}
		}
	}
	if len(rows["jsonl"]) != len(pub.Instances) || len(rows["parquet"]) != len(pub.Instances) {
		t.Fatalf("%d JSONL and %d Parquet rows of %d instances", len(rows["jsonl"]), len(rows["parquet"]), len(pub.Instances))
	}
	sources := map[string]int{}
	for _, in := range pub.Instances {
		sources[in.InstanceID] = len(in.Sources)
	}
	quotes := 0
	for _, r := range rows["jsonl"] {
		tg := byTarget[r.InstanceID]
		doc := docs[tg.id]
		if doc == nil {
			t.Fatalf("row %s is of no target", r.InstanceID)
		}
		text := pageText(doc)
		for _, f := range record.TupleFields {
			claims := r.Idea.Claims(f)
			if record.TupleRequired(f) && len(claims) == 0 {
				t.Errorf("%s: no claim in %s", tg.id, f)
			}
			if f == record.TupleMethods {
				for _, m := range r.Idea.Methods {
					claims = append(claims, m.Steps...)
				}
			}
			for _, c := range claims {
				quotes++
				if c.Claim == "" || !strings.Contains(text, collapse(c.Quote)) || strings.Contains(c.Quote, revisionMark) {
					t.Errorf("%s %s: quote %q not in the recorded page's text (claim %q)", tg.id, f, c.Quote, c.Claim)
				}
			}
		}
		if r.KnowledgeCutoff != tg.versions[0] || len(r.PreKnowledge) != sources[r.InstanceID] {
			t.Errorf("%s: cutoff %q, %d pre-knowledge of %d sources", tg.id, r.KnowledgeCutoff, len(r.PreKnowledge), sources[r.InstanceID])
		}
		if len(r.PostKnowledge) != 2 || !r.PostKnowledge[0].Influential {
			t.Errorf("%s: post-knowledge %+v, want the two papers after the cutoff, the influential first", tg.id, r.PostKnowledge)
		}
		for _, p := range r.PostKnowledge {
			if p.Date <= r.KnowledgeCutoff || p.PaperID == "" || p.Title == "" {
				t.Errorf("%s (cutoff %s): post-knowledge %+v not dated after it", tg.id, r.KnowledgeCutoff, p)
			}
		}
	}
	t.Logf("%d instances, %d quotes checked; sources on arXiv: %d revised after the cutoff, %d not", len(rows["jsonl"]), quotes, revised, pinned)

	// Again: every stage finds its results; no service is asked anything.
	s.Reset()
	if code, _, stderr := clitest.Run(t, env, run...); code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, stderr)
	}
	if n := s.Requests(); n != 0 {
		t.Errorf("the second run made %d requests: %v", n, s.Stats())
	}
}
