package record

import "time"

// ModelRefusals is what an LLM endpoint refused of a model the model
// table does not know, learned from its error answers (kind
// "llm-model-refusals", one item per provider and model): kept in the
// store so that the next run, and the next batch, never send it again.
type ModelRefusals struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// NoTemperature: the model takes only its default temperature, so
	// none is sent. MaxCompletionTokens: it wants max_completion_tokens
	// rather than max_tokens.
	NoTemperature       bool `json:"no_temperature,omitempty"`
	MaxCompletionTokens bool `json:"max_completion_tokens,omitempty"`
	// Formats lists, by schema name ("*" for every schema), the
	// structured-output modes it refused ("response_format",
	// "output_config", "strict tool", "tool").
	Formats map[string][]string `json:"formats,omitempty"`
	// Learned says what was refused, when, and in the endpoint's words.
	Learned []ModelRefusal `json:"learned"`
}

// ModelRefusal is one thing an endpoint refused.
type ModelRefusal struct {
	What    string    `json:"what"`
	Status  int       `json:"status"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// ModelRefusalSets are the learned refusals, under the item
// "llm-model:PROVIDER:MODEL".
var ModelRefusalSets = KindOf[ModelRefusals]("llm-model-refusals")
