package trainerconf

import (
	"slices"
	"strings"
	"testing"
)

func load(t *testing.T) Schemas {
	t.Helper()
	s, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLoad: the excerpts give each trainer its keys, deprecations,
// registries and TRL fields.
func TestLoad(t *testing.T) {
	s := load(t)
	ppo := s["verl.trainer.main_ppo"]
	for key, kind := range map[string]Kind{
		"data.val_files": Leaf, "data.custom_cls": Mapping, "data.apply_chat_template_kwargs": Open, "reward_model.model": Omitted,
		"reward_model.use_reward_loop": Leaf, "reward_manager.name": Leaf, "custom_reward_function.name": Leaf, "custom_reward_function": Mapping,
	} {
		if got, ok := ppo.Keys[key]; !ok || got != kind {
			t.Errorf("main_ppo %s: kind %v (recorded %v), want %v", key, got, ok, kind)
		}
	}
	if _, ok := ppo.Deprecated["reward_model.reward_manager"]; !ok {
		t.Errorf("reward_model.reward_manager is not deprecated: %v", ppo.Deprecated)
	}
	if !slices.Equal(ppo.Registries["loop"], []string{"dapo", "naive", "rate_limited", "remote"}) || !slices.Contains(ppo.Registries["legacy"], "batch") {
		t.Errorf("registries %v", ppo.Registries)
	}
	if _, ok := s["verl.trainer.fsdp_sft_trainer"].Deprecated["data.micro_batch_size"]; !ok {
		t.Errorf("fsdp_sft_trainer: data.micro_batch_size not deprecated")
	}
	if k := s["verl.trainer.sft_trainer"].Keys["data.messages_key"]; k != Leaf {
		t.Errorf("sft_trainer data.messages_key: %v", k)
	}
	sft, grpo := s["SFTTrainer"], s["GRPOTrainer"]
	if !slices.Contains(sft.Fields, "max_length") || !slices.Equal(sft.Choices["truncation_mode"], []string{"keep_end", "keep_start"}) || !slices.Contains(sft.Params, "eval_dataset") {
		t.Errorf("SFTTrainer: %+v", sft)
	}
	if !slices.Contains(grpo.Fields, "vllm_max_model_length") || !slices.Contains(grpo.Params, "reward_funcs") || slices.Contains(grpo.Params, "self") {
		t.Errorf("GRPOTrainer: %+v", grpo)
	}
}

// TestCheck: what a README may print and what it may not.
func TestCheck(t *testing.T) {
	s := load(t)
	tests := []struct {
		name, readme string
		want         []string // each problem's setting, in order
	}{
		{"valid verl command", "```\npython3 -m verl.trainer.main_ppo \\\n  data.train_files=train.parquet data.val_files=validation.parquet \\\n  custom_reward_function.path=reward.py \\\n  +custom_reward_function.reward_kwargs.quality_url=http://x ...\n```\n", nil},
		{"unknown key", "```\npython3 -m verl.trainer.main_ppo data.val_file=x\n```\n", []string{"data.val_file"}},
		{"append an existing key", "```\npython3 -m verl.trainer.main_ppo +data.val_files=x\n```\n", []string{"+data.val_files"}},
		{"set a new key without +", "```\npython3 -m verl.trainer.main_ppo custom_reward_function.reward_kwargs.x=1\n```\n", []string{"custom_reward_function.reward_kwargs.x"}},
		{"key in a left-out subtree", "```\npython3 -m verl.trainer.main_ppo reward_model.model.path=x\n```\n", []string{"reward_model.model.path"}},
		{"deprecated batch manager in prose", "```\npython3 -m verl.trainer.main_ppo data.val_files=x\n```\n\n- With `reward_model.reward_manager=batch`, use it.\n", []string{"reward_model.reward_manager", "reward_model.reward_manager=batch"}},
		{"a manager of the legacy registry on the legacy path", "- `reward_model.use_reward_loop=False reward_manager.name=batch` (verl.trainer.main_ppo)\n", nil},
		{"the legacy manager with the reward loop", "- `reward_manager.name=batch` (verl.trainer.main_ppo)\n", []string{"reward_manager.name=batch"}},
		{"another trainer's key", "```\ntorchrun -m verl.trainer.sft_trainer data.prompt_key=prompt\n```\n", []string{"data.prompt_key"}},
		{"a line names its trainer", "```\ntorchrun -m verl.trainer.sft_trainer data.messages_key=messages\n```\n\n- `verl.trainer.fsdp_sft_trainer` reads it with `data.multiturn.enable=true data.multiturn.messages_key=messages`.\n", nil},
		{"columns are not settings", "```\npython3 -m verl.trainer.main_ppo data.val_files=x\n```\n\nK is `extra_info.num_ideas`, the gold `reward_model.ground_truth`.\n", nil},
		{"TRL calls", "```python\nargs = SFTConfig(max_length=9,  # a comment, with a comma\n                 truncation_mode=\"keep_start\")\ntrainer = SFTTrainer(model=\"M\", args=args, train_dataset=ds[\"train\"], eval_dataset=ds[\"validation\"])\n```\n", nil},
		{"TRL unknown field and parameter", "```python\nargs = GRPOConfig(max_completion_len=9)\nGRPOTrainer(model=\"M\", reward_fn=f, args=args)\n```\n", []string{"GRPOConfig(max_completion_len=)", "GRPOTrainer(reward_fn=)"}},
		{"TRL choice", "```python\nSFTConfig(truncation_mode=\"keep_middle\")\n```\n", []string{"truncation_mode=\"keep_middle\""}},
		{"TRL prose", "```python\nGRPOTrainer(model=\"M\")\n```\n\n- `max_completion_length` defaults to 512; `remove_unused_columns` too; `num_ideas` is a column; `max_prompt_len` is not a field.\n", []string{"max_prompt_len"}},
		{"prose call", "Set `SFTConfig(max_len=1)` (SFTTrainer).\n", []string{"SFTConfig(max_len=)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			problems, checked := s.Check(tt.readme, Options{Columns: []string{"extra_info.num_ideas", "reward_model.ground_truth", "num_ideas"}})
			if len(checked) == 0 {
				t.Errorf("nothing checked")
			}
			for _, p := range problems {
				got = append(got, p.Setting)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems %q, want %q\n%s", got, tt.want, strings.Join(func() []string {
					var out []string
					problems, _ := s.Check(tt.readme, Options{})
					for _, p := range problems {
						out = append(out, p.String())
					}
					return out
				}(), "\n"))
			}
		})
	}
}
