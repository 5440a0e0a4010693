package sim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The simulated OpenAI and Anthropic apply the providers' documented
// rules per model, by the model a request names: what they refuse (with
// the providers' error texts), each model's least cacheable prefix,
// context window and largest output, and that reasoning models reason
// before they answer. The facts are the ones collected in
// ../shared/docs/notes/providers.md, "Per-model rules" (checked 2026-12
// against the SDK sources and the providers' pages); a model named
// otherwise (Model, "sim-1", "gpt-sim") gets no such rule, as the
// OpenAI-compatible servers of the tests take anything.
//
// The rules are written here from the providers' documents, not from
// curate's model table: the conformance test (client/llm) holds the
// table against them.

// modelRules are one model's rules.
type modelRules struct {
	// defaultTemperature: only the default temperature (1) is taken.
	// OpenAI gpt-5* and o1/o3/o4* (providers.md; openai-python
	// completion_create_params).
	defaultTemperature bool
	// noMaxTokens: max_tokens is refused for max_completion_tokens (the
	// same models: "not compatible with o-series models").
	noMaxTokens bool
	// noSampling: temperature, top_p and top_k are refused (Anthropic's
	// Opus 4.7 and later: "'temperature' is deprecated for this model.").
	noSampling bool
	// noStructured: output_config.format and strict tools are refused
	// (Claude models before the 4.5 generation: "does not support strict
	// tools").
	noStructured bool
	// minCache is the least cacheable prefix in tokens: OpenAI 1,024;
	// Anthropic 4,096 on Opus 4.5+ and Haiku 4.5, about 2,048 on Sonnet
	// 4.6 (documented 1,024, measured between 2,038 and 2,067), 2,048 on
	// the Haiku 3 models, 1,024 on the other Sonnet and Opus models.
	minCache int
	// window and maxOutput are the context window and the largest answer
	// limit, tokens; 0 sets none.
	window, maxOutput int
	// reasoning is the tokens a reasoning model thinks before it
	// answers: billed as output, and within the answer limit.
	reasoning int
	// windowStop: a prompt that fits, with a limit past the window, runs
	// until the window ends (stop_reason model_context_window_exceeded,
	// Claude 4.5 and later) rather than being refused.
	windowStop bool
}

// openAIModel is the rules of an OpenAI model name.
func openAIModel(model string) modelRules {
	m := strings.ToLower(model)
	r := modelRules{minCache: cacheMinTokens}
	switch {
	case strings.HasPrefix(m, "gpt-5"):
		r.defaultTemperature, r.noMaxTokens = true, true
		r.window, r.maxOutput, r.reasoning = 400_000, 128_000, simReasoning
	case oSeries.MatchString(m):
		r.defaultTemperature, r.noMaxTokens = true, true
		r.window, r.maxOutput, r.reasoning = 200_000, 100_000, simReasoning
	case strings.HasPrefix(m, "gpt-4o"):
		r.window, r.maxOutput = 128_000, 16_384
	case strings.HasPrefix(m, "gpt-4.1"):
		r.window, r.maxOutput = 1_047_576, 32_768
	}
	return r
}

var oSeries = regexp.MustCompile(`^o[134](-|$)`)

// simReasoning is what the simulated reasoning models think, in tokens,
// before each answer: within what a first answer limit leaves for it.
const simReasoning = 600

var claudeName = regexp.MustCompile(`^claude-(?:(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2}))?|(\d)-(\d)-(sonnet|haiku|opus))(?:$|-)`)

// anthropicModel is the rules of a Claude model name.
func anthropicModel(model string) modelRules {
	m := claudeName.FindStringSubmatch(strings.ToLower(model))
	if m == nil {
		return modelRules{minCache: cacheMinTokens}
	}
	family, major, minor := m[1], m[2], m[3]
	if family == "" { // claude-3-5-sonnet, claude-3-7-sonnet
		family, major, minor = m[6], m[4], m[5]
	}
	maj, _ := strconv.Atoi(major)
	mnr, _ := strconv.Atoi(minor)
	v := maj*100 + mnr // 406 for 4.6
	r := modelRules{minCache: 1024, window: 200_000, maxOutput: 64_000}
	r.noStructured = v < 405
	r.windowStop = v >= 405
	r.noSampling = family == "opus" && v >= 407
	switch {
	case family == "opus" && v >= 405, family == "haiku" && v >= 405:
		r.minCache = 4096
	case family == "sonnet" && v == 406:
		r.minCache = 2048
	case family == "haiku":
		r.minCache = 2048
	}
	switch {
	case family == "opus" && v < 405 && v >= 400:
		r.maxOutput = 32_000
	case v < 307:
		r.maxOutput = 8192
	}
	return r
}

// The providers' words, for the refusals the rules make.
func openAITemperatureError(t float64) string {
	// OpenAI's 400 (param "temperature", code "unsupported_value").
	return fmt.Sprintf("Unsupported value: 'temperature' does not support %s with this model. Only the default (1) value is supported.",
		strconv.FormatFloat(t, 'f', -1, 64))
}

// openAIMaxTokensError is OpenAI's 400 for max_tokens on a reasoning
// model (param "max_tokens", code "unsupported_parameter").
const openAIMaxTokensError = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."

func openAIWindowError(window, prompt int) string {
	// OpenAI's 400 (code "context_length_exceeded").
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, prompt)
}

func openAIOutputError(limit, max int) string {
	return fmt.Sprintf("max_tokens is too large: %d. This model supports at most %d completion tokens, whereas you provided %d.", limit, max, limit)
}

func anthropicSamplingError(param string) string {
	// Anthropic's 400 (invalid_request_error) on Opus 4.7 and later.
	return fmt.Sprintf("'%s' is deprecated for this model.", param)
}

func anthropicStrictToolsError(model string) string {
	// Anthropic's 400 for a strict tool on a model before 4.5.
	return fmt.Sprintf("'%s' does not support strict tools.", model)
}

func anthropicOutputFormatError(model string) string {
	// The 400 for output_config.format on a model before 4.5: providers.md
	// names the refusal, not its words; these are the simulator's.
	return fmt.Sprintf("output_config.format: structured outputs are not supported for model '%s'.", model)
}

func anthropicWindowError(prompt, window int) string {
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, window)
}

func anthropicLimitWindowError(prompt, limit, window int) string {
	return fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", prompt, limit, window)
}

func anthropicOutputError(limit, max int, model string) string {
	return fmt.Sprintf("max_tokens: %d > %d, which is the maximum allowed number of output tokens for %s", limit, max, model)
}

// cut returns the first tokens of answer (four bytes a token), on a rune
// boundary.
func cut(answer string, tokens int) string {
	n := max(tokens, 0) * bytesPerToken
	if n >= len(answer) {
		return answer
	}
	for n > 0 && !utf8.RuneStart(answer[n]) {
		n--
	}
	return answer[:n]
}
