package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Limits are what a Service enforces and how fast it answers.
type Limits struct {
	// Rate is the requests per second the service accepts (a token
	// bucket); a request over it gets 429. 0 means no limit.
	Rate float64
	// Burst is the bucket's size (default 2: a request that arrives a
	// little early, as network jitter makes them, still passes, while a
	// client at twice the rate is refused from its third request on).
	Burst int
	// RetryAfter, when positive, is sent as Retry-After (in whole seconds,
	// rounded up) with every 429.
	RetryAfter time.Duration
	// MaxInFlight caps the requests handled at once; one more gets 429.
	// 0 means no cap.
	MaxInFlight int
	// Latency delays every real answer (not the faults): the service's
	// time to think. Jitter adds a uniform extra in [0, Jitter).
	Latency, Jitter time.Duration
	// BatchDuration is how long a batch of the LLM services stays in
	// progress at least, from its creation (it also takes a few polls):
	// the provider's hours, shortened.
	BatchDuration time.Duration
}

// Faults are the misbehaviours a Service injects. Decisions are drawn
// from the seed, the request's identity and how often that identity was
// asked before, so a run that sends the same requests meets the same
// faults whatever their order.
type Faults struct {
	// P5xx is the probability of a 500, 502 or 503 instead of the answer.
	P5xx float64
	// PReset is the probability that the connection is reset without an
	// answer.
	PReset float64
	// Burst429Every and Burst429Len inject bursts of throttling: of every
	// Burst429Every requests the service receives, the last Burst429Len
	// get 429 (with Limits.RetryAfter, if set).
	Burst429Every, Burst429Len int
	// PInvalid is the probability that the LLM answers with something
	// unusable: prose, JSON that breaks the schema, or JSON that breaks
	// the stage's rules. Other services ignore it. It applies to batch
	// lines too.
	PInvalid float64
	// PObey is the probability that the LLM obeys an instruction planted
	// in a paper to mark every reference a source: its classify answer,
	// drawn per task, then makes every reference a source with one label
	// and one rationale (the llm service's chat completions).
	PObey float64
	// POverloaded is the probability of Anthropic's 529 overloaded_error
	// (the anthropic service only).
	POverloaded float64
	// PRefusal is the probability, drawn per task, that the LLM refuses to
	// answer (Anthropic's stop_reason refusal, OpenAI's message refusal).
	PRefusal float64
	// Batch faults, drawn per batch or per line of a batch (the llm and
	// anthropic services): a batch that fails validation (OpenAI) or
	// expires before all its lines are done, a line that ends in an error
	// or expires.
	PBatchFailed, PBatchExpired, PLineErrored, PLineExpired float64
}

// Outcomes of a request, in Call.Outcome.
const (
	OutcomeOK        = "ok"        // the service's real answer (whatever its status)
	OutcomeInvalid   = "invalid"   // an unusable LLM answer, injected
	OutcomeThrottled = "throttled" // 429 (OAI-PMH: 503): over Rate or MaxInFlight
	OutcomeBurst     = "burst429"  // 429: an injected burst
	Outcome5xx       = "5xx"       // an injected server error
	OutcomeReset     = "reset"     // an injected connection reset
	OutcomeAborted   = "aborted"   // the client went away before the answer
	OutcomeScripted  = "scripted"  // a fault scripted for the path (see Service.Script)
	OutcomeEcho      = "echo"      // an error echoing the request (see Echo)
	// OutcomeOverloaded is Anthropic's 529, injected.
	OutcomeOverloaded = "overloaded"
)

const statusOverloaded = 529

// Call is one request a Service received.
type Call struct {
	Seq int // order of arrival at the service, from 0
	// Key identifies the request: method and path with its query (a
	// digest of the body for POSTs). For the LLM it is a digest of the
	// model and all messages.
	Key string
	// Task is the unit of work the request belongs to: the Key, except
	// for the LLM, where a follow-up after an invalid answer is the same
	// task as the first request.
	Task string
	// Note says what an LLM call is for: "classify: TITLE", "gold: TITLE"
	// or "source: TITLE" (empty for other services).
	Note       string
	Start, End time.Time
	Outcome    string
	Status     int

	Method string
	Path   string // decoded, e.g. "/graph/v1/paper/ARXIV:2401.00001/references"
	// RawQuery is the query string as sent (see Query).
	RawQuery  string
	UserAgent string
	// Keyed reports whether the request carried an x-api-key header.
	Keyed bool
	// IDs are the paper ids of a Semantic Scholar batch request, in order.
	IDs []string
}

// Query returns the call's query parameters.
func (c Call) Query() url.Values {
	q, _ := url.ParseQuery(c.RawQuery)
	return q
}

// Stats counts a Service's requests by outcome.
type Stats struct {
	Requests    int `json:"requests"`
	OK          int `json:"ok"`
	Invalid     int `json:"invalid"`
	Throttled   int `json:"throttled"`
	Burst429    int `json:"burst429"`
	Errors5xx   int `json:"errors_5xx"`
	Resets      int `json:"resets"`
	Aborted     int `json:"aborted"`
	Scripted    int `json:"scripted,omitempty"`
	Echoed      int `json:"echoed,omitempty"` // errors echoing the request (see Echo)
	MaxInFlight int `json:"max_in_flight"`    // most requests handled at once
}

// Sent429 is the number of 429 answers (of OAI-PMH, its flow control's
// 503s).
func (s Stats) Sent429() int { return s.Throttled + s.Burst429 }

// Faults is the number of faults injected (429 bursts, 5xx, resets,
// invalid answers, scripted faults).
func (s Stats) Faults() int { return s.Burst429 + s.Errors5xx + s.Resets + s.Invalid + s.Scripted }

// A Fault is one misbehaviour scripted for a path (see Service.Script),
// served instead of the answer. The Faults of a Service are drawn at
// random; scripted ones come in the order and number a test asks for.
type Fault struct {
	// Status answers with this status and the service's own error body
	// for it (Semantic Scholar's gateway bodies, for instance).
	Status int
	// RetryAfter is sent as Retry-After ("0", "1", an HTTP date); "" sends
	// none, as S2's gateway does.
	RetryAfter string
	// Location is sent with a 3xx Status.
	Location string
	// Reset closes the connection without an answer.
	Reset bool
	// Truncate sends the real answer's status and headers, Content-Length
	// included, then half its body, and closes the connection.
	Truncate bool
}

// Scripted faults, as the services and their gateways answer them.
var (
	TooManyRequests = Fault{Status: http.StatusTooManyRequests}
	Unavailable     = Fault{Status: http.StatusServiceUnavailable}
	GatewayTimeout  = Fault{Status: http.StatusGatewayTimeout}
	InternalError   = Fault{Status: http.StatusInternalServerError}
	NotFound        = Fault{Status: http.StatusNotFound}
	ResetConnection = Fault{Reset: true}
	TruncatedBody   = Fault{Truncate: true}
)

// WithRetryAfter returns f sending Retry-After: v.
func (f Fault) WithRetryAfter(v string) Fault {
	f.RetryAfter = v
	return f
}

// RedirectTo is a 302 to loc, a host no client is configured for, say.
func RedirectTo(loc string) Fault { return Fault{Status: http.StatusFound, Location: loc} }

// Forever, as the count of Script, repeats a fault on every request.
const Forever = -1

type scriptStep struct {
	fault Fault
	left  int // Forever or > 0
}

// handlerFunc answers a request the Service let through; body is the
// request body, read in full; invalid asks the LLM for an unusable answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request, body []byte, invalid bool)

// Service is one simulated service: a handler behind rate limits, latency,
// fault injection and counters. Its methods are safe for concurrent use.
type Service struct {
	name     string
	seed     uint64
	handler  handlerFunc
	identify func(r *http.Request, body []byte) (key, task, note string)
	// fault writes the service's own answer for an error status.
	fault func(w http.ResponseWriter, status int)
	// throttled is the status of an answer over the limits: 429, or the
	// 503 of OAI-PMH's flow control.
	throttled int
	// batches reports the batch API's counts (the LLMs); dropResults
	// forgets the results of ended batches.
	batches     func() BatchStats
	dropResults func()

	mu       sync.Mutex
	limits   Limits
	faults   Faults
	tokens   float64
	last     time.Time
	inFlight int
	seen     map[string]int // key -> requests so far
	calls    []Call
	stats    Stats
	script   map[string][]scriptStep // path -> faults to come
	// intercept may answer a request in the handler's place.
	intercept func(w http.ResponseWriter, r *http.Request, c Call) bool
	echo      Echo // see SetEcho
}

func newService(name string, seed uint64, h handlerFunc) *Service {
	s := &Service{name: name, seed: seed, handler: h, seen: map[string]int{}, script: map[string][]scriptStep{}, fault: plainFault,
		throttled: http.StatusTooManyRequests}
	switch name {
	case S2:
		s.fault = s2Fault
	case OAIPMH:
		// OAI-PMH's flow control is a 503 with Retry-After (the
		// protocol's harvester guidelines, section 5), as arXiv's
		// repository answers a harvester too fast for it.
		s.throttled = http.StatusServiceUnavailable
	}
	s.identify = func(r *http.Request, body []byte) (string, string, string) {
		k := r.Method + " " + r.URL.RequestURI()
		if len(body) > 0 {
			sum := sha256.Sum256(body)
			k += " body " + hex.EncodeToString(sum[:8])
		}
		return k, k, ""
	}
	plain := s.identify
	switch name {
	case LLM:
		s.identify = func(r *http.Request, body []byte) (string, string, string) {
			if r.URL.Path != "/v1/chat/completions" {
				return plain(r, body)
			}
			return llmIdentity(body)
		}
	case Anthropic:
		s.identify = func(r *http.Request, body []byte) (string, string, string) {
			if r.URL.Path != "/v1/messages" {
				return plain(r, body)
			}
			return anthropicIdentity(body)
		}
	}
	return s
}

// faultsNow returns the faults in force.
func (s *Service) faultsNow() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Name returns the service's name.
func (s *Service) Name() string { return s.name }

// SetLimits replaces the service's limits; the token bucket starts full.
func (s *Service) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.Burst <= 0 {
		l.Burst = 2
	}
	s.limits = l
	s.tokens, s.last = float64(l.Burst), time.Time{}
}

// Limits returns the service's limits.
func (s *Service) Limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// SetFaults replaces the faults the service injects (Faults{} stops them).
func (s *Service) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Calls returns the requests received so far, in order of arrival.
func (s *Service) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsTo returns the requests received for path (decoded, without the
// query), in order of arrival.
func (s *Service) CallsTo(path string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// Script makes the next n requests to path (decoded, without the query)
// answer with f instead of the real answer; n = Forever repeats it until
// Unscript. Scripts of one path queue up in the order given.
func (s *Service) Script(path string, f Fault, n int) {
	if n == 0 {
		return
	}
	if n < 0 {
		n = Forever
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[path] = append(s.script[path], scriptStep{fault: f, left: n})
}

// Unscript drops the faults still scripted for path.
func (s *Service) Unscript(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.script, path)
}

// nextScripted returns the fault scripted next for path, if any.
func (s *Service) nextScripted(path string) (Fault, bool) {
	q := s.script[path]
	if len(q) == 0 {
		return Fault{}, false
	}
	f := q[0].fault
	if q[0].left != Forever {
		q[0].left--
		if q[0].left == 0 {
			q = q[1:]
		}
		if len(q) == 0 {
			delete(s.script, path)
		} else {
			s.script[path] = q
		}
	}
	return f, true
}

// Reset clears the counters, the call log and the per-identity history
// that fault decisions draw on; scripted faults stay.
func (s *Service) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.stats, s.seen = nil, Stats{}, map[string]int{}
}

// draw returns a number in [0, 1) fixed by the seed, the service, the
// request's identity, its occurrence and what is drawn.
func (s *Service) draw(key string, n int, what string) float64 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s\x00%d\x00%s", s.seed, s.name, key, n, what)))
	return float64(binary.LittleEndian.Uint64(sum[:])>>11) / (1 << 53)
}

// admit decides a request's fate before its answer: the outcome if it is
// refused or faulted ("" to answer), and whether an LLM answer is to be
// invalid.
func (s *Service) admit(c Call) (seq int, outcome string, invalid bool, l Limits, sf Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l = s.limits
	key := c.Key
	n := s.seen[key]
	s.seen[key]++
	seq = len(s.calls)
	c.Seq = seq
	s.calls = append(s.calls, c)
	s.stats.Requests++

	if f, ok := s.nextScripted(c.Path); ok {
		return seq, OutcomeScripted, false, l, f
	}
	now := c.Start

	if l.MaxInFlight > 0 && s.inFlight >= l.MaxInFlight {
		return seq, OutcomeThrottled, false, l, sf
	}
	if l.Rate > 0 {
		if !s.last.IsZero() {
			s.tokens = math.Min(float64(l.Burst), s.tokens+now.Sub(s.last).Seconds()*l.Rate)
		}
		s.last = now
		if s.tokens < 1 {
			return seq, OutcomeThrottled, false, l, sf
		}
		s.tokens--
	}
	f := s.faults
	switch {
	case f.Burst429Every > 0 && seq%f.Burst429Every >= f.Burst429Every-f.Burst429Len:
		return seq, OutcomeBurst, false, l, sf
	case f.PReset > 0 && s.draw(key, n, "reset") < f.PReset:
		return seq, OutcomeReset, false, l, sf
	case f.P5xx > 0 && s.draw(key, n, "5xx") < f.P5xx:
		return seq, Outcome5xx, false, l, sf
	case f.POverloaded > 0 && s.name == Anthropic && s.draw(key, n, "529") < f.POverloaded:
		return seq, OutcomeOverloaded, false, l, sf
	}
	s.inFlight++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.inFlight)
	invalid = (s.name == LLM || s.name == Anthropic) && f.PInvalid > 0 && s.draw(key, n, "invalid") < f.PInvalid
	return seq, "", invalid, l, sf
}

// finish records the end of call seq; inFlight says it was admitted (and
// counted in flight).
func (s *Service) finish(seq int, outcome string, status int, inFlight bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inFlight {
		s.inFlight--
	}
	c := &s.calls[seq]
	c.End, c.Outcome, c.Status = time.Now(), outcome, status
	switch outcome {
	case OutcomeOK:
		s.stats.OK++
	case OutcomeInvalid:
		s.stats.Invalid++
	case OutcomeThrottled:
		s.stats.Throttled++
	case OutcomeBurst:
		s.stats.Burst429++
	case Outcome5xx, OutcomeOverloaded:
		s.stats.Errors5xx++
	case OutcomeReset:
		s.stats.Resets++
	case OutcomeAborted:
		s.stats.Aborted++
	case OutcomeScripted:
		s.stats.Scripted++
	case OutcomeEcho:
		s.stats.Echoed++
	}
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	key, task, note := s.identify(r, body)
	c := Call{
		Key: key, Task: task, Note: note, Start: time.Now(),
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, UserAgent: r.UserAgent(),
		Keyed: r.Header.Get("x-api-key") != "",
	}
	if s.name == S2 && r.Method == http.MethodPost && r.URL.Path == S2BatchPath {
		c.IDs, _ = s2BatchIDs(body)
	}
	seq, outcome, invalid, l, sf := s.admit(c)
	switch outcome {
	case OutcomeScripted:
		s.finish(seq, outcome, s.serveScripted(w, r, body, sf), false)
		return
	case OutcomeThrottled, OutcomeBurst:
		if l.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(l.RetryAfter.Seconds()))))
		}
		s.fault(w, s.throttled)
		s.finish(seq, outcome, s.throttled, false)
		return
	case Outcome5xx:
		status := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[seq%3]
		s.fault(w, status)
		s.finish(seq, outcome, status, false)
		return
	case OutcomeOverloaded:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusOverloaded)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		s.finish(seq, outcome, statusOverloaded, false)
		return
	case OutcomeReset:
		s.finish(seq, outcome, 0, false)
		reset(w)
		return
	}
	if d := l.Latency + jitter(l.Jitter, s.draw(key, seq, "jitter")); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.finish(seq, OutcomeAborted, 0, true)
			return
		}
	}
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	outcome = OutcomeOK
	if invalid {
		outcome = OutcomeInvalid
	}
	// The slot is released before the answer goes out, so a client that
	// sends its next request the moment it reads this answer finds it free.
	dw := &deferredWriter{rec: rec, before: func() { s.finish(seq, outcome, rec.status, true) }}
	s.mu.Lock()
	ic, call, echo := s.intercept, s.calls[seq], s.echo
	s.mu.Unlock()
	switch {
	case ic != nil && ic(dw, r, call):
	case s.echoed(echo, key):
		outcome = OutcomeEcho
		s.serveEchoError(dw, r, echo)
	case echo.Answers:
		s.serveEchoed(dw, r, body, invalid, echo)
	default:
		s.handler(dw, r, body, invalid)
	}
	dw.once.Do(dw.before) // a handler that wrote nothing
}

// Intercept makes f see every request the service lets through, before
// its answer: f may answer it itself and return true, as a test does to
// serve a misbehaviour no Fault describes (a malformed body, an empty
// page, a shifted result list). The call is logged and counted as any
// other. nil removes f.
func (s *Service) Intercept(f func(w http.ResponseWriter, r *http.Request, c Call) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = f
}

// serveScripted answers with a scripted fault and returns the status sent
// (0 for none).
func (s *Service) serveScripted(w http.ResponseWriter, r *http.Request, body []byte, f Fault) int {
	switch {
	case f.Reset:
		reset(w)
		return 0
	case f.Truncate:
		rec := httptest.NewRecorder()
		s.handler(rec, r, body, false)
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, buf, err := hj.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		defer conn.Close()
		full := rec.Body.Bytes()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
		rec.Header().Set("Content-Length", strconv.Itoa(len(full)))
		rec.Header().Write(buf)
		buf.WriteString("\r\n")
		buf.Write(full[:len(full)/2])
		buf.Flush()
		return rec.Code
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Location != "" {
		w.Header().Set("Location", f.Location)
	}
	s.fault(w, f.Status)
	return f.Status
}

// plainFault is the error answer of a service without its own: the status
// text, or for 429 a short JSON message.
func plainFault(w http.ResponseWriter, status int) {
	msg := http.StatusText(status)
	if status == http.StatusTooManyRequests {
		msg = `{"message": "Too Many Requests"}`
	}
	http.Error(w, msg, status)
}

func jitter(j time.Duration, u float64) time.Duration {
	if j <= 0 {
		return 0
	}
	return time.Duration(u * float64(j))
}

// reset closes the connection without an answer, with SO_LINGER 0 so the
// client sees a reset rather than a clean close.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

// deferredWriter runs before once, just before the first byte of the
// answer (its header) is written.
type deferredWriter struct {
	rec    *statusWriter
	before func()
	once   sync.Once
}

func (d *deferredWriter) Header() http.Header { return d.rec.Header() }

func (d *deferredWriter) WriteHeader(status int) {
	d.rec.status = status
	d.once.Do(d.before)
	d.rec.wrote = true
	d.rec.ResponseWriter.WriteHeader(status)
}

func (d *deferredWriter) Write(b []byte) (int, error) {
	if !d.rec.wrote {
		d.WriteHeader(http.StatusOK)
	}
	return d.rec.ResponseWriter.Write(b)
}

// Repeats returns the tasks of calls that were already done before: a call
// in calls whose Task had an OutcomeOK answer in done (or earlier in calls
// itself). It is how tests find completed work asked for again.
func Repeats(done, calls []Call) []Call {
	ok := map[string]bool{}
	for _, c := range done {
		if c.Outcome == OutcomeOK {
			ok[c.Task] = true
		}
	}
	var out []Call
	for _, c := range calls {
		if ok[c.Task] {
			out = append(out, c)
		}
		if c.Outcome == OutcomeOK {
			ok[c.Task] = true
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
