package dataset

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/record"
)

// readArrow reads a Parquet file with Apache Arrow's Go reader, an
// implementation independent of parquet-go that follows the C++ (pyarrow)
// schema conversion, and returns its schema and rows as JSON objects.
func readArrow(t *testing.T, path string) (*arrow.Schema, []map[string]any) {
	t.Helper()
	tbl, err := readback.Arrow(path)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Schema, tbl.Rows
}

// dropNulls removes null members: arrow writes a null optional field as
// null where encoding/json omits it.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}

func TestArrowInterop(t *testing.T) {
	targets := corpus()
	// A source with no DOI, S2 ID or year: nulls in optional columns.
	targets[0].Graph.Edges[1].DOI, targets[0].Graph.Edges[1].S2PaperID, targets[0].Graph.Edges[1].Year = nil, nil, nil
	r := mustBuild(t, targets, fixedOptions())
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{RowGroupRows: 1})

	schema, rows := readArrow(t, filepath.Join(out, "data", "train-00000-of-00001.parquet"))
	got := schema.String()
	for _, want := range []string{
		"instance_id: type=utf8",
		"target: type=struct<arxiv_id: utf8, title: utf8, published: utf8, primary_category: utf8, categories: list<element: utf8>, domain: utf8, doi: utf8 nullable, s2_paper_id: utf8 nullable, num_references: int64, version: utf8 nullable, version_date: utf8 nullable>",
		"sources: type=list<element: struct<doc_number: int64, ref_key: utf8 nullable, arxiv_id: utf8 nullable, s2_paper_id: utf8 nullable, doi: utf8 nullable, title: utf8 nullable, year: int64 nullable, labels: list<element: utf8>, rationale: utf8, quotes: list<element: utf8>, text_level: utf8, card: struct<problem_gap: utf8, core_claim: utf8, method: utf8, inspiration: utf8, results: utf8 nullable, takeaways: utf8 nullable, opportunity: utf8, paradigm: utf8, model: utf8, prompt_version: utf8>, version: utf8 nullable, version_date: utf8 nullable, revised_after_cutoff: bool nullable>>",
		"knowledge_cutoff: type=utf8, nullable",
		"gold: type=struct<problem_gap: utf8, core_claim: utf8, method: utf8, inspiration: utf8, results: utf8 nullable, takeaways: utf8 nullable, opportunity: utf8, paradigm: utf8, model: utf8, prompt_version: utf8>",
		"prompt: type=utf8",
		"num_ideas: type=int64",
		"provenance: type=struct<pipeline_version: utf8, models: struct<classify: utf8 nullable, summarize: utf8 nullable, dataset: utf8 nullable>, prompt_versions: struct<classify: utf8 nullable, summarize: utf8 nullable, dataset: utf8 nullable>, created_at: utf8>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("arrow schema lacks %q\nschema:\n%s", want, got)
		}
	}
	// Optional columns are nullable; the doi of the source without one
	// is null, not "".
	src := schema.Field(schema.FieldIndices("sources")[0]).Type.(*arrow.ListType).ElemField().Type.(*arrow.StructType)
	if f, _ := src.FieldByName("doi"); !f.Nullable {
		t.Error("sources.doi is not nullable")
	}
	if s := rows[0]["sources"].([]any)[1].(map[string]any); s["doi"] != nil || s["year"] != nil {
		t.Errorf("missing doi/year read back as %v/%v, want null", s["doi"], s["year"])
	}

	var want []record.Instance
	for _, in := range r.Instances {
		if in.Split == record.SplitTrain {
			want = append(want, in)
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("arrow read %d rows, want %d", len(rows), len(want))
	}
	for i, in := range want {
		b, _ := json.Marshal(in)
		var w map[string]any
		json.Unmarshal(b, &w)
		if g := dropNulls(rows[i]); !reflect.DeepEqual(g, w) {
			gb, _ := json.MarshalIndent(g, "", " ")
			wb, _ := json.MarshalIndent(w, "", " ")
			t.Errorf("row %d differs.\narrow: %s\nwant:  %s", i, gb, wb)
		}
	}
}
