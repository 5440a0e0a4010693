package dataset

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/record"
)

// Export formats: rows that trainers read directly.
const (
	// FormatVerlRL is verl's RL layout: data_source, prompt (chat
	// messages), ability, reward_model {style "rule", ground_truth = the
	// gold card as JSON}, extra_info {split, index, instance_id,
	// num_ideas}.
	FormatVerlRL = "verl-rl"
	// FormatVerlSFT is verl's SFT layout: prompt and response strings
	// (data.prompt_key=prompt, data.response_key=response).
	FormatVerlSFT = "verl-sft"
	// FormatMessages is the chat layout of TRL and others: messages, a list
	// of {role, content}, the user turn then the assistant answer.
	FormatMessages = "messages"
)

// ExportFormats returns every export format (a new slice each call).
func ExportFormats() []string { return []string{FormatVerlRL, FormatVerlSFT, FormatMessages} }

// Encodings of an export.
const (
	EncodingParquet = "parquet"
	EncodingJSONL   = "jsonl"
)

// ExportOptions configure Export. The zero value writes Parquet.
type ExportOptions struct {
	Encoding string // EncodingParquet (default) or EncodingJSONL
	// Compression is the Parquet page codec ("": parquetcodec.Default).
	Compression parquetcodec.Codec
	DataSource  string // verl data_source; default "groundwork/ideation"
	Ability     string // verl ability; default "ideation"
}

// Message is one chat turn.
type Message struct {
	Role    string `json:"role" parquet:"role"`
	Content string `json:"content" parquet:"content"`
}

// RewardModel is verl's reward_model column.
type RewardModel struct {
	Style       string `json:"style" parquet:"style"`
	GroundTruth string `json:"ground_truth" parquet:"ground_truth"` // GoldAnswer as JSON
}

// ExtraInfo is verl's extra_info column.
type ExtraInfo struct {
	Split      string `json:"split" parquet:"split"`
	Index      int    `json:"index" parquet:"index"` // position in the file: unique in it
	InstanceID string `json:"instance_id" parquet:"instance_id"`
	NumIdeas   int    `json:"num_ideas" parquet:"num_ideas"`
}

// VerlRLRow is one row of FormatVerlRL.
type VerlRLRow struct {
	DataSource  string      `json:"data_source" parquet:"data_source"`
	Prompt      []Message   `json:"prompt" parquet:"prompt,list"`
	Ability     string      `json:"ability" parquet:"ability"`
	RewardModel RewardModel `json:"reward_model" parquet:"reward_model"`
	ExtraInfo   ExtraInfo   `json:"extra_info" parquet:"extra_info"`
}

// VerlSFTRow is one row of FormatVerlSFT.
type VerlSFTRow struct {
	Prompt    string    `json:"prompt" parquet:"prompt"`
	Response  string    `json:"response" parquet:"response"`
	ExtraInfo ExtraInfo `json:"extra_info" parquet:"extra_info"`
}

// MessagesRow is one row of FormatMessages.
type MessagesRow struct {
	Messages   []Message `json:"messages" parquet:"messages,list"`
	InstanceID string    `json:"instance_id" parquet:"instance_id"`
	Split      string    `json:"split" parquet:"split"`
}

// GoldAnswer is the part of a gold card a model is asked to write, with
// its two labels: the ground truth of the RL reward and the answer of the
// SFT rows.
type GoldAnswer struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
	Opportunity string `json:"opportunity,omitempty"`
	Paradigm    string `json:"paradigm,omitempty"`
}

func goldAnswer(c record.Card) GoldAnswer {
	return GoldAnswer{c.ProblemGap, c.CoreClaim, c.Method, c.Inspiration, c.Opportunity, c.Paradigm}
}

// Export writes instances in a trainer format to w, one row per instance
// in the order given.
//
// The RL rows keep each instance's prompt (K ideas, no answer: the reward
// compares against ground_truth). The SFT and messages rows need an
// answer, and the only one an instance holds is its gold card, a single
// idea: their prompt is the same template rendered for K = 1, and the
// response is the no-think completion of recipe.md, "<think>\n</think>\n"
// then "<answer>" with a JSON array of the one card's four fields
// "</answer>". Hindsight traces with K cards replace it when they exist.
func Export(instances []record.Instance, format string, w io.Writer, opts ExportOptions) error {
	enc := cmp.Or(opts.Encoding, EncodingParquet)
	if enc != EncodingParquet && enc != EncodingJSONL {
		return fmt.Errorf("export %s: unknown encoding %q (want %s or %s)", format, enc, EncodingParquet, EncodingJSONL)
	}
	rows, err := exportRows(instances, format, opts)
	if err != nil {
		return err
	}
	switch rows := rows.(type) {
	case []VerlRLRow:
		err = encodeRows(w, enc, opts.Compression, rows)
	case []VerlSFTRow:
		err = encodeRows(w, enc, opts.Compression, rows)
	case []MessagesRow:
		err = encodeRows(w, enc, opts.Compression, rows)
	}
	if err != nil {
		return fmt.Errorf("export %s as %s: %w", format, enc, err)
	}
	return nil
}

// exportRows builds the rows of format: a slice of the format's row type.
func exportRows(instances []record.Instance, format string, opts ExportOptions) (any, error) {
	switch format {
	case FormatVerlRL:
		return verlRLRows(instances, opts), nil
	case FormatVerlSFT, FormatMessages:
		rows, err := sftPairs(instances)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", format, err)
		}
		if format == FormatVerlSFT {
			out := make([]VerlSFTRow, len(rows))
			for i, p := range rows {
				out[i] = VerlSFTRow{Prompt: p.prompt, Response: p.response, ExtraInfo: p.info}
			}
			return out, nil
		}
		out := make([]MessagesRow, len(rows))
		for i, p := range rows {
			out[i] = MessagesRow{
				Messages:   []Message{{"user", p.prompt}, {"assistant", p.response}},
				InstanceID: p.info.InstanceID, Split: p.info.Split,
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("export: unknown format %q (want %s, %s or %s)", format, FormatVerlRL, FormatVerlSFT, FormatMessages)
}

// extraInfos numbers instances in the order given: one export file is one
// Export call, so an index is unique in its file even when the file holds
// both splits.
func extraInfos(instances []record.Instance) []ExtraInfo {
	out := make([]ExtraInfo, len(instances))
	for i, in := range instances {
		out[i] = ExtraInfo{Split: in.Split, Index: i, InstanceID: in.InstanceID, NumIdeas: in.NumIdeas}
	}
	return out
}

func verlRLRows(instances []record.Instance, opts ExportOptions) []VerlRLRow {
	infos := extraInfos(instances)
	out := make([]VerlRLRow, len(instances))
	for i, in := range instances {
		truth, _ := json.Marshal(goldAnswer(in.Gold)) // strings only: cannot fail
		out[i] = VerlRLRow{
			DataSource:  cmp.Or(opts.DataSource, "groundwork/ideation"),
			Prompt:      []Message{{Role: "user", Content: in.Prompt}},
			Ability:     cmp.Or(opts.Ability, "ideation"),
			RewardModel: RewardModel{Style: "rule", GroundTruth: string(truth)},
			ExtraInfo:   infos[i],
		}
	}
	return out
}

type sftPair struct {
	prompt, response string
	info             ExtraInfo
}

func sftPairs(instances []record.Instance) ([]sftPair, error) {
	tmpl, err := LoadTemplate()
	if err != nil {
		return nil, err
	}
	infos := extraInfos(instances)
	out := make([]sftPair, len(instances))
	for i, in := range instances {
		prompt := in.Prompt
		if in.NumIdeas != 1 {
			if prompt, err = tmpl.Render(in.Sources, 1); err != nil {
				return nil, fmt.Errorf("instance %s: %w", in.InstanceID, err)
			}
		}
		g := goldAnswer(in.Gold)
		g.Opportunity, g.Paradigm = "", "" // the answer format has the four fields only
		var answer strings.Builder
		enc := json.NewEncoder(&answer)
		enc.SetEscapeHTML(false) // the text, not \u003c, inside the answer
		enc.SetIndent("", "  ")
		if err := enc.Encode([]GoldAnswer{g}); err != nil {
			return nil, err
		}
		info := infos[i]
		info.NumIdeas = 1
		out[i] = sftPair{prompt: prompt, response: "<think>\n</think>\n<answer>\n" + answer.String() + "</answer>", info: info}
	}
	return out, nil
}

func encodeRows[T any](w io.Writer, encoding string, codec parquetcodec.Codec, rows []T) error {
	if encoding == EncodingParquet {
		return encodeParquet(w, rows, WriteOptions{Compression: codec}, nil)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
