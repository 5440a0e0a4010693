package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// splitThink separates a leading <think>…</think> block, which reasoning
// models served without a reasoning parser put before the answer. Only a
// leading block is removed, so an answer may itself discuss such tags. An
// unclosed leading <think> means the model never got to the answer: all of
// it is reasoning.
func splitThink(content string) (reasoning, answer string) {
	s := strings.TrimLeft(content, " \t\r\n")
	if !strings.HasPrefix(s, "<think>") {
		return "", content
	}
	s = s[len("<think>"):]
	end := strings.Index(s, "</think>")
	if end < 0 {
		return strings.TrimSpace(s), ""
	}
	return strings.TrimSpace(s[:end]), strings.TrimSpace(s[end+len("</think>"):])
}

// extractJSON finds the JSON value in an answer: the whole text, the body
// of a ``` fence (```json or bare), or the span from the first '{' or '['
// to the last matching bracket, for models that wrap JSON in a sentence.
// It returns the value compacted, or an error saying why none was found.
func extractJSON(answer string) (json.RawMessage, error) {
	s := strings.TrimSpace(answer)
	if s == "" {
		return nil, errEmpty
	}
	candidates := []string{s}
	if body, ok := fenced(s); ok {
		candidates = append(candidates, body)
	}
	if i := strings.IndexAny(s, "{["); i >= 0 {
		closer := "}"
		if s[i] == '[' {
			closer = "]"
		}
		if j := strings.LastIndex(s, closer); j > i {
			candidates = append(candidates, s[i:j+1])
		}
	}
	var firstErr error
	for _, c := range candidates {
		var buf bytes.Buffer
		err := json.Compact(&buf, []byte(c))
		if err == nil {
			return buf.Bytes(), nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, &notJSONError{firstErr}
}

// fenced returns the body of the first ``` code fence in s.
func fenced(s string) (string, bool) {
	i := strings.Index(s, "```")
	if i < 0 {
		return "", false
	}
	rest := s[i+3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return "", false
	}
	rest = rest[nl+1:] // drops the info string ("json")
	j := strings.Index(rest, "```")
	if j < 0 {
		return rest, true // truncated after the opening fence
	}
	return rest[:j], true
}

type notJSONError struct{ err error }

func (e *notJSONError) Error() string { return "the answer is not valid JSON: " + e.err.Error() }

// estimateTokens approximates a token count from text length: about four
// bytes a token for English, which is what rate budgets and missing usage
// need, not an exact tokenizer.
func estimateTokens(n int) int64 { return int64((n + 3) / 4) }

var errEmpty = errors.New("the answer is empty")
