package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/estimate"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
)

// idea is the record shape of the test's new stage: what a stage that
// extracts something per target (issue 25's idea tuples) stores.
type idea struct {
	Summary string   `json:"summary" parquet:"summary"`
	Claims  []string `json:"claims" parquet:"claims,list"`
}

// ideas is a new per-target stage made of nothing but its declaration and
// its work: one LLM request per target after summarize, a record of its
// own, and a field of every dataset instance.
func ideas(st *record.Kind[idea], store record.Putter, getter record.Getter) pipeline.Stage {
	return pipeline.Func{
		Decl: pipeline.Decl{Name: "ideas", About: "the target's idea, claim by claim", Workers: 2,
			Reads: []string{record.Documents.Name(), record.Summaries.Name()}, Writes: []string{st.Name()},
			Before:   []string{"summarize"},
			Requests: []pipeline.Request{{Service: llm.DefaultService, LLM: &pipeline.Tokens{Fixed: 800, Text: 6000, Output: 300}}},
			Field:    pipeline.FieldOf[idea]("test_idea", st.Name(), "the target's idea as claims")},
		Run: func(ctx context.Context, key string) (string, error) {
			if _, ok, err := st.Lookup(ctx, getter, key); err != nil || ok {
				return pipeline.Reused, err
			}
			doc, _, err := record.Documents.Get(ctx, getter, key)
			if err != nil {
				return "", err
			}
			title := ""
			if doc.Title != nil {
				title = *doc.Title
			}
			_, err = st.Put(ctx, store, key, &idea{Summary: title, Claims: []string{"claim of " + key}}, nil)
			return pipeline.Done, err
		},
	}
}

// TestNewStage: a stage added as one row of the table runs in the run
// (after the stages it names), is recorded in the ledger, is counted in
// the estimate, and its field is in every instance of the dataset,
// Parquet and JSONL, and in the card; a change of its record changes
// the dataset's inputs digest. Nothing but the row was written for it.
func TestNewStage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo corpus")
	}
	srv, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := Config{
		Version: "test", Store: t.TempDir(), Lock: true,
		Net: Net{ArxivBase: srv.URL(sim.Arxiv), Ar5ivBase: srv.URL(sim.Ar5iv), ArxivInterval: time.Millisecond, Timeout: 30 * time.Second,
			MaxBody: 64 << 20, Retries: 1, MissingTTL: time.Hour},
		S2:  S2{Base: srv.URL(sim.S2), ArxivAPIBase: srv.URL(sim.ArxivAPI), Interval: time.Millisecond, PageLimit: 500},
		LLM: LLM{Heuristic: true},
	}
	a, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	kind := record.KindOf[idea]("idea-test")
	a.stages = append(a.stages, ideas(&kind, a.Store, a.Store))
	tab := a.stages

	names, _, err := tab.Select([]string{"ideas"})
	if err != nil || !slices.Equal(tab.WithNeeds(names...), []string{"versions", "sources", "pdfs", "summarize", "ideas"}) {
		t.Fatalf("select: %q %v, with needs %q", names, err, tab.WithNeeds(names...))
	}
	keys, _ := Targets(demo.TargetIDs())
	out, err := a.Run(t.Context(), keys, RunOptions{})
	if err != nil && !strings.Contains(err.Error(), "failed") {
		t.Fatalf("run: %v", err)
	}
	if !slices.Contains(out.Stages, "ideas") || out.Stages[len(out.Stages)-1] != "ideas" {
		t.Errorf("run's stages %q: the new one is not the last", out.Stages)
	}
	step := out.Summary.Steps[len(out.Summary.Steps)-1]
	if step.Name != "ideas" || step.Done == 0 {
		t.Errorf("the new stage's step: %+v", step)
	}
	for _, k := range keys {
		if _, ok, _ := kind.Lookup(t.Context(), a.Store, k); !ok {
			continue
		}
		if e, err := a.Store.Status(t.Context(), k, "ideas"); err != nil || e.Status != pipeline.StatusDone || e.Attempts != 1 {
			t.Errorf("%s: ledger %+v %v", k, e, err)
		}
	}

	// The dataset reads the field's record and writes it as a column.
	dir := filepath.Join(t.TempDir(), "ds")
	opt := DatasetOptions{Out: dir, JSONL: true, Options: dataset.Options{CreatedAt: time.Unix(1e9, 0)}}
	res, err := tab.buildDataset(t.Context(), a.Store, "test", opt)
	if err != nil || res.Result.Len() == 0 {
		t.Fatalf("dataset: %v", err)
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	rows := 0
	for _, path := range shards {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			InstanceID string `parquet:"instance_id"`
			Idea       idea   `parquet:"test_idea"`
		}
		r := parquet.NewGenericReader[row](f)
		got := make([]row, r.NumRows())
		if n, err := r.Read(got); n != len(got) && err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, g := range got {
			rows++
			if want := "claim of " + strings.TrimPrefix(g.InstanceID, "gw-"); len(g.Idea.Claims) != 1 || g.Idea.Summary == "" || !strings.HasPrefix(g.Idea.Claims[0], "claim of ") {
				t.Errorf("%s: idea %+v (want %q)", g.InstanceID, g.Idea, want)
			}
		}
		r.Close()
		f.Close()
	}
	if rows != res.Result.Len() {
		t.Errorf("%d rows read with the idea column, %d instances", rows, res.Result.Len())
	}
	jl, err := os.ReadFile(filepath.Join(dir, dataset.InstancesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(jl), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil || m["test_idea"] == nil || m["fields"] != nil {
			t.Fatalf("instances.jsonl line without its idea beside the other fields: %s", line[:min(len(line), 200)])
		}
	}
	if card, _ := os.ReadFile(filepath.Join(dir, dataset.ReadmeFile)); !bytes.Contains(card, []byte("`test_idea` (the target's idea as claims)")) ||
		!bytes.Contains(card, []byte("name: test_idea")) {
		t.Error("the dataset card does not describe the idea column")
	}
	if _, err := dataset.ReadDataset(t.Context(), dir); err != nil {
		t.Errorf("the dataset with the new column does not read back: %v", err)
	}

	// The digest covers the field's records.
	before, err := tab.inputsDigest(t.Context(), a.Store, "test", nil, opt.Options, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kind.Put(t.Context(), a.Store, keys[0], &idea{Summary: "changed"}, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := tab.inputsDigest(t.Context(), a.Store, "test", nil, opt.Options, ""); after == before {
		t.Error("the inputs digest did not change with the new stage's record")
	}
	if plain, _ := builtin().inputsDigest(t.Context(), a.Store, "test", nil, opt.Options, ""); plain == before {
		t.Error("the digest of a table without the new stage is the same")
	}

	// The estimate counts its request per target it has not done, from
	// its declaration.
	a.Model = "m"
	kind2 := record.KindOf[idea]("idea-none")
	a.stages = append(slices.Clone(tab[:len(tab)-1]), ideas(&kind2, a.Store, a.Store))
	est, err := a.Estimate(t.Context(), keys, EstimateOptions{Stages: []string{"ideas"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(est.Stages, func(s estimate.StageEstimate) bool { return s.Stage == "ideas" })
	if i < 0 || est.Stages[i].Calls != len(keys) {
		t.Errorf("estimate's stages %+v: want %d calls of the new stage", est.Stages, len(keys))
	}
}
