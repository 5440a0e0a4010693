package llm

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/sim"
)

// TestAnthropicKeyNeverLeaks runs an ANTHROPIC_API_KEY through sync calls,
// a rejected call whose error quotes it, and a batch, and searches the
// logs, the errors and every stored byte for it.
func TestAnthropicKeyNeverLeaks(t *testing.T) {
	var b [8]byte
	rand.Read(b[:])
	key := "sk-ant-PLANTED-" + hex.EncodeToString(b[:])
	env := map[string]string{"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": "sk-other-000000"}
	if got := APIKeyForProvider(ProviderAnthropic, func(k string) string { return env[k] }); got != key {
		t.Fatalf("APIKeyForProvider = %q", got)
	}

	w, err := sim.NewWorld(sim.WorldConfig{Seed: 2, Targets: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Start(w, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	st := openStore(t, dir)
	cfg := Config{BaseURL: s.URL(sim.Anthropic), Provider: ProviderAnthropic, Model: "claude-sonnet-4-6", APIKey: key,
		StructuredOutput: true, Store: st, Logger: log}
	hc, err := httpx.New(httpx.Config{UserAgent: "t", Logger: log, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	if _, err := c.Complete(t.Context(), cardRequest(1)); err != nil {
		t.Fatal(err)
	}
	bt, err := NewBatcher(c, BatchConfig{Store: st, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	bt.Complete(t.Context(), cardRequest(2))
	bt.Flush(t.Context())
	bt.Wait(t.Context())
	if _, err := bt.Complete(t.Context(), cardRequest(2)); err != nil {
		t.Fatal(err)
	}

	// A server that quotes the key back in its error.
	srv := newFakeServer(t, func(int, map[string]any) fakeReply {
		return apiError(401, "invalid x-api-key: "+key, "")
	})
	env2 := newAnthropicTestClient(t, srv, Config{APIKey: key, Logger: log})
	_, err = env2.client.Complete(t.Context(), jsonRequest())
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
	outputs = append(outputs, err.Error(), ae.Message)

	for _, o := range append(outputs, logs.String()) {
		if strings.Contains(o, key) {
			t.Errorf("key leaked into %.200q", o)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	searchStore(t, dir, key[len("sk-ant-"):]) // blobs decompressed, the ledger's rows too
}
