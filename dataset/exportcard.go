package dataset

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/holdout"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/reward"
)

// TokenCounter counts the tokens of a text; sft/tokenizer's Tokenizer is
// one.
type TokenCounter interface {
	Count(text string) int
}

// TokenEstimate counts tokens without a tokenizer, on the long side, as
// every curate output does (modelinput.EstimateTokens), so a length set
// from it rarely truncates a row.
type TokenEstimate struct{}

// Count returns modelinput.EstimateTokens(text).
func (TokenEstimate) Count(text string) int { return modelinput.EstimateTokens(text) }

// TemplateOverhead is added to every prompt's count for the chat template
// a trainer wraps around the turns (role markers, turn ends, the
// generation prompt: about a dozen tokens in Qwen's and Llama's
// templates), which a tokenizer.json does not describe.
const TemplateOverhead = 16

// ExportLengths are the token counts of a file's longest rows.
type ExportLengths struct {
	// Prompt is the longest prompt, with TemplateOverhead.
	Prompt int `json:"prompt"`
	// Completion is the longest completion of the SFT formats; for the RL
	// formats, the longest answer of K cards each as long as the row's
	// gold card (a rollout's thinking comes on top).
	Completion int `json:"completion"`
	// Total is the longest prompt plus completion of one row.
	Total int `json:"total"`
}

// measure returns the lengths of the longest rows exportRows built.
func measure(rows any, c TokenCounter) ExportLengths {
	var l ExportLengths
	add := func(prompt, completion string) {
		p, q := c.Count(prompt)+TemplateOverhead, c.Count(completion)
		l.Prompt, l.Completion, l.Total = max(l.Prompt, p), max(l.Completion, q), max(l.Total, p+q)
	}
	switch rows := rows.(type) {
	case []VerlRLRow:
		for _, r := range rows {
			add(contents(r.Prompt), rlAnswer(r.RewardModel.GroundTruth, r.ExtraInfo.NumIdeas))
		}
	case []TRLGRPORow:
		for _, r := range rows {
			add(contents(r.Prompt), rlAnswer(r.Gold, r.NumIdeas))
		}
	case []VerlSFTRow:
		for _, r := range rows {
			add(r.Prompt, r.Response)
		}
	case []MessagesRow:
		for _, r := range rows {
			var u, a []record.Message
			for _, m := range r.Messages {
				if m.Role == "assistant" {
					a = append(a, m)
				} else {
					u = append(u, m)
				}
			}
			add(contents(u), contents(a))
		}
	case []TRLSFTRow:
		for _, r := range rows {
			add(contents(r.Prompt), contents(r.Completion))
		}
	}
	return l
}

func contents(ms []record.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Content)
	}
	return b.String()
}

// rlAnswer is a no-think completion of k copies of the gold card: the
// least room a rollout's answer needs.
func rlAnswer(gold string, k int) string {
	var g GoldAnswer
	if json.Unmarshal([]byte(gold), &g) != nil || k < 1 {
		return gold
	}
	card := record.Card{ProblemGap: g.ProblemGap, CoreClaim: g.CoreClaim, Method: g.Method, Inspiration: g.Inspiration}
	s, err := gate.Format("", slices.Repeat([]record.Card{card}, k))
	if err != nil {
		return gold
	}
	return s
}

// The trainer sources the export layouts and config keys were checked
// against.
const (
	checkedVerl = "volcengine/verl at b178a3c (2026-01-29): verl/utils/dataset/rl_dataset.py, sft_dataset.py and multiturn_sft_dataset.py; " +
		"verl/trainer/config/data/legacy_data.yaml, ppo_trainer.yaml, _generated_ppo_trainer.yaml (main_ppo's composed configuration), reward_model/reward_model.yaml, sft_trainer.yaml and sft_trainer_engine.yaml; " +
		"verl/trainer/fsdp_sft_trainer.py and sft_trainer.py; verl/trainer/ppo/reward.py; verl/experimental/reward_loop/reward_loop.py and its reward_manager registry; verl/workers/reward_manager (the legacy registry); " +
		"verl/utils/reward_score/__init__.py"
	checkedTRL = "huggingface/trl at f2cd577 (1.10.0.dev0, 2026-07-24): trl/trainer/sft_trainer.py and sft_config.py, trl/trainer/grpo_trainer.py and grpo_config.py, trl/data_utils.py"
)

// rewardRange says what the shipped reward's scores are.
var rewardRange = fmt.Sprintf("The reward of a rollout is 0 when it fails the schema gate, else ε + Σ q·d with each of the K cards adding at most 1: 0 ≤ reward ≤ ε + K (ε = %.2f, K = the row's `num_ideas`).", reward.Epsilon)

// rewardChecks says when the shipped reward checks its judges.
const rewardChecks = "- The reward checks its judges once, at its first call and before any rollout is scored: without judge settings (and not `GROUNDWORK_REWARD_MODE=gate`), with an endpoint that does not answer, a key it refuses or a model it does not serve, that first call raises `JudgeError` naming the settings to fix, and the run stops at its first batch.\n"

// exportCardData is what the export's README says.
type exportCardData struct {
	Format   string
	Files    []ExportFile
	Splits   []string
	Counter  string // "" for TokenEstimate
	Encoding string
	ValRows  int // rows of the validation split, in its file or the all file
	// LeftOut are the instances an export could not hold (an innoeval
	// export's incomplete ideas).
	LeftOut []string
}

// exportCard is the README of an export: what each file holds, which
// splits it draws on, which trainer reads it with which settings, and the
// lengths the longest rows need.
func exportCard(d exportCardData) string {
	if d.Format == FormatInnoEval {
		return innoevalCard(d)
	}
	var b strings.Builder
	drawn := "none of the dataset's splits (no rows)"
	if len(d.Splits) > 0 {
		drawn = "the dataset's " + strings.Join(d.Splits, " and ") + " split"
		if len(d.Splits) > 1 {
			drawn += "s"
		}
	}
	fmt.Fprintf(&b, "# Groundwork export: %s\n\n%s\n\nDrawn from %s.\n\n", d.Format, formatSummary(d.Format), drawn)
	counted := fmt.Sprintf("estimated at one token per %d bytes, on the long side, as the dataset report estimates (no tokenizer was given: `curate export --tokenizer tokenizer.json` counts exactly)", modelinput.BytesPerToken)
	if d.Counter != "" {
		counted = "counted with " + d.Counter
	}
	b.WriteString("| file | split | rows | longest prompt | longest " + completionWord(d.Format) + " | longest prompt + " + completionWord(d.Format) + " |\n|---|---|---:|---:|---:|---:|\n")
	mixed := false
	for _, f := range d.Files {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d | %d |\n", f.Name, f.Split, f.Rows, f.Lengths.Prompt, f.Lengths.Completion, f.Lengths.Total)
		mixed = mixed || f.Split == SplitAll
	}
	fmt.Fprintf(&b, "\nTokens are %s; prompts include %d tokens for the chat template.", counted, TemplateOverhead)
	if isRL(d.Format) {
		b.WriteString(" For these RL prompts the \"completion\" is the least room a rollout's answer needs: K cards, each as long as the row's gold card, in an empty think block; the thinking you allow comes on top.")
	}
	b.WriteString("\n")
	val, hasVal := splitFile(d.Files, holdout.SplitValidation)
	if all, ok := splitFile(d.Files, SplitAll); ok {
		val, hasVal = all, true // the rows keep their split
	}
	b.WriteString("\n")
	if d.ValRows > 0 {
		fmt.Fprintf(&b, "The validation split holds %d of the dataset's train instances, held out of training (those whose IDs hash lowest, at most half: the rule `curate sft` draws its validation rows by; `--val-size` sets how many): validate and choose checkpoints on it.", d.ValRows)
	}
	if slices.Contains(d.Splits, record.SplitTest) {
		b.WriteString(" The test split holds the targets first published on or after the dataset's cutoff: it is for the final evaluation only; never train on it or choose checkpoints with it.")
	}
	if mixed {
		where := "`split`, the dataset's in `dataset_split`"
		if d.Format == FormatVerlRL || d.Format == FormatVerlSFT {
			where = "`extra_info.split`, the dataset's in `extra_info.dataset_split`"
		}
		fmt.Fprintf(&b, " In the `all` file each row keeps its split (%s).", where)
	}
	b.WriteString("\n")
	if !hasVal {
		val = "VALIDATION_FILE"
		b.WriteString("\nThis export has no validation file (`--split`, or `--val-size 0`): `curate export --split validation` writes the held-out train instances; the settings below name it VALIDATION_FILE.\n")
	}
	train, eval := fileFor(d.Files, record.SplitTrain), val
	l := longest(d.Files)
	b.WriteString("\n## Trainer\n\nFile paths below are relative to this directory (run from it, or give full paths; EXPORT_DIR is this directory). Lengths are the longest rows of these files.\n\n")
	switch d.Format {
	case FormatVerlRL:
		fmt.Fprintf(&b, "verl's PPO/GRPO trainer (`verl.trainer.main_ppo`, RLHFDataset). `data_source` is `%s`, which verl's built-in `default_compute_score` does not know (it raises NotImplementedError): point verl at the reward shipped here, `%s` (the recipe's schema gate, the ε = %.2f bonus and the set-level score; its docstring says how to configure the impact and distance judges):\n\n", reward.DataSource, reward.ExportName, reward.Epsilon)
		fmt.Fprintf(&b, "```\npython3 -m verl.trainer.main_ppo \\\n  data.train_files=%s data.val_files=%s \\\n  data.prompt_key=prompt data.max_prompt_length=%d data.max_response_length=%d \\\n  data.truncation=error data.filter_overlong_prompts=False \\\n  custom_reward_function.path=%s custom_reward_function.name=compute_score \\\n  +custom_reward_function.reward_kwargs.quality_url=http://JUDGE:8000/v1 \\\n  +custom_reward_function.reward_kwargs.quality_model=IMPACT_JUDGE \\\n  +custom_reward_function.reward_kwargs.distance_model=DISTANCE_JUDGE ...\n```\n\n",
			train, eval, l.Prompt, l.Completion, reward.ExportName)
		fmt.Fprintf(&b, "- `data.max_prompt_length` must be at least %d: the default (512) rejects (`truncation: error`) or, with `filter_overlong_prompts`, silently drops every longer prompt.\n", l.Prompt)
		fmt.Fprintf(&b, "- `data.max_response_length` of %d fits only a K-card answer with an empty think block; add the thinking budget (the default 512 truncates the answer, and a truncated rollout fails the gate: reward 0).\n", l.Completion)
		b.WriteString("- The reward reads K from `extra_info.num_ideas` and the gold card from `reward_model.ground_truth`. verl's default reward loop (`reward_model.use_reward_loop`, true, with its `naive` manager) calls `compute_score` for the rollouts of a batch concurrently, each in a worker thread: no reward manager needs setting. On verl's legacy reward path, `reward_model.use_reward_loop=False reward_manager.name=batch custom_reward_function.name=compute_score_batch` scores a batch in one call, in parallel threads.\n")
		fmt.Fprintf(&b, "- %s `custom_reward_function.name=compute_score_normalized` divides it by ε + K (0 … 1, whatever a row's K).\n", rewardRange)
		b.WriteString(rewardChecks)
		b.WriteString("- verl decodes rollouts with `skip_special_tokens=True`: a tokenizer whose `<think>` tags are special tokens loses them, and every rollout fails the gate. A chat template that writes the opening of the think block into the generation prompt (DeepSeek-R1's, Qwen3's thinking-only models', Qwen3's with `enable_thinking=False`) leaves it out of the rollout, which then fails the gate: check a few rollouts with `curate gate`.\n")
	case FormatTRLGRPO:
		fmt.Fprintf(&b, "TRL's `GRPOTrainer` (conversational prompt-only: `prompt` is the user turn as messages). GRPOTrainer keeps the extra columns (`remove_unused_columns` defaults to False) and passes `gold` and `num_ideas` to the reward functions; the reward shipped here, `%s`, scores a rollout with the recipe's schema gate, the ε = %.2f bonus and the set-level score (its docstring says how to configure the judges):\n\n", reward.ExportName, reward.Epsilon)
		fmt.Fprintf(&b, "```python\nimport sys; sys.path.insert(0, \"EXPORT_DIR\")\nimport reward  # %s\nfrom datasets import load_dataset\nfrom trl import GRPOConfig, GRPOTrainer\n\nds = load_dataset(\"parquet\", data_files={\"train\": \"EXPORT_DIR/%s\", \"validation\": \"EXPORT_DIR/%s\"})\nargs = GRPOConfig(max_completion_length=%d,  # an empty-think K-card answer; add the thinking budget\n                  vllm_max_model_length=%d)  # prompt + completion, when generating with vLLM\ntrainer = GRPOTrainer(model=\"MODEL\", reward_funcs=[reward.grpo_reward], args=args,\n                      train_dataset=ds[\"train\"], eval_dataset=ds[\"validation\"])\n```\n\n",
			reward.ExportName, train, eval, l.Completion, l.Total)
		fmt.Fprintf(&b, "- `max_completion_length` defaults to 512: set it to at least %d plus the thinking budget, or truncated rollouts fail the gate (reward 0).\n", l.Completion)
		b.WriteString("- The judges: `GROUNDWORK_QUALITY_URL`, `GROUNDWORK_QUALITY_MODEL` (and `GROUNDWORK_DISTANCE_*`) for OpenAI-compatible endpoints, or `reward.make_grpo_reward(quality_judge, distance_judge)` with your own.\n")
		fmt.Fprintf(&b, "- %s `reward_funcs=[reward.grpo_reward_normalized]` divides it by ε + K (0 … 1, whatever a row's K).\n", rewardRange)
		b.WriteString(rewardChecks)
	case FormatVerlSFT:
		fmt.Fprintf(&b, "verl's legacy SFT trainer, `verl.trainer.fsdp_sft_trainer` (SFTDataset: the prompt becomes a user turn, the response the assistant's, with the EOS token). Its YAML defaults are `prompt_key: question`, `response_key: answer` and `max_length: 1024` with `truncation: error`, which fail on these rows:\n\n")
		fmt.Fprintf(&b, "```\ntorchrun -m verl.trainer.fsdp_sft_trainer \\\n  data.train_files=%s data.val_files=%s \\\n  data.prompt_key=prompt data.response_key=response \\\n  data.max_length=%d data.truncation=error ...\n```\n\n", train, eval, l.Total)
		b.WriteString("For the multi-turn `verl.trainer.sft_trainer`, export `--format messages`.\n")
	case FormatMessages:
		fmt.Fprintf(&b, "verl's multi-turn SFT trainer, `verl.trainer.sft_trainer` (MultiTurnSFTDataset; the loss is on the assistant turn):\n\n")
		fmt.Fprintf(&b, "```\ntorchrun -m verl.trainer.sft_trainer \\\n  data.train_files=%s data.val_files=%s \\\n  data.messages_key=messages data.max_length=%d data.max_token_len_per_gpu=%d ...\n```\n\n", train, eval, l.Total, max(l.Total, 8192))
		fmt.Fprintf(&b, "- Its default `data.max_length` is 1024 and, with the default `pad_mode: no_padding`, longer rows are cut without an error: set it to at least %d. `max_token_len_per_gpu` (default 8192) must hold the longest row too.\n", l.Total)
		b.WriteString("- The legacy `verl.trainer.fsdp_sft_trainer` reads this file too with `data.multiturn.enable=true data.multiturn.messages_key=messages` and the same `data.max_length`.\n")
		b.WriteString("- Chat templates that rewrite the think block (Qwen3's) make MultiTurnSFTDataset's per-turn tokenization differ from the whole conversation's; check its sanity-check error, or set `data.ignore_input_ids_mismatch=true` knowingly.\n")
		fmt.Fprintf(&b, "- TRL's `SFTTrainer` reads `messages` as a conversational language-modeling dataset and computes the loss on the whole sequence unless `assistant_only_loss=True` (which needs a chat template with `{%% generation %%}`); its default `max_length=1024` keeps the start and cuts every row before the answer. Prefer `--format trl-sft`, or set `SFTConfig(max_length=%d)`.\n", l.Total)
	case FormatTRLSFT:
		fmt.Fprintf(&b, "TRL's `SFTTrainer` (conversational prompt-completion: `prompt` is the user turn, `completion` the assistant turn, both as messages). For this type SFTTrainer computes the loss on the completion only (`completion_only_loss` defaults to it):\n\n")
		fmt.Fprintf(&b, "```python\nfrom datasets import load_dataset\nfrom trl import SFTConfig, SFTTrainer\n\nds = load_dataset(\"parquet\", data_files={\"train\": \"EXPORT_DIR/%s\", \"validation\": \"EXPORT_DIR/%s\"})\nargs = SFTConfig(max_length=%d)  # the default 1024 keeps the start and cuts the answer off\ntrainer = SFTTrainer(model=\"MODEL\", args=args, train_dataset=ds[\"train\"], eval_dataset=ds[\"validation\"])\n```\n\n", train, eval, l.Total)
		fmt.Fprintf(&b, "- `max_length` defaults to 1024 with `truncation_mode=\"keep_start\"`: a longer row loses its end, the answer, without an error. Set it to at least %d.\n", l.Total)
	}
	b.WriteString("\n## Columns\n\n")
	b.WriteString(formatColumns(d.Format))
	if !isRL(d.Format) {
		fmt.Fprintf(&b, "\nThe SFT rows hold the one answer an instance has, its gold card: the prompt is rendered for K = 1 (`num_ideas` 1) and the completion is the no-think format `<think>\\n</think>\\n<answer>` a JSON array of one card `</answer>`. `curate sft` writes K-card rows with hindsight traces. `curate gate FILE` applies the schema gate to this file or to any model's generations in these layouts.\n")
	}
	fmt.Fprintf(&b, "\n## Checked against\n\nThe column names and config keys above were checked against the trainers' loaders, and curate's tests check every setting printed here against excerpts of their configuration files and registries recorded at these commits:\n\n- verl: %s.\n- TRL: %s.\n", checkedVerl, checkedTRL)
	return b.String()
}

// ReadmeSays is what an export's README tells, for the line that points
// to it.
func ReadmeSays(format string) string {
	if format == FormatInnoEval {
		return "what each field holds and how idea evaluators use them"
	}
	return "which trainer reads it and with which settings"
}

func formatSummary(format string) string {
	switch format {
	case FormatVerlRL:
		return "Prompts for RL with verl: each row is an instance's model input (its numbered source documents; never the gold idea) asking for K ideas, with the gold card as the reward's ground truth."
	case FormatTRLGRPO:
		return "Prompts for GRPO with TRL: each row is an instance's model input asking for K ideas, with the gold card and K as extra columns for the reward."
	case FormatVerlSFT:
		return "SFT rows for verl's legacy fsdp_sft_trainer: prompt and response strings."
	case FormatMessages:
		return "SFT rows as a chat conversation (`messages`): for verl's multi-turn sft_trainer."
	case FormatTRLSFT:
		return "SFT rows for TRL's SFTTrainer in its conversational prompt-completion layout (loss on the completion only)."
	}
	return ""
}

func completionWord(format string) string {
	if isRL(format) {
		return "K-card answer"
	}
	return "completion"
}

func formatColumns(format string) string {
	switch format {
	case FormatVerlRL:
		return "- `data_source` (string): `" + reward.DataSource + "`, the reward's key.\n- `prompt` (list of {role, content}): the user turn.\n- `ability` (string): `ideation`.\n- `reward_model` ({style, ground_truth}): style `rule`; ground_truth the gold card as JSON (problem_gap, core_claim, method, inspiration, opportunity, paradigm).\n- `extra_info` ({split, index, instance_id, num_ideas}): index is unique in the file; num_ideas is K.\n"
	case FormatTRLGRPO:
		return "- `prompt` (list of {role, content}): the user turn.\n- `gold` (string): the gold card as JSON, as verl's ground_truth.\n- `num_ideas` (int): K.\n- `instance_id`, `split` (strings).\n"
	case FormatVerlSFT:
		return "- `prompt`, `response` (strings).\n- `extra_info` ({split, index, instance_id, num_ideas}).\n"
	case FormatMessages:
		return "- `messages` (list of {role, content}): the user turn, then the assistant's answer.\n- `instance_id`, `split` (strings), `num_ideas` (int).\n"
	case FormatTRLSFT:
		return "- `prompt` (list of {role, content}): the user turn.\n- `completion` (list of {role, content}): the assistant turn.\n- `instance_id`, `split` (strings), `num_ideas` (int).\n"
	}
	return ""
}

// splitFile names the file of split, if the export has one.
func splitFile(files []ExportFile, split string) (string, bool) {
	for _, f := range files {
		if f.Split == split {
			return f.Name, true
		}
	}
	return "", false
}

// fileFor names the file that holds split, or the all file.
func fileFor(files []ExportFile, split string) string {
	for _, f := range files {
		if f.Split == split {
			return f.Name
		}
	}
	for _, f := range files {
		if f.Split == SplitAll {
			return f.Name
		}
	}
	if len(files) > 0 {
		return files[0].Name
	}
	return "FILE"
}

// longest is the longest lengths over the files.
func longest(files []ExportFile) ExportLengths {
	var l ExportLengths
	for _, f := range files {
		l.Prompt, l.Completion, l.Total = max(l.Prompt, f.Lengths.Prompt), max(l.Completion, f.Lengths.Completion), max(l.Total, f.Lengths.Total)
	}
	return l
}
