package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/reward"
)

func TestExport(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	ins := r.Instances
	for _, format := range ExportFormats() {
		t.Run(format, func(t *testing.T) {
			var jl, pq bytes.Buffer
			if err := Export(ins, format, &jl, ExportOptions{Encoding: EncodingJSONL}); err != nil {
				t.Fatal(err)
			}
			if err := Export(ins, format, &pq, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(jl.String()), "\n")
			if len(lines) != len(ins) {
				t.Fatalf("%d JSONL rows, want %d", len(lines), len(ins))
			}
			path := filepath.Join(t.TempDir(), "x.parquet")
			os.WriteFile(path, pq.Bytes(), 0o644)
			schema, rows := readArrow(t, path)
			if len(rows) != len(ins) {
				t.Fatalf("%d Parquet rows, want %d", len(rows), len(ins))
			}
			for i, line := range lines {
				var row map[string]any
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatal(err)
				}
				// Parquet and JSONL carry the same rows.
				if a, b := mustJSON(t, dropNulls(rows[i])), mustJSON(t, row); a != b {
					t.Errorf("row %d: parquet %s\njsonl %s", i, a, b)
				}
				checkExportRow(t, format, row, ins[i])
			}
			switch format {
			case FormatVerlRL:
				for _, want := range []string{"prompt: type=list<element: struct<role: utf8, content: utf8>>", "reward_model: type=struct<style: utf8, ground_truth: utf8>",
					"extra_info: type=struct<split: utf8, index: int64, instance_id: utf8, num_ideas: int64, dataset_split: utf8>"} {
					if !strings.Contains(schema.String(), want) {
						t.Errorf("schema lacks %q:\n%s", want, schema)
					}
				}
				back, err := parquet.Read[VerlRLRow](bytes.NewReader(pq.Bytes()), int64(pq.Len()))
				if err != nil || len(back) != len(ins) || back[0].Prompt[0].Content != ins[0].Prompt {
					t.Errorf("parquet-go read back %d rows, %v", len(back), err)
				}
			case FormatMessages:
				if !strings.Contains(schema.String(), "messages: type=list<element: struct<role: utf8, content: utf8>>") {
					t.Errorf("schema %s", schema)
				}
			}
		})
	}
	if err := Export(ins, "alpaca", &bytes.Buffer{}, ExportOptions{}); err == nil {
		t.Error("unknown format accepted")
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkExportRow(t *testing.T, format string, row map[string]any, in record.Instance) {
	t.Helper()
	switch format {
	case FormatVerlRL:
		prompt := row["prompt"].([]any)[0].(map[string]any)
		rm := row["reward_model"].(map[string]any)
		extra := row["extra_info"].(map[string]any)
		var truth GoldAnswer
		if err := json.Unmarshal([]byte(rm["ground_truth"].(string)), &truth); err != nil {
			t.Fatalf("ground_truth is not JSON: %v", err)
		}
		if prompt["role"] != "user" || prompt["content"] != in.Prompt || row["ability"] != "ideation" || row["data_source"] != "groundwork/ideation" ||
			rm["style"] != "rule" || truth.CoreClaim != in.Gold.CoreClaim || truth.Paradigm != in.Gold.Paradigm ||
			extra["instance_id"] != in.InstanceID || extra["split"] != in.Split || extra["num_ideas"] != float64(in.NumIdeas) {
			t.Errorf("verl-rl row %v", row)
		}
	case FormatTRLGRPO:
		prompt := row["prompt"].([]any)
		var gold GoldAnswer
		if err := json.Unmarshal([]byte(row["gold"].(string)), &gold); err != nil {
			t.Fatalf("gold is not JSON: %v", err)
		}
		if len(prompt) != 1 || prompt[0].(map[string]any)["role"] != "user" || prompt[0].(map[string]any)["content"] != in.Prompt ||
			gold.Method != in.Gold.Method || gold.Opportunity != in.Gold.Opportunity || row["num_ideas"] != float64(in.NumIdeas) ||
			row["instance_id"] != in.InstanceID || row["split"] != in.Split {
			t.Errorf("trl-grpo row %v", row)
		}
	case FormatVerlSFT, FormatMessages, FormatTRLSFT:
		prompt, response := "", ""
		switch format {
		case FormatVerlSFT:
			prompt, response = row["prompt"].(string), row["response"].(string)
			if row["extra_info"].(map[string]any)["num_ideas"] != float64(1) {
				t.Errorf("verl-sft extra_info %v, want num_ideas 1", row["extra_info"])
			}
		case FormatMessages:
			msgs := row["messages"].([]any)
			u, a := msgs[0].(map[string]any), msgs[1].(map[string]any)
			if len(msgs) != 2 || u["role"] != "user" || a["role"] != "assistant" || row["instance_id"] != in.InstanceID || row["num_ideas"] != float64(1) {
				t.Fatalf("messages row %v", row)
			}
			prompt, response = u["content"].(string), a["content"].(string)
		case FormatTRLSFT:
			p, c := row["prompt"].([]any), row["completion"].([]any)
			if len(p) != 1 || len(c) != 1 || p[0].(map[string]any)["role"] != "user" || c[0].(map[string]any)["role"] != "assistant" ||
				row["num_ideas"] != float64(1) || row["split"] != in.Split {
				t.Fatalf("trl-sft row %v", row)
			}
			prompt, response = p[0].(map[string]any)["content"].(string), c[0].(map[string]any)["content"].(string)
		}
		if _, err := gate.Check(response, 1); err != nil {
			t.Errorf("%s response fails the gate at its num_ideas: %v", format, err)
		}
		if !strings.Contains(prompt, "exactly 1 object") || strings.Contains(prompt, in.Gold.CoreClaim) {
			t.Errorf("SFT prompt is not the K=1 model input:\n%s", prompt)
		}
		body, ok := strings.CutPrefix(response, "<think>\n</think>\n<answer>\n")
		body, ok2 := strings.CutSuffix(body, "</answer>")
		var cards []map[string]string
		if !ok || !ok2 || json.Unmarshal([]byte(body), &cards) != nil || len(cards) != 1 || len(cards[0]) != 4 || cards[0]["method"] != in.Gold.Method {
			t.Errorf("response %q", response)
		}
	}
}

// byteCounter counts one token per byte, so that the card's lengths can
// be computed here.
type byteCounter struct{}

func (byteCounter) Count(s string) int { return len(s) }

// TestExportCard: each export's README names the trainer its files are
// for with the config keys, and the lengths the longest rows need,
// measured on the rows; the RL exports ship the reward.
func TestExportCard(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	ins, splits := assign(r.Instances, SplitAll, 0)
	longest := func(f func(in record.Instance) (string, string), split string) (p, c, tot int) {
		for i, in := range ins {
			if split != "" && splits[i] != split {
				continue
			}
			a, b := f(in)
			p, c, tot = max(p, len(a)+TemplateOverhead), max(c, len(b)), max(tot, len(a)+TemplateOverhead+len(b))
		}
		return
	}
	sft := func(in record.Instance) (string, string) {
		pairs, err := sftPairs([]record.Instance{in}, []string{in.Split})
		if err != nil {
			t.Fatal(err)
		}
		return pairs[0].prompt, pairs[0].response
	}
	rl := func(in record.Instance) (string, string) {
		g := in.Gold
		g.Opportunity, g.Paradigm, g.Model, g.PromptVersion = "", "", "", ""
		cards := make([]record.Card, in.NumIdeas)
		for i := range cards {
			cards[i] = record.Card{ProblemGap: g.ProblemGap, CoreClaim: g.CoreClaim, Method: g.Method, Inspiration: g.Inspiration}
		}
		s, err := gate.Format("", cards)
		if err != nil {
			t.Fatal(err)
		}
		return in.Prompt, s
	}
	tests := []struct {
		format string
		lens   func(record.Instance) (string, string)
		want   []string // %d: prompt, completion, total
	}{
		{FormatVerlRL, rl, []string{"verl.trainer.main_ppo", "data.max_prompt_length=%[1]d", "data.max_response_length=%[2]d", "custom_reward_function.path=reward.py", "custom_reward_function.name=compute_score", "compute_score_batch", "data_source` is `groundwork/ideation`"}},
		{FormatTRLGRPO, rl, []string{"GRPOTrainer", "reward_funcs=[reward.grpo_reward]", "max_completion_length=%[2]d", "vllm_max_model_length=%[3]d", "`gold`", "`num_ideas`"}},
		{FormatVerlSFT, sft, []string{"verl.trainer.fsdp_sft_trainer", "data.prompt_key=prompt data.response_key=response", "data.max_length=%[3]d", "data.truncation=error"}},
		{FormatMessages, sft, []string{"verl.trainer.sft_trainer", "data.messages_key=messages", "data.max_length=%[3]d", "data.multiturn.enable=true", "assistant_only_loss", "SFTConfig(max_length=%[3]d)"}},
		{FormatTRLSFT, sft, []string{"SFTTrainer", "completion_only_loss", "SFTConfig(max_length=%[3]d)", "keep_start"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x")
			files, err := WriteExport(context.Background(), out, r.Instances, ExportDirOptions{Format: tt.format, Counter: byteCounter{}, CounterName: "bytes"})
			if err != nil {
				t.Fatal(err)
			}
			p, c, tot := longest(tt.lens, record.SplitTrain)
			if l := files[0].Lengths; files[0].Split != record.SplitTrain || l != (ExportLengths{p, c, tot}) {
				t.Errorf("train lengths %+v, want %d/%d/%d", l, p, c, tot)
			}
			row := fmt.Sprintf("| `train.parquet` | train | %d | %d | %d | %d |", files[0].Rows, p, c, tot)
			// The settings allow the longest row of either file.
			p, c, tot = longest(tt.lens, "")
			card, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
			for _, w := range append(tt.want, "counted with bytes", row, "volcengine/verl", "trl/trainer/grpo_trainer.py", "multiturn_sft_dataset.py", "never train on it") {
				if strings.Contains(w, "%[") {
					w = fmt.Sprintf(w, p, c, tot)
				}
				if !strings.Contains(string(card), w) {
					t.Errorf("card lacks %q:\n%s", w, card)
				}
			}
			got, err := os.ReadFile(filepath.Join(out, reward.ExportName))
			if rlFormat := tt.format == FormatVerlRL || tt.format == FormatTRLGRPO; rlFormat != (err == nil) || rlFormat && !bytes.Equal(got, reward.Source()) {
				t.Errorf("reward.py shipped: %v (%d bytes); want it with the RL formats only, as checked in", err == nil, len(got))
			}
		})
	}
	// Without a tokenizer the card says the counts are estimates.
	out := filepath.Join(t.TempDir(), "est")
	if _, err := WriteExport(context.Background(), out, r.Instances, ExportDirOptions{Format: FormatTRLSFT}); err != nil {
		t.Fatal(err)
	}
	if card, _ := os.ReadFile(filepath.Join(out, ReadmeFile)); !strings.Contains(string(card), "estimated at one token per 3 bytes") {
		t.Errorf("estimate not said:\n%s", card)
	}
}

// TestExportValidation: an export holds out a validation split of the
// dataset's train split, by package holdout's rule (as curate sft does),
// in a file of its own that no train file repeats; the trainers' configs
// validate on it, and the test split is left for the final evaluation.
func TestExportValidation(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	var trainIDs []string
	for _, in := range r.Instances {
		if in.Split == record.SplitTrain {
			trainIDs = append(trainIDs, in.InstanceID)
		}
	}
	val := holdout.Validation(trainIDs, holdout.DefaultSize)
	if len(val) != 1 {
		t.Fatalf("the corpus gives %d validation instances, want 1", len(val))
	}
	config := map[string][]string{
		FormatVerlRL:   {"data.train_files=train.parquet data.val_files=validation.parquet"},
		FormatVerlSFT:  {"data.train_files=train.parquet data.val_files=validation.parquet"},
		FormatMessages: {"data.train_files=train.parquet data.val_files=validation.parquet"},
		FormatTRLSFT:   {`"validation": "EXPORT_DIR/validation.parquet"`, `eval_dataset=ds["validation"]`},
		FormatTRLGRPO:  {`"validation": "EXPORT_DIR/validation.parquet"`, `eval_dataset=ds["validation"]`},
	}
	for _, format := range ExportFormats() {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "x")
			files, err := WriteExport(context.Background(), out, r.Instances, ExportDirOptions{Format: format, ExportOptions: ExportOptions{Encoding: EncodingJSONL}})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
			}
			if want := []string{"train.jsonl", "validation.jsonl", "test.jsonl"}; !slices.Equal(names, want) {
				t.Fatalf("files %v, want %v", names, want)
			}
			seen := map[string]string{}
			for _, split := range []string{record.SplitTrain, holdout.SplitValidation, record.SplitTest} {
				b, err := os.ReadFile(filepath.Join(out, split+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					var row struct {
						InstanceID   string    `json:"instance_id"`
						Split        string    `json:"split"`
						DatasetSplit string    `json:"dataset_split"`
						ExtraInfo    ExtraInfo `json:"extra_info"`
					}
					if err := json.Unmarshal([]byte(line), &row); err != nil {
						t.Fatal(err)
					}
					id, s, ds := row.InstanceID, row.Split, row.DatasetSplit
					if id == "" {
						id, s, ds = row.ExtraInfo.InstanceID, row.ExtraInfo.Split, row.ExtraInfo.DatasetSplit
					}
					if prev, ok := seen[id]; ok {
						t.Errorf("%s is in %s and %s", id, prev, split)
					}
					seen[id] = split
					wantDS := map[string]string{record.SplitTrain: record.SplitTrain, holdout.SplitValidation: record.SplitTrain, record.SplitTest: record.SplitTest}[split]
					if s != split || ds != wantDS || val[id] != (split == holdout.SplitValidation) {
						t.Errorf("%s in %s.jsonl: split %q, dataset_split %q (validation draw: %v)", id, split, s, ds, val[id])
					}
				}
			}
			if len(seen) != len(r.Instances) {
				t.Errorf("%d instances exported, want %d", len(seen), len(r.Instances))
			}
			card, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
			for _, want := range append(config[format], "final evaluation only", "validation.jsonl") {
				want = strings.ReplaceAll(want, ".parquet", ".jsonl")
				if !strings.Contains(string(card), want) {
					t.Errorf("card lacks %q:\n%s", want, card)
				}
			}
			if strings.Contains(string(card), "val_files=test") || strings.Contains(string(card), `ds["test"]`) {
				t.Errorf("the card validates on the test split:\n%s", card)
			}
		})
	}
}
