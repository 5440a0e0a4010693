package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// doctor rewrites one shard of the dataset in dir through edit.
func doctor(t *testing.T, dir, shard string, edit func([]record.Instance) []record.Instance) {
	t.Helper()
	path := filepath.Join(dir, DataDir, shard)
	rows, err := ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	rows = edit(rows)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteParquet(f, rows, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const (
	trainShard = "train-00000-of-00001.parquet"
	testShard  = "test-00000-of-00001.parquet"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	r := mustBuild(t, corpus(), fixedOptions())
	var testIn record.Instance
	for _, in := range r.Instances {
		if in.Split == record.SplitTest {
			testIn = in
			break
		}
	}
	tests := []struct {
		name    string
		doctor  func(t *testing.T, dir string)
		err     error
		kind    string // a violation of this kind, or
		problem string // a problem containing this
	}{
		{name: "as written", doctor: func(*testing.T, string) {}},
		{
			name: "a test target planted as a train source",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
					rows[1].Sources[2].ArxivID = testIn.Target.ArxivID + "v3"
					return rows
				})
			},
			err: ErrContaminated, kind: KindTestTargetAsSource,
		},
		{
			name: "a test target's title planted as a train source",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
					s := &rows[0].Sources[0]
					s.ArxivID, s.DOI, s.S2PaperID, s.Title = "", "", "", strings.ToLower(testIn.Target.Title)
					return rows
				})
			},
			err: ErrContaminated, kind: KindTestTargetAsSource,
		},
		{
			name: "test gold pasted into a train prompt",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
					rows[2].Prompt += "\n" + testIn.Gold.Method
					return rows
				})
			},
			err: ErrContaminated, kind: KindGoldInPrompt,
		},
		{
			name: "own gold pasted into a test prompt",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, testShard, func(rows []record.Instance) []record.Instance {
					rows[0].Prompt += "\n" + rows[0].Gold.Inspiration
					return rows
				})
			},
			err: ErrContaminated, kind: KindGoldInPrompt,
		},
		{
			name: "a duplicate row",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance { return append(rows, rows[0]) })
			},
			err: ErrContaminated, kind: KindDuplicate,
		},
		{
			name: "a 2026 target moved into train",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
					in := testIn
					in.Split = record.SplitTrain
					return append(rows, in)
				})
				doctor(t, dir, testShard, func(rows []record.Instance) []record.Instance { return rows[1:] })
			},
			err: ErrContaminated, kind: KindSplitDate,
		},
		{
			name: "a missing shard",
			doctor: func(t *testing.T, dir string) {
				os.Rename(filepath.Join(dir, DataDir, trainShard), filepath.Join(dir, DataDir, "train-00000-of-00002.parquet"))
			},
			err: ErrInvalid, problem: "missing data/train-00001-of-00002.parquet",
		},
		{
			name: "a row in the wrong file",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance { rows[0].Split = record.SplitTest; return rows })
			},
			// Its date puts it in train too.
			err: ErrContaminated, kind: KindSplitDate, problem: `has split "test"`,
		},
		{
			name: "a card that lies about the counts",
			doctor: func(t *testing.T, dir string) {
				p := filepath.Join(dir, ReadmeFile)
				b, _ := os.ReadFile(p)
				os.WriteFile(p, []byte(strings.Replace(string(b), "num_examples: 3", "num_examples: 30", 1)), 0o644)
			},
			err: ErrInvalid, problem: "train has 30 examples",
		},
		{
			name: "a source removed",
			doctor: func(t *testing.T, dir string) {
				doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance { rows[0].Sources = rows[0].Sources[:2]; return rows })
			},
			err: ErrInvalid, problem: "2 sources, want at least 3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			writeTestDataset(t, dir, r, WriteOptions{})
			tt.doctor(t, dir)
			rep, err := Check(ctx, dir)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Check error %v, want %v (report %+v)", err, tt.err, rep)
			}
			if rep == nil {
				t.Fatal("no report")
			}
			if tt.err == nil && !rep.OK() {
				t.Errorf("report not OK: %+v", rep)
			}
			if tt.kind != "" && !hasKind(rep.Violations, tt.kind) {
				t.Errorf("violations %+v lack %s", rep.Violations, tt.kind)
			}
			if tt.problem != "" && !strings.Contains(strings.Join(rep.Problems, "\n"), tt.problem) {
				t.Errorf("problems %q lack %q", rep.Problems, tt.problem)
			}
		})
	}
}

// remanifest rewrites dir's manifest to match its files, as someone who
// edited the files and covered it up would: the manifest verifies again.
func remanifest(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, publish.ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m publish.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		m.Files[i].Size, m.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	}
	writeManifest(t, dir, m)
}

func writeManifest(t *testing.T, dir string, m publish.Manifest) {
	t.Helper()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, publish.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editManifest changes the manifest's own fields (its file list still
// verifies).
func editManifest(t *testing.T, dir string, edit func(m *publish.Manifest)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, publish.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m publish.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	writeManifest(t, dir, m)
}

// --check with the manifest kept consistent (a copy covered up by
// rewriting it): a test target's gold card reused as a training gold,
// exactly or nearly, is a violation; and the manifest's own fields must
// agree with the files: curate_version with the rows' pipeline version,
// splits with the shards, inputs_digest a SHA-256.
func TestCheckCopiedGoldAndManifestFields(t *testing.T) {
	ctx := context.Background()
	r := mustBuild(t, corpus(), fixedOptions())
	var testIn record.Instance
	for _, in := range r.Instances {
		if in.Split == record.SplitTest {
			testIn = in
			break
		}
	}
	// near rewrites a field keeping most of it: a word put before it, its
	// last word changed.
	near := func(s string) string {
		ws := strings.Fields(s)
		ws[len(ws)-1] = "altered."
		return "Briefly, " + strings.Join(ws, " ")
	}
	tests := []struct {
		name    string
		doctor  func(t *testing.T, dir string)
		kind    string
		problem string
	}{
		{name: "a test gold copied as a train gold", doctor: func(t *testing.T, dir string) {
			doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
				rows[1].Gold = testIn.Gold
				return rows
			})
			remanifest(t, dir)
		}, kind: KindTestGoldInTrainGold},
		{name: "a test gold nearly copied as a train gold", doctor: func(t *testing.T, dir string) {
			doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
				g := testIn.Gold
				for _, v := range g.IdeaFields() {
					*v = near(*v)
				}
				rows[0].Gold = g
				return rows
			})
			remanifest(t, dir)
		}, kind: KindTestGoldInTrainGold},
		{name: "one field of a test gold in a train gold", doctor: func(t *testing.T, dir string) {
			doctor(t, dir, trainShard, func(rows []record.Instance) []record.Instance {
				rows[2].Gold.Method = testIn.Gold.Method
				return rows
			})
			remanifest(t, dir)
		}, kind: KindTestGoldInTrainGold},
		{name: "another curate version", doctor: func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *publish.Manifest) { m.CurateVersion = "9.9.9" })
		}, problem: `manifest.json says curate_version "9.9.9"; the rows say pipeline_version "test"`},
		{name: "no curate version", doctor: func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *publish.Manifest) { m.CurateVersion = "" })
		}, problem: "manifest.json has no curate_version"},
		{name: "splits it does not hold", doctor: func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *publish.Manifest) { m.Splits = []string{"train"} })
		}, problem: `manifest.json lists splits [train]; the shards hold [train test]`},
		{name: "a digest that is none", doctor: func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *publish.Manifest) { m.Inputs = "latest" })
		}, problem: `manifest.json's inputs_digest "latest" is not a SHA-256`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			writeTestDataset(t, dir, r, WriteOptions{Inputs: strings.Repeat("ab", 32)})
			if _, err := Check(ctx, dir); err != nil {
				t.Fatalf("as written: %v", err)
			}
			tt.doctor(t, dir)
			if _, problems, err := publish.Verify(dir); err != nil || len(problems) > 0 {
				t.Fatalf("the manifest does not verify: %v %v", problems, err)
			}
			rep, err := Check(ctx, dir)
			if err == nil || rep == nil {
				t.Fatalf("Check passed: %+v", rep)
			}
			if tt.kind != "" {
				if !errors.Is(err, ErrContaminated) || !hasKind(rep.Violations, tt.kind) {
					t.Errorf("Check: %v; violations %+v lack %s", err, rep.Violations, tt.kind)
				}
				for _, v := range rep.Violations {
					if v.Kind == tt.kind && (v.Split != record.SplitTrain || v.OtherID != testIn.InstanceID || v.OtherSplit != record.SplitTest) {
						t.Errorf("violation %+v: want the train instance, leaking from %s", v, testIn.InstanceID)
					}
				}
			}
			if tt.problem != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(strings.Join(rep.Problems, "\n"), tt.problem)) {
				t.Errorf("Check: %v; problems %q lack %q", err, rep.Problems, tt.problem)
			}
		})
	}
}

// Building a dataset drops the training instance whose gold reuses a
// test gold (PolicyDropTrain), as it does any train/test violation.
func TestBuildDropsCopiedGold(t *testing.T) {
	targets := corpus()
	var test, train int
	for i, tg := range targets {
		if tg.Graph.Meta.Published >= "2026" {
			test = i
		} else {
			train = i
		}
	}
	g := *targets[test].Gold
	targets[train].Gold = &g
	r := mustBuild(t, targets, fixedOptions())
	if r.Contamination.Counts[KindTestGoldInTrainGold] == 0 {
		t.Fatalf("no %s violation: %+v", KindTestGoldInTrainGold, r.Contamination.Violations)
	}
	for _, d := range r.Dropped {
		if d.TargetID == targets[train].Graph.Meta.ArxivID && d.Reason == DropContaminated {
			return
		}
	}
	t.Errorf("the train target was not dropped: %+v", r.Dropped)
}

func hasKind(vs []Violation, kind string) bool {
	for _, v := range vs {
		if v.Kind == kind {
			return true
		}
	}
	return false
}

// TestCheckPassesAfterPolicy: whatever a policy resolved, the written
// dataset passes Check.
func TestCheckPassesAfterPolicy(t *testing.T) {
	for _, p := range []Policy{PolicyDropTrain, PolicyDropTest} {
		tt4 := testTarget()
		leak := trainWithSource("2505.00001", srcSpec{doi: "10.48550/arXiv.2601.00004", title: "x"})
		gold := makeTarget("2505.00002", "2025-05-05", "cs.CL", 4)
		gold.Sources[0].Card.Results = tt4.Gold.CoreClaim
		dup := makeTarget("2505.00002v2", "2025-05-05", "cs.CL", 3)
		opts := fixedOptions()
		opts.Policy = p
		r := mustBuild(t, []TargetInputs{tt4, leak, gold, dup, makeTarget("2401.00001", "2024-01-01", "cs.CL", 3)}, opts)
		if len(r.Contamination.Violations) < 3 {
			t.Errorf("%s: violations %+v", p, r.Contamination.Violations)
		}
		dir := filepath.Join(t.TempDir(), "ds")
		writeTestDataset(t, dir, r, WriteOptions{})
		if rep, err := Check(context.Background(), dir); err != nil {
			t.Errorf("%s: Check: %v %+v", p, err, rep)
		}
	}
}

// TestEndToEnd runs the stage as the CLI does: store, build, write,
// check, then the report and an export from the published files.
func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	leaky := trainWithSource("2505.00001", srcSpec{arxiv: "2601.00004", title: "Preprint"})
	for _, tg := range append(corpus(), leaky) {
		putTarget(t, st, tg.Graph.Meta.ArxivID, tg, true, false)
	}
	putTarget(t, st, "2401.00099", makeTarget("2401.00099", "2024-01-01", "cs.CL", 3), false, false)
	targets, loadDropped, err := LoadTargets(ctx, st, nil, testInputs)
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuild(t, targets, fixedOptions())
	r.Dropped = append(r.Dropped, loadDropped...)
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{})
	if rep, err := Check(ctx, out); err != nil {
		t.Fatalf("Check: %v %+v", err, rep)
	}
	p, err := ReadDataset(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Dropped) != 2 || p.Dropped[0].TargetID != "2401.00099" || p.Dropped[1].Reason != DropContaminated {
		t.Errorf("dropped.json %+v", p.Dropped)
	}
	d, err := Report(p.Instances, p.Dropped, p.Contamination, filepath.Join(out, "report"))
	if err != nil || d.Counts != (SplitCounts{Train: 3, Test: 2}) || d.Contamination.Counts[KindTestTargetAsSource] != 1 {
		t.Errorf("report %v %+v", err, d)
	}
	var buf bytes.Buffer
	if err := Export(p.Instances, FormatVerlRL, &buf, ExportOptions{}); err != nil || buf.Len() == 0 {
		t.Errorf("export: %v", err)
	}
}
