package dataset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/record"
)

// withIdeas gives each instance the fields the tuples and post-knowledge
// stages add: a complete idea (the one at incomplete lacks its methods)
// and, for the first, two later papers.
func withIdeas(t *testing.T, ins []record.Instance, incomplete int) []record.Instance {
	t.Helper()
	out := slices.Clone(ins)
	for i := range out {
		c := func(s string) record.Claim {
			return record.Claim{Claim: s + " of " + out[i].InstanceID + ".", Quote: "the words of " + s}
		}
		idea := record.Idea{IdeaTuple: record.IdeaTuple{
			Summary: []record.Claim{c("summary")}, Motivations: []record.Claim{c("motivation")}, ResearchQuestions: []record.Claim{c("question")},
			Methods:              []record.MethodClaim{{Claim: "A method.", Quote: "the words of a method", Steps: []record.Claim{c("step")}}},
			ExperimentalSettings: []record.Claim{}, ExpectedResults: []record.Claim{c("result")},
		}, Backend: record.TupleBackendLLM, Model: "m", Unverified: 1}
		if i == incomplete {
			idea.Methods = []record.MethodClaim{}
		}
		post := []record.CitingPaper{}
		if i == 0 {
			post = []record.CitingPaper{{PaperID: "p1", Title: "Later", Date: "2027-01-01", Influential: true}, {PaperID: "p2", Title: "Later still", Year: 2028}}
		}
		a, _ := json.Marshal(idea)
		b, _ := json.Marshal(post)
		out[i].Fields = map[string]json.RawMessage{record.FieldIdea: a, record.FieldPostKnowledge: b}
	}
	return out
}

// TestExportInnoEval: one file per split, Parquet and JSONL with the same
// rows, test targets in the test file only and the validation draw held
// out of train; each row the instance's ID, split, cutoff (the knowledge
// cut's, else the v1 date), its idea's six fields, its sources as
// pre-knowledge with their versions, its post-knowledge; an incomplete
// idea left out and named in the README, which says what each field is and
// how an evaluator uses it.
func TestExportInnoEval(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	ins := withIdeas(t, r.Instances, 1)
	ins[0].KnowledgeCutoff = "2024-01-09"
	ins[0].Sources[0].Version, ins[0].Sources[0].VersionDate, ins[0].Sources[0].RevisedAfterCutoff = "v2", "2023-11-02", true
	left := ins[1].InstanceID
	var trainIDs []string
	for _, in := range ins {
		if in.Split == record.SplitTrain {
			trainIDs = append(trainIDs, in.InstanceID)
		}
	}
	val := holdout.Validation(trainIDs, holdout.DefaultSize)
	byID := map[string]record.Instance{}
	for _, in := range ins {
		byID[in.InstanceID] = in
	}

	rows := map[string][]InnoEvalRow{}
	for _, enc := range []string{EncodingParquet, EncodingJSONL} {
		out := filepath.Join(t.TempDir(), "x")
		files, err := WriteExport(context.Background(), out, ins, ExportDirOptions{Format: FormatInnoEval, ExportOptions: ExportOptions{Encoding: enc}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		total := 0
		for _, f := range files {
			if f.Name != f.Split+"."+enc {
				t.Errorf("file %s of split %s", f.Name, f.Split)
			}
			var got []InnoEvalRow
			path := filepath.Join(out, f.Name)
			if enc == EncodingParquet {
				if got, err = readParquet[InnoEvalRow](path); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					got[i].Idea = lists(got[i].Idea)
				}
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					if line == "" {
						continue
					}
					var m map[string]json.RawMessage
					if err := json.Unmarshal([]byte(line), &m); err != nil {
						t.Fatal(err)
					}
					var idea map[string]json.RawMessage
					json.Unmarshal(m["idea"], &idea)
					for _, k := range append(record.TupleFields, "") {
						if k != "" && (idea[k] == nil || string(idea[k]) == "null") {
							t.Errorf("%s: idea.%s is %s", m["instance_id"], k, idea[k])
						}
					}
					if len(idea) != len(record.TupleFields) || string(m["post_knowledge"]) == "null" || string(m["pre_knowledge"]) == "null" {
						t.Errorf("row %s", line)
					}
					var row InnoEvalRow
					if err := json.Unmarshal([]byte(line), &row); err != nil {
						t.Fatal(err)
					}
					got = append(got, row)
				}
			}
			if f.Rows != len(got) {
				t.Errorf("%s: %d rows said, %d read", f.Name, f.Rows, len(got))
			}
			total += len(got)
			for _, row := range got {
				in := byID[row.InstanceID]
				if prev, ok := seen[row.InstanceID]; ok {
					t.Errorf("%s in %s and %s", row.InstanceID, prev, f.Split)
				}
				seen[row.InstanceID] = f.Split
				wantSplit := in.Split
				if val[row.InstanceID] {
					wantSplit = holdout.SplitValidation
				}
				if row.Split != f.Split || f.Split != wantSplit || row.DatasetSplit != in.Split {
					t.Errorf("%s in %s: split %q, dataset split %q, want %s", row.InstanceID, f.Name, row.Split, row.DatasetSplit, wantSplit)
				}
				wantCutoff := in.Target.Published
				if in.KnowledgeCutoff != "" {
					wantCutoff = in.KnowledgeCutoff
				}
				if row.KnowledgeCutoff != wantCutoff {
					t.Errorf("%s: cutoff %q, want %q", row.InstanceID, row.KnowledgeCutoff, wantCutoff)
				}
				if len(row.Idea.Motivations) != 1 || len(row.Idea.Methods) != 1 || len(row.Idea.Methods[0].Steps) != 1 || !strings.HasSuffix(row.Idea.Summary[0].Claim, row.InstanceID+".") {
					t.Errorf("%s: idea %+v", row.InstanceID, row.Idea)
				}
				if len(row.PreKnowledge) != len(in.Sources) {
					t.Fatalf("%s: %d pre-knowledge papers, %d sources", row.InstanceID, len(row.PreKnowledge), len(in.Sources))
				}
				for j, s := range in.Sources {
					p := row.PreKnowledge[j]
					if p.DocNumber != s.DocNumber || p.ArxivID != s.ArxivID || p.Title != s.Title || p.Version != s.Version || p.VersionDate != s.VersionDate ||
						p.RevisedAfterCutoff != s.RevisedAfterCutoff || p.Card.CoreClaim != s.Card.CoreClaim || p.TextLevel != s.TextLevel {
						t.Errorf("%s: pre-knowledge %d %+v, source %+v", row.InstanceID, j, p, s)
					}
				}
				if wantPost := map[bool]int{true: 2, false: 0}[row.InstanceID == ins[0].InstanceID]; len(row.PostKnowledge) != wantPost || row.PostKnowledge == nil {
					t.Errorf("%s: post-knowledge %+v", row.InstanceID, row.PostKnowledge)
				}
			}
			rows[enc] = append(rows[enc], got...)
		}
		if _, ok := seen[left]; ok || total != len(ins)-1 {
			t.Errorf("%d rows (%v), want every instance but the incomplete %s", total, seen, left)
		}
		card, err := os.ReadFile(filepath.Join(out, ReadmeFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"InnoEval", "Left out: 1 instance whose idea has no verified claim in a required field (" + left + ")",
			"`knowledge_cutoff`", "`idea`", "`pre_knowledge`", "`post_knowledge`", "## How an evaluator uses them", "never show it to an evaluator judging as of the cutoff",
			"no test target is in the train or validation file"} {
			if !strings.Contains(string(card), want) {
				t.Errorf("%s README lacks %q:\n%s", enc, want, card)
			}
		}
	}
	a, _ := json.Marshal(rows[EncodingParquet])
	b, _ := json.Marshal(rows[EncodingJSONL])
	if string(NormalField(a)) != string(NormalField(b)) {
		t.Errorf("the Parquet and JSONL rows differ:\n%s\n%s", a, b)
	}

	// The independent readers read the Parquet rows.
	dir := filepath.Join(t.TempDir(), "all")
	if _, err := WriteExport(context.Background(), dir, ins, ExportDirOptions{Format: FormatInnoEval, Split: SplitAll}); err != nil {
		t.Fatal(err)
	}
	all, splits := assign(ins, SplitAll, 0)
	want, err := innoevalRows(all, splits)
	if err != nil {
		t.Fatal(err)
	}
	readback.Check(t, readback.File{Path: filepath.Join(dir, "all.parquet"), Rows: want})

	// A dataset built without the tuples stage has no idea to export.
	if _, err := WriteExport(context.Background(), filepath.Join(t.TempDir(), "y"), r.Instances, ExportDirOptions{Format: FormatInnoEval}); err == nil ||
		!strings.Contains(err.Error(), "without the tuples stage") {
		t.Errorf("export of instances without ideas: %v", err)
	}
}
