package llm

import (
	"encoding/json"
	"strings"
)

// The wire shapes of POST {base}/chat/completions, limited to the fields
// curate sends and reads.

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	// Temperature is sent when the model takes one (0 is a real choice);
	// reasoning models take only their default, and get none.
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// MaxCompletionTokens replaces MaxTokens for endpoints that reject it.
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Seed                *int            `json:"seed,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	// Format is Ollama's own structured-output field.
	Format json.RawMessage `json:"format,omitempty"`
	// PromptCacheKey groups requests that share a prefix on OpenAI, so
	// they reach the same cache.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
	Stream         bool   `json:"stream"` // false, said explicitly for servers that default otherwise
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_schema", or llama.cpp's "json_object"
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
	// Schema is llama.cpp's place for the schema.
	Schema json.RawMessage `json:"schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict,omitempty"`
}

type chatResponse struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"` // a string, null, or (rarely) a list of parts
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"` // Ollama and some proxies
			Refusal          string          `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// contentText reads a message content: a string, null, or a list of
// {"type":"text","text":…} parts, joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" || p.Type == "output_text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// errorMessage pulls the message out of an error body: OpenAI's and
// Anthropic's {"error":{"message":…}}, Ollama's {"error":"…"}, vLLM's
// {"message":…}, else the body itself.
func errorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		case len(e.Detail) > 0:
			if json.Unmarshal(e.Detail, &s) == nil {
				return s
			}
			return string(e.Detail)
		}
	}
	return strings.TrimSpace(string(body))
}
