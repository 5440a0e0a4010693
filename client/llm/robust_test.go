package llm

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// TestFallbackPerSchema: an endpoint that rejects one schema's structured
// output keeps getting the other schemas as structured output.
func TestFallbackPerSchema(t *testing.T) {
	other := MustSchema("other", []byte(`{"type":"object","properties":{"refs":{"type":"array"}},"required":["refs"]}`))
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if rf, ok := body["response_format"].(map[string]any); ok {
			if rf["json_schema"].(map[string]any)["name"] == "classification" {
				return apiError(400, "Invalid schema for response_format 'classification': 'minLength' is not permitted.", "response_format")
			}
		}
		return ok(validAnswer)
	})
	env := newTestClient(t, srv, Config{StructuredOutput: true})
	for range 2 {
		if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil {
			t.Fatal(err)
		}
		r := jsonRequest()
		r.Schema = other
		if _, err := env.client.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	// classification: rejected, then instruction twice; other: schema twice.
	if srv.calls() != 5 {
		t.Fatalf("server saw %d calls, want 5", srv.calls())
	}
	for i := 1; i < 5; i++ {
		b := srv.request(i).body
		rf, has := b["response_format"].(map[string]any)
		sys := messages(t, b)[0][1]
		switch {
		case has && rf["json_schema"].(map[string]any)["name"] == "classification":
			t.Errorf("request %d: the rejected schema was sent again", i)
		case !has && !strings.Contains(sys, `JSON schema "classification"`):
			t.Errorf("request %d: neither structured output nor the instruction: %v", i, b)
		}
	}
	if n := strings.Count(env.logs.String(), "rejects the structured output"); n != 1 {
		t.Errorf("fallback logged %d times, want once", n)
	}
}

// TestBrokenEnvelopeRetried: a 200 whose body is an HTML page, a cut JSON
// body or an error object is asked again like a 5xx; only the answer that
// parses counts.
func TestBrokenEnvelopeRetried(t *testing.T) {
	for name, bad := range map[string]string{
		"html":         "<html><body>502 Bad Gateway</body></html>",
		"cut":          `{"id":"chatcmpl-1","choices":[{"message":{"content":"{\"re`,
		"error object": `{"error":{"message":"upstream timeout"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
				if n <= 2 {
					return raw(200, bad)
				}
				return ok(validAnswer)
			})
			env := newTestClient(t, srv, Config{})
			r, err := env.client.Complete(t.Context(), jsonRequest())
			if err != nil {
				t.Fatal(err)
			}
			if srv.calls() != 3 || r.Attempts != 1 || string(r.JSON) != validAnswer {
				t.Errorf("calls %d, attempts %d, JSON %s", srv.calls(), r.Attempts, r.JSON)
			}
		})
	}
	// Always broken: gives up after EnvelopeRetries, with the reason.
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return raw(200, "<html>") })
	env := newTestClient(t, srv, Config{EnvelopeRetries: 2})
	_, err := env.client.Complete(t.Context(), jsonRequest())
	if err == nil || !strings.Contains(err.Error(), "broken answer envelope") || srv.calls() != 3 {
		t.Errorf("err = %v after %d calls, want a broken envelope after 3", err, srv.calls())
	}
}

// TestHungAttemptRetried: an attempt that hangs past AttemptTimeout is
// retried within the call's Timeout.
func TestHungAttemptRetried(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok(validAnswer) })
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	srv.hold = func(int) {
		if n.Add(1) == 1 {
			select { // the first attempt hangs
			case <-release:
			case <-time.After(time.Minute):
			}
		}
	}
	env := newTestClient(t, srv, Config{AttemptTimeout: 200 * time.Millisecond, Timeout: time.Minute})
	r, err := env.client.Complete(t.Context(), jsonRequest())
	if err != nil {
		t.Fatal(err)
	}
	if srv.calls() != 2 || string(r.JSON) != validAnswer {
		t.Errorf("calls %d, JSON %s; want the hung attempt retried once", srv.calls(), r.JSON)
	}
	if sc := (Config{AttemptTimeout: 3 * time.Second}).ServiceConfig(); sc.Timeout != 3*time.Second {
		t.Errorf("service timeout = %s, want the attempt timeout", sc.Timeout)
	}
}

// TestHugeInvalidAnswerCut: the follow-up quotes a huge invalid answer
// cut to its start and end, with a note, not whole.
func TestHugeInvalidAnswerCut(t *testing.T) {
	huge := `{"refs": "` + strings.Repeat("é", 1<<20) + `"}`
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n == 1 {
			return ok(huge)
		}
		return ok(validAnswer)
	})
	env := newTestClient(t, srv, Config{FollowUpAnswerBytes: 4096})
	if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil {
		t.Fatal(err)
	}
	raw := srv.request(1).raw
	if len(raw) > 10_000 {
		t.Errorf("follow-up request is %d bytes, want the answer cut to about 4 KiB", len(raw))
	}
	msgs := messages(t, srv.request(1).body)
	prev, note := msgs[2][1], msgs[3][1]
	if !strings.HasPrefix(prev, `{"refs": "éé`) || !strings.HasSuffix(prev, `é"}`) || !strings.Contains(prev, "bytes of this answer left out") {
		t.Errorf("cut answer = %.80q … %.80q", prev, prev[max(len(prev)-80, 0):])
	}
	if !strings.Contains(note, "only its start and end are quoted") || !strings.Contains(note, "$.refs: got string, want array") {
		t.Errorf("follow-up = %q", note)
	}
	if !utf8.ValidString(prev) {
		t.Errorf("cut answer is not valid UTF-8: cut inside a character")
	}
}

// TestDrainBounded: once the run drains, a call stuck in retries of a
// failing endpoint ends with ErrDrained after DrainGrace, and an invalid
// answer gets no follow-up.
func TestDrainBounded(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return raw(503, "down") })
	drain := make(chan struct{})
	close(drain)
	env := newTestClient(t, srv, Config{Drain: drain, DrainGrace: 50 * time.Millisecond})
	_, err := env.client.Complete(t.Context(), jsonRequest())
	if err == nil {
		t.Fatal("no error")
	}
	// With 3 fast retries the call may end with the 503 before the grace;
	// either way it ends, and an ErrDrained names itself.
	var ae *APIError
	if errors.As(err, &ae) {
		t.Errorf("err = %v", err)
	}

	srv2 := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("no json") })
	env2 := newTestClient(t, srv2, Config{Drain: drain})
	_, err = env2.client.Complete(t.Context(), jsonRequest())
	var ie *InvalidError
	if !errors.As(err, &ie) || srv2.calls() != 1 {
		t.Errorf("err = %v after %d calls, want an InvalidError without follow-ups", err, srv2.calls())
	}
}

// TestDrainAbandonsHungCall: a call whose attempt hangs is abandoned
// DrainGrace after the drain, with ErrDrained.
func TestDrainAbandonsHungCall(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok(validAnswer) })
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	srv.hold = func(int) {
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	}
	drain := make(chan struct{})
	env := newTestClient(t, srv, Config{Drain: drain, DrainGrace: 10 * time.Millisecond})
	go func() {
		for srv.calls() == 0 {
			time.Sleep(time.Millisecond)
		}
		close(drain)
	}()
	_, err := env.client.Complete(t.Context(), jsonRequest())
	if !errors.Is(err, ErrDrained) {
		t.Fatalf("err = %v, want ErrDrained", err)
	}
}

// TestRateLimitHeaders: the provider's remaining/reset headers hold the
// next request back until the reset, computed on the headroom's clock.
func TestRateLimitHeaders(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := newHeadroom(func() time.Time { return now })
	h.observe(http.Header{
		"Anthropic-Ratelimit-Requests-Remaining": {"0"},
		"Anthropic-Ratelimit-Requests-Reset":     {now.Add(7 * time.Second).Format(time.RFC3339)},
		"Anthropic-Ratelimit-Tokens-Remaining":   {"50000"},
		"Anthropic-Ratelimit-Tokens-Reset":       {now.Add(20 * time.Second).Format(time.RFC3339)},
	})
	if d := h.delay(100); d != 7*time.Second {
		t.Errorf("no requests left: delay %s, want 7s", d)
	}
	if d := h.delay(100); d != 0 {
		t.Errorf("after the reset: delay %s, want 0", d)
	}
	h.observe(http.Header{
		"X-Ratelimit-Remaining-Requests": {"10"},
		"X-Ratelimit-Reset-Requests":     {"1s"},
		"X-Ratelimit-Remaining-Tokens":   {"1500"},
		"X-Ratelimit-Reset-Tokens":       {"6m0s"},
	})
	if d := h.delay(1000); d != 0 {
		t.Errorf("room for 1000 tokens: delay %s", d)
	}
	if d := h.delay(1000); d != maxHeadroomWait {
		t.Errorf("500 tokens left for 1000: delay %s, want the cap %s", d, maxHeadroomWait)
	}
	h.observe(http.Header{"Anthropic-Ratelimit-Input-Tokens-Remaining": {"10"},
		"Anthropic-Ratelimit-Input-Tokens-Reset": {now.Add(3 * time.Second).Format(time.RFC3339)}})
	if d := h.delay(11); d != 3*time.Second {
		t.Errorf("input tokens: delay %s, want 3s", d)
	}
}

// TestLongRetryAfterPausesAll: a Retry-After beyond httpx's clamp holds
// every later call of the Client back, each wait capped.
func TestLongRetryAfterPausesAll(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := newHeadroom(func() time.Time { return now })
	h.pause(10 * time.Minute)
	if d := h.delay(1); d != maxHeadroomWait {
		t.Errorf("paused: delay %s, want the cap %s", d, maxHeadroomWait)
	}
	now = now.Add(9*time.Minute + 30*time.Second)
	if d := h.delay(1); d != 30*time.Second {
		t.Errorf("near the end: delay %s, want 30s", d)
	}
	now = now.Add(time.Minute)
	if d := h.delay(1); d != 0 {
		t.Errorf("after the pause: delay %s", d)
	}
}
