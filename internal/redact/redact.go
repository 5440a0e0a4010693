// Package redact removes credentials from text that came back from a
// remote service, or that names a request: an endpoint or a proxy that
// echoes the request in an error body (its headers, its URL, a dump of
// it) hands back the API keys curate sent, and that body ends up in
// errors, the ledger, the logs and the store unless it is cleaned where
// it is read.
//
// A Redactor knows every secret of a run (the API keys of Semantic
// Scholar and the LLM providers, the credentials of a proxy) and finds
// each in the forms an echo writes it in: as is, JSON-escaped,
// URL-encoded (upper- or lower-case hex, once or twice), HTML-escaped,
// and inside any
// base64 text (a dumped request, the Basic credentials of a proxy) at
// each of the three alignments base64 can put it in. Every match becomes
// Mask.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strings"
)

// Mask is what a secret is replaced with.
const Mask = "REDACTED"

// MinLen is the shortest secret a Redactor looks for: a shorter value
// would garble unrelated text, and is no real credential.
const MinLen = 6

// minCore is the shortest run of base64 a secret is looked for as: below
// 12 characters (9 bytes of the secret) a match could be chance.
const minCore = 12

// Redactor replaces secrets in text. The zero value and nil redact
// nothing. It is immutable and safe for concurrent use.
//
// It looks for every form of every secret in one pass over the text: a
// bitmap of the forms' first bytes, hashed, rules out almost every
// position at the cost of a load and a test, and only the positions it
// lets through are compared with the forms. Response bodies of tens of
// megabytes all go through it.
type Redactor struct {
	forms []form           // longest first
	seen  []uint64         // bit h set: some form's first prefixLen bytes hash to h
	cands map[uint16][]int // hash of the first bytes -> forms, longest first
}

// prefixLen is how many leading bytes of a form the bitmap hashes; every
// form is at least MinLen long.
const prefixLen = 4

func prefixHash(b []byte) uint16 {
	return uint16((binary.LittleEndian.Uint32(b) * 2654435761) >> 16)
}

// form is one way a secret is written.
type form struct {
	text []byte
	// b64 marks a secret's run in base64: the characters around it also
	// carry bits of the secret (and of what surrounds it), so the whole
	// base64 run that holds it is masked.
	b64 bool
}

// New returns a Redactor of the secrets: each value as is (see
// Credentials for header values and URLs). Values shorter than MinLen are
// ignored.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		plain, b64 := forms(s)
		for i, f := range append(plain, b64...) {
			if len(f) >= MinLen && !seen[f] {
				seen[f] = true
				r.forms = append(r.forms, form{text: []byte(f), b64: i >= len(plain)})
			}
		}
	}
	// Longest first: at a position where several forms start (the JSON
	// escape of a key with a quote, and its start) the longest goes.
	slices.SortStableFunc(r.forms, func(a, b form) int { return len(b.text) - len(a.text) })
	if len(r.forms) > 0 {
		r.seen = make([]uint64, 1<<16/64)
		r.cands = map[uint16][]int{}
		for i, f := range r.forms {
			h := prefixHash(f.text)
			r.seen[h/64] |= 1 << (h % 64)
			r.cands[h] = append(r.cands[h], i)
		}
	}
	return r
}

// Empty reports whether r has no secret to look for.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// forms returns the ways s may be written by an echo: as text, and as
// runs of base64.
func forms(s string) (plain, b64 []string) {
	out := []string{s}
	// JSON: Go's encoder (which escapes <, > and &), one that does not,
	// and those that also escape the slash.
	if b, err := json.Marshal(s); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		b := bytes.TrimSpace(buf.Bytes())
		out = append(out, string(b[1:len(b)-1]))
	}
	for _, f := range out[1:] {
		out = append(out, strings.ReplaceAll(f, "/", `\/`))
	}
	// HTML and XML text and attributes.
	out = append(out, html.EscapeString(s), xmlEscaper.Replace(s))
	// URL encodings, with either case of hex, and encoded twice (a URL
	// carried in a query).
	for _, f := range []string{url.QueryEscape(s), url.PathEscape(s), url.QueryEscape(url.QueryEscape(s))} {
		out = append(out, f, lowerHex(f))
	}
	// Base64 of any text holding s: whatever precedes it, one of the
	// three alignments encodes the rest of s on its own.
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for shift := range 3 {
			sub := s[min(shift, len(s)):]
			sub = sub[:len(sub)/3*3]
			if core := enc.EncodeToString([]byte(sub)); len(core) >= minCore {
				b64 = append(b64, core)
			}
		}
	}
	return out, b64
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// lowerHex writes the %XX escapes of s in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = toLower(b[i+1]), toLower(b[i+2])
		}
	}
	return string(b)
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Bytes returns b with every secret replaced by Mask: b itself when it
// holds none (the common case costs a scan, no copy).
func (r *Redactor) Bytes(b []byte) []byte {
	if r.Empty() {
		return b
	}
	var out []byte
	done := 0 // b[:done] is in out
	for i := 0; i+prefixLen <= len(b); i++ {
		h := prefixHash(b[i : i+prefixLen])
		if r.seen[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, fi := range r.cands[h] {
			f := r.forms[fi]
			if !bytes.HasPrefix(b[i:], f.text) {
				continue
			}
			start, end := i, i+len(f.text)
			if f.b64 {
				for start > done && isBase64(b[start-1]) {
					start--
				}
				for end < len(b) && (isBase64(b[end]) || b[end] == '=') {
					end++
				}
			}
			out = append(append(out, b[done:start]...), Mask...)
			done, i = end, end-1
			break
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r.Empty() || len(s) < MinLen {
		return s
	}
	b := []byte(s)
	if out := r.Bytes(b); &out[0] != &b[0] || len(out) != len(b) {
		return string(out)
	}
	return s
}

// isBase64 reports whether c is of the standard or URL base64 alphabet.
func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// Error returns err with its text redacted: err itself when the text
// holds no secret, else an error whose message is redacted and which
// unwraps to err, so errors.Is and errors.As still see the chain.
func (r *Redactor) Error(err error) error {
	if err == nil || r.Empty() {
		return err
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redacted{err: err, msg: red}
	}
	return err
}

type redacted struct {
	err error
	msg string
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// Credentials returns the secrets in a credential header's value
// (Authorization, Proxy-Authorization, x-api-key, ...): the value, the
// token after an auth scheme ("Bearer sk-…"), and for Basic credentials
// the decoded "user:password" and the password.
func Credentials(value string) []string {
	out := []string{value}
	scheme, token, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok {
		return out
	}
	token = strings.TrimSpace(token)
	out = append(out, token)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(token); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}

// UserInfo returns the secrets of a URL's user info (a proxy's
// http://user:password@host): the password, "user:password" and its
// base64, as a Basic Proxy-Authorization header carries it. None when the
// URL has no password.
func UserInfo(u *url.URL) []string {
	if u == nil || u.User == nil {
		return nil
	}
	pass, ok := u.User.Password()
	if !ok || pass == "" {
		return nil
	}
	pair := u.User.Username() + ":" + pass
	return []string{pass, pair, base64.StdEncoding.EncodeToString([]byte(pair))}
}
