package dataset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// A field made of a part of its record (Field.Value) carries that part;
// a field with an Absent value keeps a target without the record, or
// whose stage failed, with that value; the card sums what the fields'
// Counts say of each instance's value.
func TestFieldValueAbsentCounts(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type stored struct {
		Claims  []string `json:"claims"`
		Digest  string   `json:"input_digest"`
		Dropped int      `json:"dropped"`
	}
	type column struct {
		Claims  []string `json:"claims" parquet:"claims,list"`
		Dropped int      `json:"dropped" parquet:"dropped"`
	}
	idea := pipeline.FieldFrom("idea", "tuple", "the idea", func(r *stored) column { return column{Claims: r.Claims, Dropped: r.Dropped} })
	pipeline.CountsOf(idea, func(c *column) []pipeline.Count {
		return []pipeline.Count{{What: "claims dropped", N: c.Dropped}, {What: "claims kept", N: len(c.Claims)}}
	})
	later := pipeline.FieldOf[[]string]("later", "later", "what came later")
	later.Absent = json.RawMessage(`[]`)
	in := Inputs{Writers: Writers{"edges": "citegraph", "selections": "classify", "summary": "summarize", "tuple": "tuples", "later": "post-knowledge"},
		Fields: []*pipeline.Field{idea, later}}
	keys := []string{"2401.00001", "2401.00002", "2401.00003", "2601.00004"}
	dates := []string{"2024-01-01", "2024-01-02", "2024-01-03", "2026-01-04"}
	for i, k := range keys {
		putTarget(t, st, k, makeTarget(k, dates[i], "cs.CL", 3), true, false)
		if _, err := st.PutJSON(ctx, k, "tuple", stored{Claims: []string{"a claim of " + k}, Digest: "d", Dropped: i}, nil); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := st.PutJSON(ctx, k, "later", []string{"a later paper"}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The optional field's stage failed: the target stays, its value the
	// Absent one.
	if err := st.SetStatus(ctx, keys[1], "post-knowledge", store.StatusFailed, "s2: status 500"); err != nil {
		t.Fatal(err)
	}
	if d := Decl(in.Fields...); !strings.Contains(strings.Join(d.Reads, " "), "tuple") || strings.Contains(strings.Join(d.Reads, " "), "later") ||
		!strings.Contains(strings.Join(d.Optional, " "), "later") {
		t.Errorf("declaration reads %q, optional %q: want tuple required, later optional", d.Reads, d.Optional)
	}
	targets, dropped, err := LoadTargets(ctx, st, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 4 || len(dropped) != 0 {
		t.Fatalf("loaded %d, dropped %+v", len(targets), dropped)
	}
	for _, tg := range targets {
		k := tg.Graph.Meta.ArxivID
		if got, want := string(tg.Fields["idea"]), `{"claims":["a claim of `+k+`"],"dropped":`; !strings.HasPrefix(got, want) || strings.Contains(got, "input_digest") {
			t.Errorf("%s: idea %s, want the column's part of the record", k, got)
		}
		want := `[]`
		if k == keys[0] {
			want = `["a later paper"]`
		}
		if got := string(tg.Fields["later"]); got != want {
			t.Errorf("%s: later %s, want %s", k, got, want)
		}
	}

	r := mustBuild(t, targets, fixedOptions())
	r.Options.Fields = in.Fields
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{JSONL: true})
	card, err := os.ReadFile(filepath.Join(out, ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(card), "- `idea`: 6 claims dropped; 4 claims kept\n") {
		t.Errorf("the card does not sum the idea field's counts:\n%s", card[strings.Index(string(card), "Columns:"):])
	}
	if strings.Contains(string(card), "- `later`:") {
		t.Error("the card counts a field that declares no Counts")
	}
	jl, err := os.ReadFile(filepath.Join(out, InstancesFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(jl), `"later":[]`); n != 3 {
		t.Errorf("%d lines with an empty later list, want 3", n)
	}

	// Read back: the columns give each instance the value it was built
	// with (compared as NormalField makes them: Parquet keeps no empty
	// list); a field the dataset has no column of is named.
	p, err := ReadDataset(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	absent := pipeline.FieldOf[[]string]("never", "never", "a field of a stage that did not run")
	missing, err := ReadFields(ctx, p, append(slices.Clone(in.Fields), absent))
	if err != nil || !slices.Equal(missing, []string{"never"}) {
		t.Fatalf("ReadFields: missing %q, %v", missing, err)
	}
	built := map[string]map[string]json.RawMessage{}
	for _, inst := range r.Instances {
		built[inst.InstanceID] = inst.Fields
	}
	for _, inst := range p.Instances {
		for _, name := range []string{"idea", "later"} {
			got, want := NormalField(inst.Fields[name]), NormalField(built[inst.InstanceID][name])
			if string(got) != string(want) || len(inst.Fields[name]) == 0 {
				t.Errorf("%s: %s read back as %s, built as %s", inst.InstanceID, name, got, want)
			}
		}
	}
	if a, b := NormalField(json.RawMessage(`{"a":[],"b":"","c":{"d":null},"e":[1]}`)), NormalField(json.RawMessage(`{"e":[1],"c":{}}`)); string(a) != string(b) {
		t.Errorf("NormalField: %s and %s", a, b)
	}
}

// A target a guard held back before the stage that adds a field never
// got its record: it is dropped for what held it, not as incomplete; with
// suspects kept, as incomplete, naming the stage.
func TestFieldOfHeldTarget(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const key = "2401.00001"
	in := makeTarget(key, "2024-01-01", "cs.CL", 3)
	putTarget(t, st, key, in, true, false)
	if _, err := record.SelectionSets.Put(ctx, st, key, &record.Selections{TargetID: key, Selections: in.Selections, Suspect: []string{"too_many_sources: 3 of 3"}}, nil); err != nil {
		t.Fatal(err)
	}
	inputs := Inputs{Writers: Writers{"edges": "citegraph", "selections": "classify", "summary": "summarize", "tuple": "tuples"},
		Fields: []*pipeline.Field{pipeline.FieldOf[[]string]("idea", "tuple", "the idea")}}
	targets, dropped, err := LoadTargets(ctx, st, nil, inputs)
	if err != nil || len(targets) != 1 || len(dropped) != 0 {
		t.Fatalf("loaded %d, dropped %+v, %v", len(targets), dropped, err)
	}
	for _, c := range []struct {
		include bool
		reason  string
	}{{false, DropSuspect}, {true, DropIncomplete}} {
		o := fixedOptions()
		o.IncludeSuspect = c.include
		r := mustBuild(t, targets, o)
		if len(r.Instances) != 0 || len(r.Dropped) != 1 || r.Dropped[0].Reason != c.reason ||
			c.include && r.Dropped[0].Detail != "no tuple record: run the tuples stage" {
			t.Errorf("include suspects %v: %d instances, dropped %+v, want %s", c.include, len(r.Instances), r.Dropped, c.reason)
		}
	}
}
