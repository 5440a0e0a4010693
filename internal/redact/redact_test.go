package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/redact"
)

// A key with the characters the encodings treat differently: '+', '/'
// and '=' (URL-escaped, '/' sometimes JSON-escaped), '&' and '<' (Go's
// JSON escapes them), a quote and a backslash (every JSON escapes them).
const key = `sk-PLANTED+key/with=odd&chars<"\0123456789`

func jsonString(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

func TestForms(t *testing.T) {
	r := redact.New(key)
	tests := []struct {
		name, text string
	}{
		{"raw", "your key was " + key + "."},
		{"json go", `{"x-api-key":"` + jsonString(key, true) + `"}`},
		{"json no html escape", `{"x-api-key":"` + jsonString(key, false) + `"}`},
		{"json escaped slash", `{"k":"` + strings.ReplaceAll(jsonString(key, false), "/", `\/`) + `"}`},
		{"query", "GET /x?api_key=" + url.QueryEscape(key) + "&y=1"},
		{"path", "GET /keys/" + url.PathEscape(key)},
		{"lower hex", "k=" + regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(key), strings.ToLower)},
		{"html", "<p>your key: " + html.EscapeString(key) + "</p>"},
		{"xml", "<!-- " + strings.NewReplacer("&", "&amp;", "<", "&lt;", `"`, "&quot;").Replace(key) + " -->"},
		{"twice encoded", "next=" + url.QueryEscape("https://h/?k="+url.QueryEscape(key))},
	}
	// Base64 of text holding the key at every alignment: a dumped request,
	// Basic credentials of a user name of any length.
	for pre := range 5 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			plain := strings.Repeat("u", pre) + ":" + key + "\r\nHost: x"
			tests = append(tests, struct{ name, text string }{fmt.Sprintf("base64 after %d bytes", pre+1), "Authorization: Basic " + enc.EncodeToString([]byte(plain))})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.text)
			if got == tt.text || !strings.Contains(got, redact.Mask) {
				t.Fatalf("nothing redacted in %q", tt.text)
			}
			leaked := []string{key, "PLANTED", jsonString(key, true), url.QueryEscape(key)}
			if strings.HasPrefix(tt.name, "base64") {
				// Not even the characters at the edges of the key's run,
				// which carry some of its bits.
				_, enc, _ := strings.Cut(tt.text, "Basic ")
				leaked = append(leaked, enc[:4], enc[len(enc)-4:])
			}
			for _, leak := range leaked {
				if strings.Contains(got, leak) {
					t.Errorf("%q still holds %q", got, leak)
				}
			}
			if b := r.Bytes([]byte(tt.text)); string(b) != got {
				t.Errorf("Bytes = %q, String = %q", b, got)
			}
		})
	}
}

func TestNothingElseChanges(t *testing.T) {
	r := redact.New(key, "short", "")
	for _, text := range []string{"", "a short text", "sk-PLANTED", "base64 " + base64.StdEncoding.EncodeToString([]byte("no secret here at all"))} {
		if got := r.String(text); got != text {
			t.Errorf("String(%q) = %q", text, got)
		}
		b := []byte(text)
		if got := r.Bytes(b); len(b) > 0 && &got[0] != &b[0] {
			t.Errorf("Bytes(%q) copied a text without a secret", text)
		}
	}
	var none *redact.Redactor
	if !none.Empty() || none.String(key) != key || none.Error(errors.New(key)).Error() != key {
		t.Error("a nil Redactor changed something")
	}
}

func TestError(t *testing.T) {
	r := redact.New(key)
	base := errors.New("status 400: " + key)
	err := r.Error(fmt.Errorf("s2: get: %w", base))
	if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "s2: get: status 400: "+redact.Mask) {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, base) {
		t.Error("the redacted error lost its chain")
	}
	clean := errors.New("no secret")
	if r.Error(clean) != clean {
		t.Error("an error without a secret was wrapped")
	}
}

func TestCredentials(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("curate:pa55word-1"))
	tests := []struct {
		value string
		want  []string
	}{
		{"sk-plain-000000", []string{"sk-plain-000000"}},
		{"Bearer sk-bearer-0000", []string{"Bearer sk-bearer-0000", "sk-bearer-0000"}},
		{"Basic " + basic, []string{"Basic " + basic, basic, "curate:pa55word-1", "pa55word-1"}},
	}
	for _, tt := range tests {
		if got := redact.Credentials(tt.value); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Credentials(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
	u, _ := url.Parse("http://proxyuser:s3cret-pass@proxy.example:3128")
	got := redact.UserInfo(u)
	want := []string{"s3cret-pass", "proxyuser:s3cret-pass", base64.StdEncoding.EncodeToString([]byte("proxyuser:s3cret-pass"))}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("UserInfo = %q, want %q", got, want)
	}
	if u, _ := url.Parse("http://proxy.example:3128"); redact.UserInfo(u) != nil {
		t.Error("credentials from a URL without user info")
	}
	// The Basic header of the proxy, echoed, is redacted by these.
	r := redact.New(got...)
	if out := r.String("Proxy-Authorization: Basic " + want[2]); strings.Contains(out, "s3cret") || strings.Contains(out, want[2]) {
		t.Errorf("proxy credentials left in %q", out)
	}
}

// BenchmarkBytes scans a page-sized body holding no secret for the three
// keys of a run: the cost every response body pays.
func BenchmarkBytes(b *testing.B) {
	r := redact.New(key, "s2-0123456789abcdefghijklmnopqrstuvwxyzABCD", "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz")
	page := []byte(strings.Repeat("<p class=\"ltx_p\">Methods for epidemic forecasting lose transfer across domains when annotators disagree.</p>\n", 16<<20/100))
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		r.Bytes(page)
	}
}
