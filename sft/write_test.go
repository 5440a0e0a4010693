package sft

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/internal/trainerconf"
	"github.com/groundwork/curate/record"
)

// readArrow reads a Parquet file with Apache Arrow's reader, independent
// of parquet-go and following pyarrow's schema conversion, and returns its
// schema and rows as JSON objects.
func readArrow(t *testing.T, path string) (string, []map[string]any) {
	t.Helper()
	tbl, err := readback.Arrow(path)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Schema.String(), tbl.Rows
}

func readGeneric[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatalf("parquet-go: %s: %v", path, err)
	}
	return rows
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Every format reads back, with parquet-go and with Arrow, as the rows
// Generate made; the card and the rejects say what happened.
func TestWriteReadBack(t *testing.T) {
	_, instances := buildDataset(t, 6, 3)
	r := generate(t, instances, Options{Teacher: Heuristic{}, ValSize: 2, Dataset: "ds"})
	// One reject, to see it in rejects.jsonl and the card.
	r.Rejects = append(r.Rejects, Reject{InstanceID: "2403.99999", Stage: StageIdeas, Reason: gate.ReasonWrongCount, Detail: "2 cards"})
	r.Report.Rejects[gate.ReasonWrongCount] = 1
	out := filepath.Join(t.TempDir(), "sft")
	if err := Write(context.Background(), out, r, WriteOptions{ShardRows: 3}); err != nil {
		t.Fatal(err)
	}
	bySplit := map[string][]Row{}
	for _, row := range r.Rows {
		bySplit[row.Split] = append(bySplit[row.Split], row)
	}
	if len(bySplit[SplitTrain]) != 4 || len(bySplit[SplitValidation]) != 2 {
		t.Fatalf("splits %d/%d", len(bySplit[SplitTrain]), len(bySplit[SplitValidation]))
	}
	files := map[string][]string{
		SplitTrain:      {"train-00000-of-00002.parquet", "train-00001-of-00002.parquet"},
		SplitValidation: {"validation-00000-of-00001.parquet"},
	}
	for split, names := range files {
		var verl []VerlRow
		var msgs []MessagesRow
		arrowRows := 0
		for _, name := range names {
			verl = append(verl, readGeneric[VerlRow](t, filepath.Join(out, DataDir, name))...)
			msgs = append(msgs, readGeneric[MessagesRow](t, filepath.Join(out, MessagesDir, name))...)

			schema, rows := readArrow(t, filepath.Join(out, DataDir, name))
			arrowRows += len(rows)
			for _, want := range []string{"prompt: type=utf8", "response: type=utf8", "extra_info: type=struct<split: utf8, index: int64, instance_id: utf8, num_ideas: int64, dataset_split: utf8>"} {
				if !strings.Contains(schema, want) {
					t.Errorf("%s: arrow schema lacks %q:\n%s", name, want, schema)
				}
			}
			for _, row := range rows {
				if _, err := gate.Check(row["response"].(string), 3); err != nil {
					t.Errorf("arrow %s: %v", name, err)
				}
			}
			schema, rows = readArrow(t, filepath.Join(out, MessagesDir, name))
			if !strings.Contains(schema, "messages: type=list<element: struct<role: utf8, content: utf8>>") {
				t.Errorf("%s: messages schema:\n%s", name, schema)
			}
			for _, row := range rows {
				m := row["messages"].([]any)
				if len(m) != 2 || m[0].(map[string]any)["role"] != "user" || m[1].(map[string]any)["role"] != "assistant" {
					t.Errorf("arrow messages %v", m)
				}
			}
		}
		rows := bySplit[split]
		jl := readJSONL[Row](t, filepath.Join(out, JSONLDir, split+".jsonl"))
		if arrowRows != len(rows) || len(verl) != len(rows) || len(msgs) != len(rows) || len(jl) != len(rows) {
			t.Fatalf("%s: %d verl, %d messages, %d jsonl rows, want %d", split, len(verl), len(msgs), len(jl), len(rows))
		}
		for i, row := range rows {
			want := VerlRow{Prompt: row.Prompt, Response: row.Response, ExtraInfo: ExtraInfo{Split: split, Index: i, InstanceID: row.InstanceID, NumIdeas: 3, DatasetSplit: row.DatasetSplit}}
			if !reflect.DeepEqual(verl[i], want) {
				t.Errorf("%s verl row %d differs", split, i)
			}
			if msgs[i].Messages[0].Content != row.Prompt || msgs[i].Messages[1].Content != row.Response || msgs[i].InstanceID != row.InstanceID {
				t.Errorf("%s messages row %d differs", split, i)
			}
			if !reflect.DeepEqual(jl[i], row) {
				t.Errorf("%s jsonl row %d differs", split, i)
			}
		}
	}
	rejects := readJSONL[Reject](t, filepath.Join(out, RejectsFile))
	if len(rejects) != 1 || rejects[0].Reason != gate.ReasonWrongCount {
		t.Errorf("rejects.jsonl %+v", rejects)
	}
	var rep Report
	b, _ := os.ReadFile(filepath.Join(out, ReportFile))
	if err := json.Unmarshal(b, &rep); err != nil || rep.Gate.PassRate != 1 || rep.Rows[SplitTrain] != 4 {
		t.Errorf("sft.json %+v (%v)", rep, err)
	}
	readme, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
	for _, want := range []string{
		"config_name: default", "path: data/train-*.parquet", "config_name: messages", "path: messages/validation-*.parquet",
		"| teacher | `heuristic` |", "| K (ideas per row) | 3 |", "model input `model-input-v2`, ideas `sft-heuristic-v1`",
		"| gate pass rate | 100.0%: 6 of 6 answers", "| `wrong_count` | 1 |", "| distinct openings | 6 of 6 traces |",
		"| sft-ideas | `heuristic` | 6 |", "not a model",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	// Every trainer setting the card prints is one the trainer takes at
	// the commit the card names.
	schemas, err := trainerconf.Load(filepath.Join("..", "internal", "trainerconf", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, typ := range []reflect.Type{reflect.TypeFor[VerlRow](), reflect.TypeFor[MessagesRow](), reflect.TypeFor[Row]()} {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			cols = append(cols, name)
		}
	}
	problems, checked := schemas.Check(string(readme), trainerconf.Options{Columns: cols})
	for _, p := range problems {
		t.Errorf("README, %v", p)
	}
	if len(checked) < 8 {
		t.Errorf("README: only %v checked", checked)
	}

	// ReadCompletions reads every format back for the gate.
	for _, p := range []string{
		filepath.Join(out, DataDir, files[SplitValidation][0]),
		filepath.Join(out, MessagesDir, files[SplitValidation][0]),
		filepath.Join(out, JSONLDir, "validation.jsonl"),
	} {
		cs, err := ReadCompletions(p)
		if err != nil || len(cs) != 2 {
			t.Fatalf("ReadCompletions(%s) = %d, %v", p, len(cs), err)
		}
		for i, c := range cs {
			if c.Text != bySplit[SplitValidation][i].Response || c.InstanceID != bySplit[SplitValidation][i].InstanceID || c.Line != i+1 {
				t.Errorf("%s row %d: %+v", p, i, c)
			}
			if c.NumIdeas != 3 {
				t.Errorf("%s: num_ideas %d, want 3 in every format", p, c.NumIdeas)
			}
		}
	}
}

func TestWriteReplaces(t *testing.T) {
	_, instances := buildDataset(t, 2, 3)
	r := generate(t, instances, Options{Teacher: Heuristic{}, ValSize: -1})
	dir := t.TempDir()
	out := filepath.Join(dir, "sft")
	for range 2 {
		if err := Write(context.Background(), out, r, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, problems, err := publish.Verify(out); err != nil || len(problems) > 0 {
		t.Errorf("the output does not verify: %v %v", problems, err)
	}
	for _, p := range []string{out, out + PrevSuffix} {
		if _, err := os.Stat(filepath.Join(p, ReportFile)); err != nil {
			t.Errorf("%v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, DataDir, "validation-00000-of-00001.parquet")); !os.IsNotExist(err) {
		t.Errorf("a validation file without validation rows: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		if e.Name() != ".sft.lock" { // the publishing lock stays, as the store's does
			left = append(left, e.Name())
		}
	}
	if len(left) != 2 {
		t.Errorf("left behind: %v", left)
	}
	// A directory that is not an SFT output is never moved aside.
	other := filepath.Join(dir, "mine")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644)
	if err := Write(context.Background(), other, r, WriteOptions{}); err == nil || !strings.Contains(err.Error(), "refusing to replace") {
		t.Errorf("Write over a foreign directory = %v", err)
	}
}

func TestReadCompletions(t *testing.T) {
	dir := t.TempDir()
	good, _ := gate.Format("x", goodCards(2))
	lines := []map[string]any{
		{"completion": good, "num_ideas": 2},
		{"response": good, "extra_info": map[string]any{"num_ideas": 2, "instance_id": "a"}},
		{"messages": []any{map[string]any{"role": "user", "content": "q"}, map[string]any{"role": "assistant", "content": good}}},
	}
	var b bytes.Buffer
	for _, l := range lines {
		json.NewEncoder(&b).Encode(l)
		b.WriteString("\n")
	}
	p := filepath.Join(dir, "gen.jsonl")
	os.WriteFile(p, b.Bytes(), 0o644)
	cs, err := ReadCompletions(p)
	if err != nil || len(cs) != 3 {
		t.Fatalf("ReadCompletions = %+v, %v", cs, err)
	}
	if cs[0].NumIdeas != 2 || cs[1].NumIdeas != 2 || cs[1].InstanceID != "a" || cs[2].NumIdeas != 0 || cs[2].Text != good {
		t.Errorf("%+v", cs)
	}
	os.WriteFile(p, []byte(`{"text": "no completion here"}`+"\n"), 0o644)
	if _, err := ReadCompletions(p); err == nil || !strings.Contains(err.Error(), "no completion") {
		t.Errorf("a file without completions: %v", err)
	}
}

func goodCards(k int) []record.Card {
	cards := make([]record.Card, k)
	for i := range cards {
		cards[i] = record.Card{ProblemGap: "[Evidence Gap] a", CoreClaim: "We claim b.", Method: "[Robustification] c", Inspiration: "Document 1 d."}
	}
	return cards
}

// TestReadersReadSFT reads every Parquet file of an SFT output, written
// with the default codec (Snappy) and with ZSTD, with Arrow's Go reader,
// hyparquet and DuckDB: each must read the rows written.
func TestReadersReadSFT(t *testing.T) {
	_, instances := buildDataset(t, 6, 3)
	r := generate(t, instances, Options{Teacher: Heuristic{}, ValSize: 2, Dataset: "ds"})
	bySplit := map[string][]Row{}
	for _, row := range r.Rows {
		bySplit[row.Split] = append(bySplit[row.Split], row)
	}
	var files []readback.File
	for _, c := range []parquetcodec.Codec{"", parquetcodec.Zstd} {
		out := filepath.Join(t.TempDir(), "sft")
		if err := Write(context.Background(), out, r, WriteOptions{Compression: c}); err != nil {
			t.Fatal(err)
		}
		for _, split := range []string{SplitTrain, SplitValidation} {
			verl, msgs, trl := trainerRows(split, bySplit[split])
			name := split + "-00000-of-00001.parquet"
			codec := strings.ToUpper(c.String())
			files = append(files,
				readback.File{Path: filepath.Join(out, DataDir, name), Rows: verl, Codec: codec},
				readback.File{Path: filepath.Join(out, MessagesDir, name), Rows: msgs, Codec: codec},
				readback.File{Path: filepath.Join(out, TRLDir, name), Rows: trl, Codec: codec})
			// The gate reads TRL's completion messages at each row's K.
			comps, err := ReadCompletions(filepath.Join(out, TRLDir, name))
			if err != nil || len(comps) != len(trl) {
				t.Fatalf("ReadCompletions(trl): %d rows, %v", len(comps), err)
			}
			for _, c := range comps {
				if _, err := gate.Check(c.Text, c.NumIdeas); err != nil || c.NumIdeas != r.Report.NumIdeas {
					t.Errorf("trl row %d (K %d) fails the gate: %v", c.Line, c.NumIdeas, err)
				}
			}
		}
		card, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
		n := r.Report.Length.Longest
		for _, want := range []string{"config_name: trl", "path: trl/train-*.parquet", fmt.Sprintf("data.max_length=%d", n), fmt.Sprintf("SFTConfig(max_length=%d)", n),
			"data.prompt_key=prompt data.response_key=response", "data.messages_key=messages", "verl.trainer.fsdp_sft_trainer", "verl.trainer.sft_trainer"} {
			if !strings.Contains(string(card), want) {
				t.Errorf("README lacks %q", want)
			}
		}
	}
	readback.Check(t, files...)
}
