package dataset

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/reward"
)

// Export formats: rows that trainers read directly. Every row of every
// format carries its K (num_ideas, or extra_info.num_ideas in verl's
// layouts), so any gate checks a completion against the K its prompt asks
// for.
const (
	// FormatVerlRL is verl's RL layout (RLHFDataset): data_source, prompt
	// (chat messages), ability, reward_model {style "rule", ground_truth =
	// the gold card as JSON}, extra_info {split, index, instance_id,
	// num_ideas}. The shipped reward (reward.py) serves its data_source.
	FormatVerlRL = "verl-rl"
	// FormatVerlSFT is the layout of verl's legacy fsdp_sft_trainer
	// (SFTDataset): prompt and response strings (data.prompt_key=prompt,
	// data.response_key=response), extra_info.
	FormatVerlSFT = "verl-sft"
	// FormatMessages is the chat layout of verl's multi-turn sft_trainer
	// (MultiTurnSFTDataset, data.messages_key=messages) and TRL's
	// conversational language-modeling type: messages, a list of {role,
	// content}, the user turn then the assistant answer.
	FormatMessages = "messages"
	// FormatTRLSFT is TRL's conversational prompt-completion type, which
	// SFTTrainer trains on the completion only by default: prompt (the user
	// turn as messages) and completion (the assistant turn as messages).
	FormatTRLSFT = "trl-sft"
	// FormatTRLGRPO is TRL's conversational prompt-only type for
	// GRPOTrainer: prompt (the user turn as messages), and gold (the gold
	// card as JSON) and num_ideas, extra columns GRPOTrainer passes to
	// reward functions (reward.py's grpo_reward reads them).
	FormatTRLGRPO = "trl-grpo"
)

// ExportFormats returns the trainer formats (a new slice each call).
func ExportFormats() []string {
	return []string{FormatVerlRL, FormatVerlSFT, FormatMessages, FormatTRLSFT, FormatTRLGRPO}
}

// Formats returns every export format: the trainer formats, then the
// idea-evaluation layout (a new slice each call).
func Formats() []string { return append(ExportFormats(), FormatInnoEval) }

// CheckFormat returns an error naming the formats when format is none of
// them.
func CheckFormat(format string) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
	}
	return nil
}

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
	// Version is curate's, named in each Parquet file's footer.
	Version string
}

// DefaultDataSource is the verl data_source of the RL rows: the one the
// shipped reward (package reward) scores.
const DefaultDataSource = reward.DataSource

// RewardModel is verl's reward_model column.
type RewardModel struct {
	Style       string `json:"style" parquet:"style"`
	GroundTruth string `json:"ground_truth" parquet:"ground_truth"` // GoldAnswer as JSON
}

// ExtraInfo is verl's extra_info column.
type ExtraInfo struct {
	// Split is the export's split: train, validation (held out of the
	// dataset's train split) or test; DatasetSplit the dataset's.
	Split        string `json:"split" parquet:"split"`
	Index        int    `json:"index" parquet:"index"` // position in the file: unique in it
	InstanceID   string `json:"instance_id" parquet:"instance_id"`
	NumIdeas     int    `json:"num_ideas" parquet:"num_ideas"`
	DatasetSplit string `json:"dataset_split" parquet:"dataset_split"`
}

// VerlRLRow is one row of FormatVerlRL.
type VerlRLRow struct {
	DataSource  string           `json:"data_source" parquet:"data_source"`
	Prompt      []record.Message `json:"prompt" parquet:"prompt,list"`
	Ability     string           `json:"ability" parquet:"ability"`
	RewardModel RewardModel      `json:"reward_model" parquet:"reward_model"`
	ExtraInfo   ExtraInfo        `json:"extra_info" parquet:"extra_info"`
}

// VerlSFTRow is one row of FormatVerlSFT.
type VerlSFTRow struct {
	Prompt    string    `json:"prompt" parquet:"prompt"`
	Response  string    `json:"response" parquet:"response"`
	ExtraInfo ExtraInfo `json:"extra_info" parquet:"extra_info"`
}

// MessagesRow is one row of FormatMessages.
type MessagesRow struct {
	Messages     []record.Message `json:"messages" parquet:"messages,list"`
	InstanceID   string           `json:"instance_id" parquet:"instance_id"`
	Split        string           `json:"split" parquet:"split"`
	NumIdeas     int              `json:"num_ideas" parquet:"num_ideas"`
	DatasetSplit string           `json:"dataset_split" parquet:"dataset_split"`
}

// TRLSFTRow is one row of FormatTRLSFT.
type TRLSFTRow struct {
	Prompt       []record.Message `json:"prompt" parquet:"prompt,list"`
	Completion   []record.Message `json:"completion" parquet:"completion,list"`
	InstanceID   string           `json:"instance_id" parquet:"instance_id"`
	Split        string           `json:"split" parquet:"split"`
	NumIdeas     int              `json:"num_ideas" parquet:"num_ideas"`
	DatasetSplit string           `json:"dataset_split" parquet:"dataset_split"`
}

// TRLGRPORow is one row of FormatTRLGRPO.
type TRLGRPORow struct {
	Prompt       []record.Message `json:"prompt" parquet:"prompt,list"`
	Gold         string           `json:"gold" parquet:"gold"` // GoldAnswer as JSON, as verl's ground_truth
	NumIdeas     int              `json:"num_ideas" parquet:"num_ideas"`
	InstanceID   string           `json:"instance_id" parquet:"instance_id"`
	Split        string           `json:"split" parquet:"split"`
	DatasetSplit string           `json:"dataset_split" parquet:"dataset_split"`
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
// The RL rows (verl-rl, trl-grpo) keep each instance's prompt (K ideas, no
// answer: the reward compares against the gold card). The SFT rows
// (verl-sft, messages, trl-sft) need an answer, and the only one an
// instance holds is its gold card, a single idea: their prompt is the same
// template rendered for K = 1 (num_ideas 1), and the response is the
// no-think completion of recipe.md, "<think>\n</think>\n" then "<answer>"
// with a JSON array of the one card's four fields "</answer>". Hindsight
// traces with K cards (curate sft) replace it when they exist.
//
// Each row's split is the instance's dataset split; ExportSplit writes
// one split of an export, validation held out.
func Export(instances []record.Instance, format string, w io.Writer, opts ExportOptions) error {
	splits := make([]string, len(instances))
	for i, in := range instances {
		splits[i] = in.Split
	}
	return export(instances, splits, format, w, opts)
}

// ExportSplit writes to w the rows of one split of an export of
// instances: train (validation held out), validation, test, or SplitAll
// (every row, keeping its export split); valSize is as
// ExportDirOptions.ValSize.
func ExportSplit(instances []record.Instance, split string, valSize int, format string, w io.Writer, opts ExportOptions) error {
	if _, err := ExportSplits(split); err != nil || split == "" {
		return fmt.Errorf("export %s: split %q: want one of %s, %s, %s or %s", format, split, record.SplitTrain, holdout.SplitValidation, record.SplitTest, SplitAll)
	}
	ins, splits := assign(instances, split, valSize)
	return export(ins, splits, format, w, opts)
}

func export(instances []record.Instance, splits []string, format string, w io.Writer, opts ExportOptions) error {
	enc := cmp.Or(opts.Encoding, EncodingParquet)
	if enc != EncodingParquet && enc != EncodingJSONL {
		return fmt.Errorf("export %s: unknown encoding %q (want %s or %s)", format, enc, EncodingParquet, EncodingJSONL)
	}
	rows, err := exportRows(instances, splits, format, opts)
	if err != nil {
		return err
	}
	if err := encodeAny(w, enc, WriteOptions{Compression: opts.Compression, Version: opts.Version}, rows); err != nil {
		return fmt.Errorf("export %s as %s: %w", format, enc, err)
	}
	return nil
}

// encodeAny encodes the rows exportRows built.
func encodeAny(w io.Writer, enc string, o WriteOptions, rows any) error {
	switch rows := rows.(type) {
	case []VerlRLRow:
		return encodeRows(w, enc, o, rows)
	case []VerlSFTRow:
		return encodeRows(w, enc, o, rows)
	case []MessagesRow:
		return encodeRows(w, enc, o, rows)
	case []TRLSFTRow:
		return encodeRows(w, enc, o, rows)
	case []TRLGRPORow:
		return encodeRows(w, enc, o, rows)
	case []InnoEvalRow:
		return encodeRows(w, enc, o, rows)
	}
	return fmt.Errorf("no encoder for %T", rows)
}

// exportRows builds the rows of format: a slice of the format's row type;
// splits holds each instance's export split.
func exportRows(instances []record.Instance, splits []string, format string, opts ExportOptions) (any, error) {
	if err := CheckFormat(format); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	switch format {
	case FormatInnoEval:
		return innoevalRows(instances, splits)
	case FormatVerlRL:
		return verlRLRows(instances, splits, opts), nil
	case FormatTRLGRPO:
		out := make([]TRLGRPORow, len(instances))
		for i, in := range instances {
			out[i] = TRLGRPORow{
				Prompt: []record.Message{{Role: "user", Content: in.Prompt}}, Gold: goldJSON(in.Gold),
				NumIdeas: in.NumIdeas, InstanceID: in.InstanceID, Split: splits[i], DatasetSplit: in.Split,
			}
		}
		return out, nil
	}
	pairs, err := sftPairs(instances, splits)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", format, err)
	}
	switch format {
	case FormatVerlSFT:
		out := make([]VerlSFTRow, len(pairs))
		for i, p := range pairs {
			out[i] = VerlSFTRow{Prompt: p.prompt, Response: p.response, ExtraInfo: p.info}
		}
		return out, nil
	case FormatMessages:
		out := make([]MessagesRow, len(pairs))
		for i, p := range pairs {
			out[i] = MessagesRow{
				Messages:   []record.Message{{Role: "user", Content: p.prompt}, {Role: "assistant", Content: p.response}},
				InstanceID: p.info.InstanceID, Split: p.info.Split, NumIdeas: p.info.NumIdeas, DatasetSplit: p.info.DatasetSplit,
			}
		}
		return out, nil
	default: // FormatTRLSFT
		out := make([]TRLSFTRow, len(pairs))
		for i, p := range pairs {
			out[i] = TRLSFTRow{
				Prompt: []record.Message{{Role: "user", Content: p.prompt}}, Completion: []record.Message{{Role: "assistant", Content: p.response}},
				InstanceID: p.info.InstanceID, Split: p.info.Split, NumIdeas: p.info.NumIdeas, DatasetSplit: p.info.DatasetSplit,
			}
		}
		return out, nil
	}
}

// goldJSON is the gold card as the reward reads it (GoldAnswer as JSON).
func goldJSON(c record.Card) string {
	b, _ := json.Marshal(goldAnswer(c)) // strings only: cannot fail
	return string(b)
}

// extraInfos numbers instances in the order given: one export file is one
// Export call, so an index is unique in its file even when the file holds
// both splits.
func extraInfos(instances []record.Instance, splits []string) []ExtraInfo {
	out := make([]ExtraInfo, len(instances))
	for i, in := range instances {
		out[i] = ExtraInfo{Split: splits[i], Index: i, InstanceID: in.InstanceID, NumIdeas: in.NumIdeas, DatasetSplit: in.Split}
	}
	return out
}

func verlRLRows(instances []record.Instance, splits []string, opts ExportOptions) []VerlRLRow {
	infos := extraInfos(instances, splits)
	out := make([]VerlRLRow, len(instances))
	for i, in := range instances {
		out[i] = VerlRLRow{
			DataSource:  cmp.Or(opts.DataSource, DefaultDataSource),
			Prompt:      []record.Message{{Role: "user", Content: in.Prompt}},
			Ability:     cmp.Or(opts.Ability, "ideation"),
			RewardModel: RewardModel{Style: "rule", GroundTruth: goldJSON(in.Gold)},
			ExtraInfo:   infos[i],
		}
	}
	return out
}

type sftPair struct {
	prompt, response string
	info             ExtraInfo
}

func sftPairs(instances []record.Instance, splits []string) ([]sftPair, error) {
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, err
	}
	infos := extraInfos(instances, splits)
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

func encodeRows[T any](w io.Writer, encoding string, o WriteOptions, rows []T) error {
	if encoding == EncodingParquet {
		return encodeParquet(w, rows, o, nil)
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
