package httpx_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/redact"
	"github.com/groundwork/curate/internal/testutil"
)

// echoForms writes v the ways an echoing endpoint or proxy does: as is,
// inside JSON, URL-encoded, and in base64 (a dumped request, Basic
// credentials).
func echoForms(v string) string {
	j, _ := json.Marshal(map[string]string{"x-api-key": v})
	return fmt.Sprintf("raw=%s json=%s query=%s dump=%s basic=%s", v, j, url.QueryEscape(v),
		base64.StdEncoding.EncodeToString([]byte("GET / HTTP/1.1\r\nX-Api-Key: "+v+"\r\n")),
		base64.StdEncoding.EncodeToString([]byte("curate:"+v)))
}

// leaks returns the forms of the secrets found in text.
func leaks(text string, secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		for _, f := range []string{s, url.QueryEscape(s), base64.StdEncoding.EncodeToString([]byte(s))[:16]} {
			if strings.Contains(text, f) {
				out = append(out, f)
			}
		}
		if strings.Contains(text, "PLANTED") {
			out = append(out, "PLANTED")
		}
	}
	return out
}

// TestEchoRedacted: an endpoint that echoes the request (its own key and
// the other services' keys, as a shared proxy would) in answers of every
// kind, the final ones httpx hands back included: no body, header, URL,
// error or log line that comes out of httpx holds any of them, in any
// form.
func TestEchoRedacted(t *testing.T) {
	const own = "s2-PLANTED-own-key-0123456789"
	const other = "sk-PLANTED-llm/key+0123456789=="
	const proxy = "proxy-PLANTED-pass-01234"
	echo := func(w http.ResponseWriter, r *http.Request, status int) {
		w.Header().Set("X-Echo", r.Header.Get("X-Api-Key"))
		w.WriteHeader(status)
		io.WriteString(w, echoForms(r.Header.Get("X-Api-Key"))+" "+echoForms(other)+" "+echoForms(proxy))
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/ok":
			echo(w, r, 200)
		case "/400":
			echo(w, r, 400)
		case "/403":
			echo(w, r, 403)
		case "/503":
			echo(w, r, 503)
		case "/redirect":
			http.Redirect(w, r, "/ok?k="+url.QueryEscape(r.Header.Get("X-Api-Key")), http.StatusFound)
		}
	})
	var logs testutil.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, httpx.Config{Secrets: redact.UserInfo(&url.URL{User: url.UserPassword("u", proxy)}), Logger: logger},
		httpx.ServiceConfig{Name: "s2", BaseURL: srv.URL, Header: http.Header{"X-Api-Key": {own}}},
		httpx.ServiceConfig{Name: "llm", BaseURL: "https://llm.example", Header: http.Header{"Authorization": {"Bearer " + other}}})
	s, _ := c.Service("s2")
	var emitted []string
	for _, p := range []string{"/ok", "/400", "/403", "/503", "/redirect", "/ok?api_key=" + own} {
		resp, err := s.Get(context.Background(), p, nil)
		if err != nil {
			emitted = append(emitted, err.Error(), fmt.Sprintf("%+v", err))
			var se *httpx.StatusError
			if errors.As(err, &se) {
				emitted = append(emitted, string(se.Body), se.URL)
			}
			continue
		}
		emitted = append(emitted, string(resp.Body), resp.URL, resp.Location, fmt.Sprint(resp.Header))
		if !strings.Contains(string(resp.Body), redact.Mask) {
			t.Errorf("%s: no key redacted in %q", p, resp.Body)
		}
	}
	emitted = append(emitted, logs.String(), c.Redact("text naming "+other))
	if got := srv.recorded()[0].Header.Get("X-Api-Key"); got != own {
		t.Fatalf("the server got key %q; the test proves nothing", got)
	}
	for _, text := range emitted {
		if l := leaks(text, own, other, proxy); len(l) > 0 {
			t.Errorf("%q leaks %q", text, l)
		}
	}
}
