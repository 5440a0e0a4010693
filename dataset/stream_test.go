package dataset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// contaminatedCorpus is a corpus with a violation of every kind, given
// out of ID order.
func contaminatedCorpus() []TargetInputs {
	tt4 := testTarget()
	dupA, dupB := makeTarget("2401.00001v1", "2024-01-01", "cs.CL", 3), makeTarget("2401.00001v2", "2024-01-01", "cs.CL", 4)
	trS2 := makeTarget("2512.00007", "2025-12-20", "cs.CL", 3)
	trS2.Graph.Meta.S2PaperID = tt4.Graph.Meta.S2PaperID
	own := makeTarget("2505.00002", "2025-05-05", "cs.CL", 4)
	own.Sources[1].Card.Results = "As shown: " + own.Gold.CoreClaim
	cross := makeTarget("2505.00003", "2025-05-06", "cs.CL", 4)
	cross.Sources[2].Card.Results = tt4.Gold.ProblemGap
	targets := append(corpus(), tt4, dupB, dupA, trS2, own, cross,
		trainWithSource("2505.00001", srcSpec{arxiv: "2601.00004v2", title: "Preprint"}),
		makeTarget("2604.00011", "2026-04-04", "cs.CL", 2)) // too few sources
	slices.Reverse(targets)
	return targets
}

// TestBuildStreamMatchesBuild: a dataset built one target at a time, its
// instances spilled to a file, is written byte for byte like the one
// built in memory, shards and all.
func TestBuildStreamMatchesBuild(t *testing.T) {
	ctx := context.Background()
	targets := contaminatedCorpus()
	opts := fixedOptions()
	mem := mustBuild(t, targets, opts)
	if len(mem.Contamination.Violations) < 5 {
		t.Fatalf("the corpus has %d violations: %+v", len(mem.Contamination.Violations), mem.Contamination.Violations)
	}
	spillDir := t.TempDir()
	st, err := BuildStream(ctx, func(fn func(*TargetInputs) error) ([]Dropped, error) {
		for i := range targets {
			t := targets[i]
			if err := fn(&t); err != nil {
				return nil, err
			}
		}
		return []Dropped{{TargetID: "2401.99999", Reason: DropIncomplete, Detail: "no summary"}}, nil
	}, opts, spillDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Instances != nil || st.Counts() != countSplits(mem.Instances) || st.Len() != len(mem.Instances) {
		t.Fatalf("streamed counts %+v, in memory %+v", st.Counts(), countSplits(mem.Instances))
	}
	mem.Dropped = append(mem.Dropped, Dropped{TargetID: "2401.99999", Reason: DropIncomplete, Detail: "no summary"})
	var each []record.Instance
	if err := st.Each(func(in *record.Instance) error { each = append(each, *in); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(each) != len(mem.Instances) {
		t.Fatalf("Each gave %d instances, want %d", len(each), len(mem.Instances))
	}
	for i := range each {
		if each[i].InstanceID != mem.Instances[i].InstanceID || each[i].Prompt != mem.Instances[i].Prompt {
			t.Errorf("instance %d: %s, want %s", i, each[i].InstanceID, mem.Instances[i].InstanceID)
		}
	}
	dir := t.TempDir()
	wo := WriteOptions{ShardRows: 2, JSONL: true, Report: true, Version: "test"}
	writeTestDataset(t, filepath.Join(dir, "mem"), mem, wo)
	writeTestDataset(t, filepath.Join(dir, "stream"), st, wo)
	files, _ := filepath.Glob(filepath.Join(dir, "mem", "*"))
	more, _ := filepath.Glob(filepath.Join(dir, "mem", DataDir, "*"))
	if len(more) < 3 {
		t.Fatalf("%d shards, want several", len(more))
	}
	for _, f := range append(files, more...) {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "mem"), f)
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(dir, "stream", rel))
		if err != nil || !slices.Equal(a, b) {
			t.Errorf("%s differs between the streamed and the in-memory build (%v)", rel, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(spillDir); len(left) != 0 {
		t.Errorf("Close left %d files in the spill directory", len(left))
	}
	if err := st.Each(func(*record.Instance) error { return nil }); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Each after Close: %v", err)
	}
}

// TestGoldChunks: searching training prompts for test golds a chunk at a
// time finds what one index of them all finds, in the same order.
func TestGoldChunks(t *testing.T) {
	ins, _, err := Consolidate(contaminatedCorpus(), fixedOptions())
	if err != nil {
		t.Fatal(err)
	}
	// More test golds leaking into more training prompts.
	for i := range ins {
		if ins[i].Split == record.SplitTrain {
			for j := range ins {
				if ins[j].Split == record.SplitTest && (i+j)%2 == 0 {
					ins[i].Prompt += " " + ins[j].Gold.Method
				}
			}
		}
	}
	tmpl, err := modelinput.Load()
	if err != nil {
		t.Fatal(err)
	}
	_, meta, err := findViolations(sliceSet(ins), nil, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := goldInPrompts(sliceSet(ins), meta, tmpl, len(ins))
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) < 4 {
		t.Fatalf("%d gold findings, want several", len(whole))
	}
	for _, chunk := range []int{1, 2, 3} {
		got, err := goldInPrompts(sliceSet(ins), meta, tmpl, chunk)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, whole, func(a, b finding) bool { return a.Violation == b.Violation && a.here == b.here && a.other == b.other }) {
			t.Errorf("chunks of %d: %d findings, want the %d of one index", chunk, len(got), len(whole))
		}
	}
}
