package llm_test

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/store"
)

//go:embed prompts/testdata/classify.prompt
var stagePrompts embed.FS

// A stage loads its embedded prompt, renders it and asks for a validated
// JSON answer; the prompt version goes on every output it records.
func Example() {
	ctx := context.Background()
	st, err := store.Open(ctx, "curate-data")
	if err != nil {
		log.Fatal(err)
	}
	cfg := llm.Config{
		BaseURL:           "http://127.0.0.1:8000/v1",
		Model:             "Qwen/Qwen3-8B",
		APIKey:            llm.APIKeyFromEnv(os.Getenv),
		StructuredOutput:  true,
		RequestsPerMinute: 60,
		TokensPerMinute:   200_000,
		Store:             st,
	}
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("dev", "")}, cfg.ServiceConfig())
	if err != nil {
		log.Fatal(err)
	}
	client, err := llm.New(hc, cfg)
	if err != nil {
		log.Fatal(err)
	}

	p, err := prompts.Load(stagePrompts, "prompts/testdata/classify.prompt")
	if err != nil {
		log.Fatal(err)
	}
	system, user, err := p.Render(map[string]any{
		"Labels": []string{"motivates", "exposes_gap", "foundation", "extends"},
		"Title":  "Defining neurosymbolic AI",
		"Refs":   []map[string]any{{"N": 1, "Text": "Garcez and Lamb 2023"}},
		"Meta":   map[string]any{"year": 2025},
	})
	if err != nil {
		log.Fatal(err)
	}
	schema := llm.MustSchema("classification", []byte(`{"type":"object","properties":{"refs":{"type":"array"}},"required":["refs"],"additionalProperties":false}`))
	resp, err := client.CompleteJSON(ctx, llm.Request{
		Stage: "classify", PromptVersion: p.Version,
		System: system, User: user, Schema: schema, MaxTokens: 2000,
	}, func(doc json.RawMessage) error {
		return nil // e.g. every reference number exists, every quote verifies
	})
	if err != nil {
		log.Fatal(err) // an *llm.InvalidError keeps the raw answer for the failure record
	}
	fmt.Println(resp.Model, p.Version, resp.Cached)

	for _, c := range (llm.Prices{"Qwen/Qwen3-8B": {Input: 0, Output: 0}}).Costs(client.Meter().Tallies()) {
		fmt.Printf("%s: $%.4f spent, $%.4f saved by the cache\n", c.Stage, c.Spent, c.Saved)
	}
}
