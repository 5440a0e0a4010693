package sft

// Counter counts the tokens of a text; *tokenizer.Tokenizer is one.
type Counter interface {
	Count(text string) int
}

// Estimate counts tokens without a tokenizer: one token per three bytes
// of UTF-8, rounded up. Byte-level BPE tokenizers of current models
// average about four bytes a token on English prose and fewer on JSON and
// symbols, so three bytes errs on the long side: the length filter may
// drop a row a real count would keep, but rarely keeps one a trainer
// would have to truncate. Pass --tokenizer for the exact count.
type Estimate struct{}

// Count returns ⌈len(text)/3⌉.
func (Estimate) Count(text string) int { return (len(text) + 2) / 3 }

// TemplateOverhead is added to every row's count for the chat template a
// trainer wraps around the prompt and the completion (role markers, turn
// ends: about a dozen tokens in Qwen's and Llama's templates), which
// tokenizer.json does not describe.
const TemplateOverhead = 16
