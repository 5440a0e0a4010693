package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GROBID's REST paths, as the service mounts them under /api.
const (
	GrobidIsAlivePath  = "/api/isalive"
	GrobidVersionPath  = "/api/version"
	GrobidFulltextPath = "/api/processFulltextDocument"
)

// ErrGrobidNoContent, returned by a GrobidConfig.Convert, makes the fake
// answer 204: "Process was completed, but no content could be extracted
// and structured".
var ErrGrobidNoContent = errors.New("no content could be extracted")

// GrobidConfig describes a simulated GROBID service. Zero fields take the
// defaults of GROBID's own grobid.yaml.
type GrobidConfig struct {
	// Version is what /api/version reports and the TEI header would say
	// (default "0.8.1"). From 0.8.2 on, /api/version answers JSON
	// {"version", "revision"}; before, the bare version as text.
	Version string
	// Concurrency is the size of the engine pool (grobid.yaml
	// "concurrency", default 10): how many documents are converted at
	// once.
	Concurrency int
	// PoolMaxWait is how long a request waits for a free engine before
	// the service answers 503 with an empty body (grobid.yaml
	// "poolMaxWait", default 1s).
	PoolMaxWait time.Duration
	// Latency is the time one conversion takes.
	Latency time.Duration
	// Convert, when set, converts the PDFs nobody registered with Add:
	// TEI, ErrGrobidNoContent (204) or another error (500 with its text).
	Convert func(pdf []byte) ([]byte, error)
	// MaxInput caps the bytes of a request the fake reads (default 64 MiB).
	MaxInput int64
}

// GrobidCall is one request the fake received.
type GrobidCall struct {
	Method string
	Path   string
	Status int
	// Form holds the form fields of a processFulltextDocument request
	// other than input, as sent ("1", "0", "true").
	Form map[string][]string
	// Input is the input part as received: its file name, content type and
	// the SHA-256 of its bytes ("" when there was none).
	InputName, InputType, InputSHA256 string
	InputBytes                        int
}

// Grobid is a simulated GROBID service speaking GROBID's REST protocol:
//
//	GET  /api/isalive                  200 text/plain "true"
//	GET  /api/version                  the version (JSON from 0.8.2 on)
//	POST /api/processFulltextDocument  multipart/form-data with the PDF as
//	PUT  /api/processFulltextDocument  "input"; answers as GROBID does:
//	                                   200 application/xml with the TEI,
//	                                   204 without body when nothing could
//	                                   be extracted, 503 with an empty body
//	                                   when no engine frees up within
//	                                   PoolMaxWait, 500 with the exception
//	                                   message when the conversion fails
//	                                   (a body that is no PDF:
//	                                   "[BAD_INPUT_DATA] PDF to XML
//	                                   conversion failed with error code:
//	                                   1"; no input part: empty body), 400
//	                                   for a multipart body that does not
//	                                   parse or a start/end that is no
//	                                   integer, 415 for a body that is not
//	                                   multipart/form-data
//
// It serves the TEI registered for a PDF with Add (recorded TEI files),
// else what GrobidConfig.Convert makes of it. Its methods are safe for
// concurrent use.
type Grobid struct {
	cfg     GrobidConfig
	engines chan struct{}

	mu       sync.Mutex
	docs     map[string]grobidAnswer // by SHA-256 of the PDF
	busy     int                     // next requests to answer 503 at once
	alive    bool
	calls    []GrobidCall
	inFlight int
	maxIn    int
}

type grobidAnswer struct {
	tei    []byte
	status int
	msg    string
}

// NewGrobid returns a simulated GROBID service.
func NewGrobid(cfg GrobidConfig) *Grobid {
	if cfg.Version == "" {
		cfg.Version = "0.8.1"
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.PoolMaxWait <= 0 {
		cfg.PoolMaxWait = time.Second
	}
	if cfg.MaxInput <= 0 {
		cfg.MaxInput = 64 << 20
	}
	return &Grobid{cfg: cfg, engines: make(chan struct{}, cfg.Concurrency), docs: map[string]grobidAnswer{}, alive: true}
}

func pdfKey(pdf []byte) string {
	sum := sha256.Sum256(pdf)
	return hex.EncodeToString(sum[:])
}

// Add registers the TEI GROBID makes of pdf.
func (g *Grobid) Add(pdf, tei []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.docs[pdfKey(pdf)] = grobidAnswer{tei: tei, status: http.StatusOK}
}

// AddNoContent registers pdf as one from which nothing can be extracted
// (204).
func (g *Grobid) AddNoContent(pdf []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.docs[pdfKey(pdf)] = grobidAnswer{status: http.StatusNoContent}
}

// AddFailure registers pdf as one whose conversion fails with msg (500),
// e.g. "[TIMEOUT] Processing timeout".
func (g *Grobid) AddFailure(pdf []byte, msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.docs[pdfKey(pdf)] = grobidAnswer{status: http.StatusInternalServerError, msg: msg}
}

// SetBusy makes the next n conversion requests find every engine taken
// (503), as when other clients share the server.
func (g *Grobid) SetBusy(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy = n
}

// SetAlive sets what /api/isalive answers ("true" or "false", always 200).
func (g *Grobid) SetAlive(alive bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.alive = alive
}

// Calls returns the requests received so far, in order of arrival (a
// request is logged when its answer is decided).
func (g *Grobid) Calls() []GrobidCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GrobidCall(nil), g.calls...)
}

// MaxInFlight returns the most conversions that ran at once.
func (g *Grobid) MaxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxIn
}

// Count returns how many calls had the status (0: all calls).
func (g *Grobid) Count(status int) int {
	n := 0
	for _, c := range g.Calls() {
		if status == 0 || c.Status == status {
			n++
		}
	}
	return n
}

func (g *Grobid) log(c GrobidCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, c)
}

func (g *Grobid) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := GrobidCall{Method: r.Method, Path: r.URL.Path}
	answer := func(status int, ctype string, body []byte) {
		call.Status = status
		g.log(call)
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		if body != nil {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(status)
		w.Write(body)
	}
	switch r.URL.Path {
	case GrobidIsAlivePath:
		if r.Method != http.MethodGet {
			answer(http.StatusMethodNotAllowed, "", nil)
			return
		}
		g.mu.Lock()
		alive := g.alive
		g.mu.Unlock()
		answer(http.StatusOK, "text/plain", []byte(strconv.FormatBool(alive)))
	case GrobidVersionPath:
		if r.Method != http.MethodGet {
			answer(http.StatusMethodNotAllowed, "", nil)
			return
		}
		if versionJSON(g.cfg.Version) {
			body, _ := json.Marshal(map[string]string{"version": g.cfg.Version, "revision": "0000000"})
			answer(http.StatusOK, "application/json", body)
			return
		}
		answer(http.StatusOK, "text/plain", []byte(g.cfg.Version))
	case GrobidFulltextPath:
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			answer(http.StatusMethodNotAllowed, "", nil)
			return
		}
		status, ctype, body := g.fulltext(r, &call)
		answer(status, ctype, body)
	default:
		answer(http.StatusNotFound, "text/plain", []byte("HTTP 404 Not Found"))
	}
}

// grobidFault is GROBID's answer for an error status: 503 with an empty
// body (no engine freed up in time) and 500 without a message (an
// exception whose message is null), as GrobidRestProcessFiles answers
// them; other statuses with Jersey's "HTTP <code> <reason>" text, as the
// fake answers them itself.
func grobidFault(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable || status == http.StatusInternalServerError {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(status)
		return
	}
	body := "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// versionJSON reports whether a GROBID version answers /api/version in
// JSON (0.8.2 and later).
func versionJSON(v string) bool {
	parts := strings.SplitN(strings.SplitN(v, "-", 2)[0], ".", 3)
	n := [3]int{}
	for i := range parts {
		n[i], _ = strconv.Atoi(parts[i])
	}
	return n[0] > 0 || n[1] > 8 || n[1] == 8 && n[2] >= 2
}

// fulltext answers one processFulltextDocument request.
func (g *Grobid) fulltext(r *http.Request, call *GrobidCall) (int, string, []byte) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return http.StatusUnsupportedMediaType, "text/plain", []byte("HTTP 415 Unsupported Media Type")
	}
	if params["boundary"] == "" {
		return http.StatusBadRequest, "text/plain", []byte("HTTP 400 Bad Request")
	}
	mr := multipart.NewReader(io.LimitReader(r.Body, g.cfg.MaxInput), params["boundary"])
	call.Form = map[string][]string{}
	var input []byte
	hasInput := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return http.StatusBadRequest, "text/plain", []byte("HTTP 400 Bad Request")
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return http.StatusBadRequest, "text/plain", []byte("HTTP 400 Bad Request")
		}
		name := part.FormName()
		if name == "input" && !hasInput {
			hasInput, input = true, data
			call.InputName, call.InputType = part.FileName(), part.Header.Get("Content-Type")
			call.InputSHA256, call.InputBytes = pdfKey(data), len(data)
			continue
		}
		call.Form[name] = append(call.Form[name], string(data))
	}
	for _, k := range []string{"start", "end"} {
		if v := call.Form[k]; len(v) > 0 {
			if _, err := strconv.Atoi(v[0]); err != nil {
				return http.StatusBadRequest, "text/plain", []byte("HTTP 400 Bad Request")
			}
		}
	}

	// An engine from the pool, or 503 after PoolMaxWait.
	g.mu.Lock()
	busy := g.busy > 0
	if busy {
		g.busy--
	}
	g.mu.Unlock()
	if busy {
		return http.StatusServiceUnavailable, "", nil
	}
	t := time.NewTimer(g.cfg.PoolMaxWait)
	select {
	case g.engines <- struct{}{}:
		t.Stop()
	case <-t.C:
		return http.StatusServiceUnavailable, "", nil
	case <-r.Context().Done():
		t.Stop()
		return http.StatusServiceUnavailable, "", nil
	}
	defer func() { <-g.engines }()
	g.mu.Lock()
	g.inFlight++
	g.maxIn = max(g.maxIn, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	if g.cfg.Latency > 0 {
		t := time.NewTimer(g.cfg.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}

	if !hasInput {
		// GROBID reads a null input stream: a NullPointerException, whose
		// message is null, answered as 500 without a body.
		return http.StatusInternalServerError, "", nil
	}
	ans := g.convert(input)
	switch ans.status {
	case http.StatusOK:
		return http.StatusOK, "application/xml; charset=UTF-8", ans.tei
	case http.StatusNoContent:
		return http.StatusNoContent, "", nil
	}
	return http.StatusInternalServerError, "text/plain", []byte(ans.msg)
}

// convert decides what GROBID makes of a PDF.
func (g *Grobid) convert(pdf []byte) grobidAnswer {
	if !isPDF(pdf) {
		return grobidAnswer{status: http.StatusInternalServerError, msg: "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1"}
	}
	g.mu.Lock()
	ans, ok := g.docs[pdfKey(pdf)]
	g.mu.Unlock()
	if ok {
		return ans
	}
	if g.cfg.Convert == nil {
		return grobidAnswer{status: http.StatusInternalServerError, msg: "[GENERAL] sim: no TEI recorded for this PDF"}
	}
	tei, err := g.cfg.Convert(pdf)
	switch {
	case errors.Is(err, ErrGrobidNoContent) || err == nil && len(tei) == 0:
		return grobidAnswer{status: http.StatusNoContent}
	case err != nil:
		return grobidAnswer{status: http.StatusInternalServerError, msg: fmt.Sprintf("[GENERAL] %v", err)}
	}
	return grobidAnswer{status: http.StatusOK, tei: tei}
}

// isPDF reports whether data starts like a PDF: "%PDF-" within its first
// 1024 bytes, where readers look for it.
func isPDF(data []byte) bool {
	head := data[:min(len(data), 1024)]
	return strings.Contains(string(head), "%PDF-")
}
