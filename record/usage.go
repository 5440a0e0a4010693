package record

// Usage is a token count of LLM calls, as the records that LLM calls made
// carry it.
type Usage struct {
	// PromptTokens counts all input tokens, those read from or written
	// to the provider's prompt cache included.
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// CachedTokens are the prompt tokens the provider served from its
	// prompt cache (OpenAI's cached_tokens, Anthropic's
	// cache_read_input_tokens), CacheWriteTokens those it wrote to it
	// (Anthropic's cache_creation_input_tokens).
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// CacheWrite1hTokens are the part of CacheWriteTokens written with
	// the one-hour lifetime (Anthropic's
	// cache_creation.ephemeral_1h_input_tokens), priced higher than
	// five-minute writes.
	CacheWrite1hTokens int64 `json:"cache_write_1h_tokens,omitempty"`
	// Estimated is set when the server reported no usage and the counts
	// were estimated from the text length (4 bytes a token).
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the sum of u and v; the sum is estimated if either is.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:       u.PromptTokens + v.PromptTokens,
		CompletionTokens:   u.CompletionTokens + v.CompletionTokens,
		TotalTokens:        u.TotalTokens + v.TotalTokens,
		CachedTokens:       u.CachedTokens + v.CachedTokens,
		CacheWriteTokens:   u.CacheWriteTokens + v.CacheWriteTokens,
		CacheWrite1hTokens: u.CacheWrite1hTokens + v.CacheWrite1hTokens,
		Estimated:          u.Estimated || v.Estimated,
	}
}
