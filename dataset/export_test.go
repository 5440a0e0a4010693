package dataset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/record"
)

func TestExport(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	ins := r.Instances
	for _, format := range []string{FormatVerlRL, FormatVerlSFT, FormatMessages} {
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
					"extra_info: type=struct<split: utf8, index: int64, instance_id: utf8, num_ideas: int64>"} {
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
	case FormatVerlSFT, FormatMessages:
		prompt, response := "", ""
		if format == FormatVerlSFT {
			prompt, response = row["prompt"].(string), row["response"].(string)
		} else {
			msgs := row["messages"].([]any)
			u, a := msgs[0].(map[string]any), msgs[1].(map[string]any)
			if len(msgs) != 2 || u["role"] != "user" || a["role"] != "assistant" || row["instance_id"] != in.InstanceID {
				t.Fatalf("messages row %v", row)
			}
			prompt, response = u["content"].(string), a["content"].(string)
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
