package llm

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// anthropicProtocol is Anthropic's native Messages API (POST /v1/messages):
// the system prompt as a top-level field, max_tokens always set, cache
// breakpoints on the static blocks, and structured output through
// output_config.format where the model has it, else a strict tool the
// model is made to call.
type anthropicProtocol struct{}

func (anthropicProtocol) what() string { return "message" }
func (anthropicProtocol) path() string { return "messages" }

func (anthropicProtocol) header(c *Client) http.Header {
	return http.Header{
		"Content-Type":      {"application/json"},
		"Accept":            {"application/json"},
		"Anthropic-Version": {c.cfg.AnthropicVersion},
	}
}

func (anthropicProtocol) modes(c *Client) []formatMode {
	if AnthropicStructuredOutput(c.cfg.Model) {
		return []formatMode{formatSchema, formatTool}
	}
	return []formatMode{formatTool}
}

func (anthropicProtocol) formatRejected(m string, mode formatMode) bool {
	words := []string{"output_config", "output_format", "json_schema", "schema"}
	if mode == formatTool {
		words = []string{"tool", "input_schema", "strict", "schema"}
	}
	for _, w := range words {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// claudeVersion reads family, major and minor version from a model name
// such as claude-sonnet-4-6, claude-opus-4.8 or claude-haiku-4-5-20251001
// (a date is not a minor version).
var claudeVersion = regexp.MustCompile(`^claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2}))?(?:$|-)`)

// AnthropicStructuredOutput reports whether model takes
// output_config.format (Opus and Sonnet 4.5 and later, Haiku 4.5 and
// later); older models get a strict tool instead.
func AnthropicStructuredOutput(model string) bool {
	m := claudeVersion.FindStringSubmatch(strings.ToLower(model))
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[2])
	minor, _ := strconv.Atoi(cmp.Or(m[3], "0"))
	return major > 4 || major == 4 && minor >= 5
}

type anthropicRequest struct {
	Model        string                 `json:"model"`
	MaxTokens    int                    `json:"max_tokens"`
	System       []anthropicBlock       `json:"system,omitempty"`
	Messages     []anthropicMessage     `json:"messages"`
	Temperature  float64                `json:"temperature"`
	OutputConfig *anthropicOutputConfig `json:"output_config,omitempty"`
	Tools        []anthropicTool        `json:"tools,omitempty"`
	ToolChoice   *anthropicToolChoice   `json:"tool_choice,omitempty"`
}

type anthropicBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"` // "ephemeral"
	TTL  string `json:"ttl,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicOutputConfig struct {
	Format *anthropicFormat `json:"format,omitempty"`
}

type anthropicFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Schema json.RawMessage `json:"schema"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      bool            `json:"strict"`
}

type anthropicToolChoice struct {
	Type string `json:"type"` // "tool"
	Name string `json:"name"`
}

type anthropicResponse struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      *anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// usage normalises Anthropic's counts: its input_tokens leaves out the
// tokens read from and written to the cache, Usage.PromptTokens has them
// all, as OpenAI's prompt_tokens does.
func (u *anthropicUsage) usage() Usage {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return Usage{
		PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

func (p anthropicProtocol) encode(c *Client, req *Request, conv []chatMessage, m formatMode) ([]byte, int64, error) {
	ar := p.request(c, req, conv, m)
	body, err := json.Marshal(ar)
	return body, estimateAnthropic(ar), err
}

func (anthropicProtocol) request(c *Client, req *Request, conv []chatMessage, m formatMode) *anthropicRequest {
	var cc *cacheControl
	if !c.cfg.NoPromptCache {
		cc = &cacheControl{Type: "ephemeral", TTL: strings.TrimSuffix(c.cfg.PromptCacheTTL, "5m")}
	}
	ar := &anthropicRequest{
		Model:       c.cfg.Model,
		MaxTokens:   cmp.Or(req.MaxTokens, defaultAnthropicMaxTokens),
		Temperature: req.Temperature,
	}
	if s := system(req, m); s != "" {
		ar.System = []anthropicBlock{{Type: "text", Text: s, CacheControl: cc}}
	}
	user := anthropicMessage{Role: "user"}
	if req.Static != "" {
		user.Content = append(user.Content, anthropicBlock{Type: "text", Text: req.Static, CacheControl: cc})
	}
	user.Content = append(user.Content, anthropicBlock{Type: "text", Text: req.User})
	ar.Messages = append(ar.Messages, user)
	for _, t := range conv {
		ar.Messages = append(ar.Messages, anthropicMessage{Role: t.Role, Content: []anthropicBlock{{Type: "text", Text: t.Content}}})
	}
	switch m {
	case formatSchema:
		ar.OutputConfig = &anthropicOutputConfig{Format: &anthropicFormat{Type: "json_schema", Schema: req.Schema.WireSchema(DialectAnthropic)}}
	case formatTool:
		ar.Tools = []anthropicTool{{
			Name:        req.Schema.name,
			Description: "Give the answer: call this tool once with the complete answer as its input.",
			InputSchema: req.Schema.WireSchema(DialectAnthropic),
			Strict:      true,
		}}
		ar.ToolChoice = &anthropicToolChoice{Type: "tool", Name: req.Schema.name}
	}
	return ar
}

func estimateAnthropic(ar *anthropicRequest) int64 {
	n := int64(0)
	for _, b := range ar.System {
		n += estimateTokens(len(b.Text))
	}
	for _, m := range ar.Messages {
		n += messageOverhead
		for _, b := range m.Content {
			n += estimateTokens(len(b.Text))
		}
	}
	if ar.OutputConfig != nil {
		n += estimateTokens(len(ar.OutputConfig.Format.Schema))
	}
	for _, t := range ar.Tools {
		n += estimateTokens(len(t.InputSchema) + len(t.Description))
	}
	return n
}

func (anthropicProtocol) decode(c *Client, body []byte, promptEst int64) (*answer, error) {
	var ar anthropicResponse
	if err := json.Unmarshal(body, &ar); err != nil {
		return nil, errors.New("the body is not JSON: " + clip(strings.TrimSpace(string(body)), 80))
	}
	if ar.Type != "message" {
		return nil, errors.New("the response is not a message: " + clip(c.scrub(errorMessage(body)), maxMessageLen))
	}
	return anthropicAnswer(c, &ar, promptEst), nil
}

// anthropicAnswer reads a message: its text blocks, or the input of the
// tool it called, as the answer.
func anthropicAnswer(c *Client, ar *anthropicResponse, promptEst int64) *answer {
	var text, thinking strings.Builder
	tool := ""
	for _, b := range ar.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thinking.WriteString(b.Thinking)
		case "tool_use":
			if tool == "" {
				tool = string(b.Input)
			}
		}
	}
	a := &answer{content: c.scrub(cmp.Or(tool, text.String())), model: cmp.Or(ar.Model, c.cfg.Model), finish: "stop"}
	think, rest := splitThink(a.content)
	a.answer = rest
	a.reasoning = c.scrub(cmp.Or(thinking.String(), think))
	switch ar.StopReason {
	case "max_tokens":
		a.finish = "length"
	case "refusal":
		a.refusal = "stop_reason refusal"
	}
	if ar.Usage != nil && (ar.Usage.InputTokens > 0 || ar.Usage.OutputTokens > 0) {
		a.usage = ar.Usage.usage()
	} else {
		done := estimateTokens(len(a.content))
		a.usage = Usage{PromptTokens: promptEst, CompletionTokens: done, TotalTokens: promptEst + done, Estimated: true}
	}
	return a
}
