package llm

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
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
	switch c.rules.row.Structured {
	case StructuredOutputConfig:
		// A row the table knows takes output_config; for the provider's
		// row of unknown models the others are what a refusal falls to.
		return []formatMode{formatSchema, formatToolStrict, formatTool}
	case StructuredTool:
		return []formatMode{formatTool}
	case StructuredSchema:
		return []formatMode{formatSchema, formatToolStrict, formatTool}
	}
	return nil
}

func (anthropicProtocol) formatRejected(m string, mode formatMode) bool {
	var words []string
	switch mode {
	case formatSchema:
		words = []string{"output_config", "output_format", "json_schema", "structured output", "schema"}
	case formatToolStrict:
		words = []string{"strict"}
	case formatTool:
		words = []string{"tool", "input_schema", "schema"}
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

// AnthropicStructuredOutput reports whether a Claude model's name says it
// is of the 4.5 generation or later, which takes output_config.format
// (older models take a tool without strict). The model table says it per
// model; this reads a name the table may not know.
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
	Temperature  *float64               `json:"temperature,omitempty"`
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
	Strict      bool            `json:"strict,omitempty"`
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
	// CacheCreation splits the writes by lifetime, which are priced
	// apart.
	CacheCreation *struct {
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// usage normalises Anthropic's counts: its input_tokens leaves out the
// tokens read from and written to the cache, Usage.PromptTokens has them
// all, as OpenAI's prompt_tokens does.
func (u *anthropicUsage) usage() Usage {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	out := Usage{
		PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens,
	}
	if cc := u.CacheCreation; cc != nil {
		out.CacheWrite1hTokens = min(cc.Ephemeral1h, u.CacheCreationInputTokens)
	}
	return out
}

func (p anthropicProtocol) encode(c *Client, req *Request, conv []chatMessage, rd round) ([]byte, int64, error) {
	ar := p.request(c, req, conv, rd)
	body, err := json.Marshal(ar)
	return body, estimateAnthropic(ar), err
}

// prefix names the marked system prompt and what precedes it (tools, the
// output format): what requests of a stage share.
func (p anthropicProtocol) prefix(c *Client, req *Request, rd round) (string, int64) {
	ar := p.request(c, req, nil, rd)
	if len(ar.System) == 0 || ar.System[0].CacheControl == nil {
		return "", 0
	}
	shared := &anthropicRequest{Model: ar.Model, System: ar.System, Tools: ar.Tools, OutputConfig: ar.OutputConfig}
	b, _ := json.Marshal(shared)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), estimateAnthropic(shared)
}

// cacheTTL is the prompt cache lifetime of a round: the configured one,
// else an hour for a batch line and five minutes otherwise.
func (c *Client) cacheTTL(batch bool) string {
	if t := c.cfg.PromptCacheTTL; t != "" {
		return t
	}
	if batch {
		return TTL1h
	}
	return TTL5m
}

// cacheMargin is how much a prefix's estimate (four bytes a token) must
// exceed a model's least cacheable prefix to count as reaching it: the
// providers' tokenizers count English prose at more bytes a token.
const cacheMargin = 1.15

// reaches reports whether est tokens (estimated) reach the model's least
// cacheable prefix.
func (c *Client) reaches(est int64) bool {
	return float64(est) >= cacheMargin*float64(c.rules.row.MinCachePrefix)
}

func (anthropicProtocol) request(c *Client, req *Request, conv []chatMessage, rd round) *anthropicRequest {
	m := rd.mode
	caching := !c.cfg.NoPromptCache && c.rules.row.Cache != CacheNone
	ttl := c.cacheTTL(rd.batch)
	var cc *cacheControl
	if caching {
		cc = &cacheControl{Type: "ephemeral", TTL: strings.TrimSuffix(ttl, TTL5m)}
	}
	ar := &anthropicRequest{
		Model:     c.cfg.Model,
		MaxTokens: cmp.Or(rd.limit, defaultAnswerLimit),
	}
	if c.rules.temperature() {
		t := req.Temperature
		ar.Temperature = &t
	}
	switch m {
	case formatSchema:
		ar.OutputConfig = &anthropicOutputConfig{Format: &anthropicFormat{Type: "json_schema", Schema: req.Schema.WireSchema(DialectAnthropic)}}
	case formatToolStrict, formatTool:
		ar.Tools = []anthropicTool{{
			Name:        req.Schema.name,
			Description: "Give the answer: call this tool once with the complete answer as its input.",
			InputSchema: req.Schema.WireSchema(DialectAnthropic),
			Strict:      m == formatToolStrict,
		}}
		ar.ToolChoice = &anthropicToolChoice{Type: "tool", Name: req.Schema.name}
	}
	if s := system(req, m); s != "" {
		// The system prompt is lengthened by the worked examples when it
		// alone falls short of the model's least cacheable prefix and
		// with them reaches it: read from the cache at a tenth of the
		// price, the longer prefix costs less than the short one uncached.
		if caching && req.Examples != "" && !c.reaches(estimateAnthropic(ar)+estimateTokens(len(s))) &&
			c.reaches(estimateAnthropic(ar)+estimateTokens(len(s)+2+len(req.Examples))) {
			s += "\n\n" + req.Examples
		}
		ar.System = []anthropicBlock{{Type: "text", Text: s, CacheControl: cc}}
	}
	user := anthropicMessage{Role: "user"}
	if req.Static != "" {
		user.Content = append(user.Content, anthropicBlock{Type: "text", Text: req.Static, CacheControl: cc})
	}
	if req.Paper != "" {
		b := anthropicBlock{Type: "text", Text: req.Paper}
		// The paper is marked when another call reads it and the write
		// pays for that one read at this lifetime (five minutes: yes; an
		// hour, written at twice the input price: no).
		if caching && req.PaperShared && c.rules.pays(ttl, 1, c.price()) {
			b.CacheControl = cc
		}
		user.Content = append(user.Content, b)
	}
	user.Content = append(user.Content, anthropicBlock{Type: "text", Text: req.User})
	ar.Messages = append(ar.Messages, user)
	for _, t := range conv {
		ar.Messages = append(ar.Messages, anthropicMessage{Role: t.Role, Content: []anthropicBlock{{Type: "text", Text: t.Content}}})
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
	a := &answer{content: c.scrub(cmp.Or(tool, text.String())), model: cmp.Or(ar.Model, c.cfg.Model), finish: finishStop}
	think, rest := splitThink(a.content)
	a.answer = rest
	a.reasoning = c.scrub(cmp.Or(thinking.String(), think))
	switch ar.StopReason {
	case "max_tokens":
		a.finish = finishLength
	case "model_context_window_exceeded":
		a.finish = finishContextWindow
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
