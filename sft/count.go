package sft

import "github.com/groundwork/curate/modelinput"

// Counter counts the tokens of a text; *tokenizer.Tokenizer is one.
type Counter interface {
	Count(text string) int
}

// Estimate counts tokens without a tokenizer, as every curate output
// does (modelinput.EstimateTokens: one token per three bytes, on the long
// side): the length filter may drop a row a real count would keep, but
// rarely keeps one a trainer would have to truncate. Pass --tokenizer for
// the exact count.
type Estimate struct{}

// Count returns modelinput.EstimateTokens(text).
func (Estimate) Count(text string) int { return modelinput.EstimateTokens(text) }

// TemplateOverhead is added to every row's count for the chat template a
// trainer wraps around the prompt and the completion (role markers, turn
// ends: about a dozen tokens in Qwen's and Llama's templates), which
// tokenizer.json does not describe.
const TemplateOverhead = 16
