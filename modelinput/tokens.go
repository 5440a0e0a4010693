package modelinput

// BytesPerToken is the one estimate of token counts without a tokenizer
// that curate's outputs share (the report, the exports' length settings,
// the SFT length filter): one token per three bytes of UTF-8. Byte-level
// BPE tokenizers of current models average about four bytes a token on
// English prose and fewer on JSON and symbols, so three errs on the long
// side: a length set from it rarely truncates a row.
const BytesPerToken = 3

// EstimateTokens returns ⌈len(text)/BytesPerToken⌉.
func EstimateTokens(text string) int { return (len(text) + BytesPerToken - 1) / BytesPerToken }
