package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Echo makes a service answer like an endpoint, or a proxy or gateway in
// front of it, that echoes the request back: its credential headers, its
// URL and a dump of it, plus planted keys, as a proxy shared by several
// services would write the keys it saw. Each value is written the ways
// such echoes write them: as is, inside JSON, URL-encoded, as the base64
// of Basic credentials and of a dumped request. Tests plant keys this way
// and then look for them in everything curate writes.
type Echo struct {
	// Keys are planted in every echo beside the request's own headers.
	Keys []string
	// Every makes one request identity in Every (drawn from the seed, the
	// same each time the request is asked) answer with an error echoing
	// the request instead of the answer; 0: none.
	Every int
	// Status is that error's status (default 400, an answer the clients
	// quote rather than retry).
	Status int
	// Answers puts the echo into the real answers too: an element of an
	// HTML page's first paragraph, a comment of an XML document or a
	// robots.txt, a member of a JSON object, a comment line at the end of
	// a PDF, and an X-Echo header on every answer.
	Answers bool
}

// On reports whether e echoes anything.
func (e Echo) On() bool { return e.Every > 0 || e.Answers }

// SetEcho replaces the service's echo (Echo{} stops it).
func (s *Service) SetEcho(e Echo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.echo = e
}

// echoed reports whether the request with identity key gets the echo
// error.
func (s *Service) echoed(e Echo, key string) bool {
	return e.Every > 0 && s.draw(key, 0, "echo") < 1/float64(e.Every)
}

// credentialHeaders are the request headers an echo repeats.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "Proxy-Authorization", "Cookie"}

// echoValues returns what an echo of r repeats: its credential headers
// and the planted keys.
func echoValues(r *http.Request, keys []string) []string {
	var vs []string
	for _, h := range credentialHeaders {
		if v := r.Header.Get(h); v != "" {
			vs = append(vs, v)
		}
	}
	return append(vs, keys...)
}

// echoText is the echo as one line of text.
func echoText(r *http.Request, keys []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "echo of %s %s:", r.Method, r.URL.RequestURI())
	for _, h := range credentialHeaders {
		if v := r.Header.Get(h); v != "" {
			fmt.Fprintf(&b, " %s: %s;", h, v)
		}
	}
	for _, k := range keys {
		fmt.Fprintf(&b, " key %s, url-encoded %s, basic %s;", k, url.QueryEscape(k), basicOf(k))
	}
	fmt.Fprintf(&b, " dump %s", dumpOf(r, keys))
	return b.String()
}

// echoJSON is the echo as a JSON object: the values JSON-escaped.
func echoJSON(r *http.Request, keys []string) map[string]any {
	headers := map[string]string{}
	for _, h := range credentialHeaders {
		if v := r.Header.Get(h); v != "" {
			headers[h] = v
		}
	}
	var planted []map[string]string
	for _, k := range keys {
		planted = append(planted, map[string]string{"key": k, "query": "api_key=" + url.QueryEscape(k), "basic": basicOf(k)})
	}
	return map[string]any{"method": r.Method, "url": r.URL.RequestURI(), "headers": headers, "planted": planted, "dump": dumpOf(r, keys)}
}

func basicOf(k string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte("curate:"+k))
}

// dumpOf is the base64 of the request as written, the keys as headers.
func dumpOf(r *http.Request, keys []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", r.Method, r.URL.RequestURI(), r.Host)
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\r\n", k, strings.Join(r.Header[k], ", "))
	}
	for i, k := range keys {
		fmt.Fprintf(&b, "X-Planted-%d: %s\r\n", i, k)
	}
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

// serveEchoError answers with status and a body echoing r: JSON for the
// JSON APIs, whose error shapes it covers ({"error": ...} of S2 and
// OpenAI, {"message": ...} of gateways), text for the others.
func (s *Service) serveEchoError(w http.ResponseWriter, r *http.Request, e Echo) int {
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	switch s.name {
	case S2, LLM, Anthropic:
		text := echoText(r, e.Keys)
		b, _ := json.Marshal(map[string]any{"type": "error", "error": text, "message": text, "echo": echoJSON(r, e.Keys)})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(b)
	default:
		http.Error(w, echoText(r, e.Keys), status)
	}
	return status
}

// serveEchoed runs the handler and writes its answer with the echo put
// into it (see Echo.Answers).
func (s *Service) serveEchoed(w http.ResponseWriter, r *http.Request, body []byte, invalid bool, e Echo) {
	rec := httptest.NewRecorder()
	s.handler(rec, r, body, invalid)
	out := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		out = plantEcho(rec.Header().Get("Content-Type"), r, out, e.Keys)
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Header().Set("X-Echo", strings.Join(echoValues(r, e.Keys), ", "))
	w.WriteHeader(rec.Code)
	w.Write(out)
}

// plantEcho puts the echo of r into an answer of content type ctype,
// where a reader of that format keeps it as data.
func plantEcho(ctype string, r *http.Request, body []byte, keys []string) []byte {
	mt, _, _ := mime.ParseMediaType(ctype)
	text := echoText(r, keys)
	switch {
	case mt == "text/html":
		if i := bytes.Index(body, []byte("</p>")); i >= 0 {
			return splice(body, i, " <span>"+htmlEscape(text)+"</span>")
		}
	case mt == "application/json":
		j, _ := json.Marshal(echoJSON(r, keys))
		t := bytes.TrimLeft(body, " \t\r\n")
		off := len(body) - len(t)
		switch {
		case bytes.HasPrefix(t, []byte("{}")):
			return splice(body, off+1, `"echo":`+string(j))
		case bytes.HasPrefix(t, []byte("{")):
			return splice(body, off+1, `"echo":`+string(j)+",")
		case bytes.HasPrefix(t, []byte("[{")):
			return splice(body, off+2, `"echo":`+string(j)+",")
		}
	case strings.HasSuffix(mt, "xml"):
		// An XML comment may not hold "--".
		c := "<!-- " + strings.ReplaceAll(text, "--", "- -") + " -->"
		if i := bytes.Index(body, []byte("?>")); i >= 0 {
			return splice(body, i+2, "\n"+c)
		}
		return append([]byte(c+"\n"), body...)
	case mt == "text/plain" && r.URL.Path == "/robots.txt":
		return append(append(bytes.Clone(body), "\n# "...), text+"\n"...)
	case mt == "application/pdf":
		return append(append(bytes.Clone(body), "\n%"...), text+"\n"...)
	}
	return body
}

func splice(b []byte, at int, s string) []byte {
	out := make([]byte, 0, len(b)+len(s))
	out = append(out, b[:at]...)
	out = append(out, s...)
	return append(out, b[at:]...)
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
