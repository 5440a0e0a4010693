package grobid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/httpx"
	teiparse "github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

var (
	pdfA = []byte("%PDF-1.7\n% paper A\n%%EOF\n")
	pdfB = []byte("%PDF-1.4\n% paper B\n%%EOF\n")
	pdfC = []byte("%PDF-1.5\n% paper C\n%%EOF\n")
)

// recordedTEI returns a real recorded GROBID TEI file, or this package's
// own small one when the shared fixtures are absent.
func recordedTEI(t *testing.T) []byte {
	t.Helper()
	name := filepath.Join("testdata", "small.tei.xml")
	if dir, err := fixtures.Find("grobid-tei"); err == nil {
		if files, _ := filepath.Glob(filepath.Join(dir, "*.tei.xml")); len(files) > 0 {
			name = files[0]
		}
	} else {
		t.Logf("%v: serving testdata/small.tei.xml", err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type testEnv struct {
	g      *sim.Grobid
	srv    *httptest.Server
	svc    *httpx.Service
	client *Client
	waits  []time.Duration // busy waits the client slept
}

// newEnv starts a simulated GROBID and a Client for it with fast retries
// and a recorded, instant sleep.
func newEnv(t *testing.T, gc sim.GrobidConfig, capacity, retryMax int, opts Options) *testEnv {
	t.Helper()
	e := &testEnv{g: sim.NewGrobid(gc)}
	e.srv = httptest.NewServer(e.g)
	t.Cleanup(e.srv.Close)
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("test", ""),
		RetryMax:     retryMax,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 5 * time.Millisecond,
		Logger:       slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, ServiceConfig(e.srv.URL, capacity, 0))
	if err != nil {
		t.Fatal(err)
	}
	if e.svc, err = hc.Service(ServiceName); err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	if e.client, err = New(e.svc, opts); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	e.client.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		e.waits = append(e.waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return e
}

func TestAliveAndVersion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sim.GrobidConfig{Version: "0.8.0"}, 0, 2, Options{})
	if err := e.client.Alive(ctx); err != nil {
		t.Errorf("Alive: %v", err)
	}
	if v, err := e.client.Version(ctx); err != nil || v != "0.8.0" {
		t.Errorf("Version = %q, %v; want the text answer 0.8.0", v, err)
	}
	e.g.SetAlive(false)
	if err := e.client.Alive(ctx); !errors.Is(err, ErrNotAlive) {
		t.Errorf("Alive on false = %v, want ErrNotAlive", err)
	}

	e2 := newEnv(t, sim.GrobidConfig{Version: "0.8.2"}, 0, 2, Options{})
	if v, err := e2.client.Version(ctx); err != nil || v != "0.8.2" {
		t.Errorf("Version = %q, %v; want the JSON answer's 0.8.2", v, err)
	}

	// A base URL that is no GROBID service (a web site), and one where
	// nothing listens.
	other := httptest.NewServer(sim.NewPDFSite())
	defer other.Close()
	for _, base := range []string{other.URL, "http://127.0.0.1:1"} {
		hc, err := httpx.New(httpx.Config{UserAgent: "test", RetryMax: -1}, ServiceConfig(base, 1, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := hc.Service(ServiceName)
		c, _ := New(svc, Options{})
		err = c.Alive(ctx)
		if err == nil || !strings.Contains(err.Error(), "isalive") {
			t.Errorf("Alive at %s = %v, want an error naming isalive", base, err)
		}
		if base == other.URL && !errors.Is(err, ErrNotAlive) {
			t.Errorf("Alive at a 404 = %v, want ErrNotAlive", err)
		}
	}
}

func TestProcessFulltext(t *testing.T) {
	tei := recordedTEI(t)
	e := newEnv(t, sim.GrobidConfig{}, 0, 2, Options{ConsolidateHeader: 1, ConsolidateCitations: 2, IncludeRawCitations: true, SegmentSentences: true})
	e.g.Add(pdfA, tei)
	got, err := e.client.ProcessFulltext(context.Background(), "https://aclanthology.org/P19-1285.pdf", pdfA)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tei) {
		t.Errorf("TEI of %d bytes, want the recorded %d bytes as they are", len(got), len(tei))
	}
	doc, err := teiparse.Parse(got, teiparse.Options{URL: "https://aclanthology.org/P19-1285.pdf"})
	if err != nil || doc.ServedBy != record.ServedByGrobid || doc.ConverterVersion == "" || doc.Title == nil {
		t.Errorf("the TEI does not parse into a GROBID Document: %v", err)
	}
	calls := e.g.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d requests, want 1", len(calls))
	}
	c := calls[0]
	want := map[string][]string{"consolidateHeader": {"1"}, "consolidateCitations": {"2"}, "includeRawCitations": {"1"}, "segmentSentences": {"1"}}
	if fmt.Sprint(c.Form) != fmt.Sprint(want) || c.Method != http.MethodPost || c.InputName != "P19-1285.pdf" || c.InputType != "application/pdf" || c.InputBytes != len(pdfA) {
		t.Errorf("request as GROBID saw it: %+v", c)
	}
}

func TestProcessFulltextAnswers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sim.GrobidConfig{}, 0, 3, Options{})
	e.g.AddNoContent(pdfB)
	e.g.AddFailure(pdfC, "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1")

	if _, err := e.client.ProcessFulltext(ctx, "b", pdfB); !errors.Is(err, ErrNoContent) {
		t.Errorf("204: %v, want ErrNoContent", err)
	}
	_, err := e.client.ProcessFulltext(ctx, "c", pdfC)
	var ge *Error
	if !errors.Is(err, ErrConversion) || !errors.As(err, &ge) || !strings.Contains(ge.Message, "BAD_INPUT_DATA") {
		t.Errorf("500: %v, want ErrConversion with GROBID's message", err)
	}
	if n := e.g.Count(http.StatusInternalServerError); n != 1 {
		t.Errorf("the failed conversion was sent %d times, want once (500 is final)", n)
	}
}

func TestBusy(t *testing.T) {
	ctx := context.Background()
	tei := recordedTEI(t)

	// Two 503s: the service's own retries (3) get through.
	e := newEnv(t, sim.GrobidConfig{}, 0, 3, Options{})
	e.g.Add(pdfA, tei)
	e.g.SetBusy(2)
	if _, err := e.client.ProcessFulltext(ctx, "a", pdfA); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	if n, busy := e.g.Count(0), e.g.Count(http.StatusServiceUnavailable); n != 3 || busy != 2 || len(e.waits) != 0 {
		t.Errorf("%d requests (%d busy), %d client waits; want 3, 2 and none", n, busy, len(e.waits))
	}

	// Busy through the service's retries: the client waits, doubling,
	// and asks again.
	e = newEnv(t, sim.GrobidConfig{}, 0, 1, Options{BusyRetries: 2, BusyWait: 10 * time.Second})
	e.g.Add(pdfA, tei)
	e.g.SetBusy(4) // two calls of two attempts each
	if _, err := e.client.ProcessFulltext(ctx, "a", pdfA); err != nil {
		t.Fatalf("after four 503s: %v", err)
	}
	if len(e.waits) != 2 || e.waits[0] < 10*time.Second || e.waits[0] > 12500*time.Millisecond ||
		e.waits[1] < 20*time.Second || e.waits[1] > 25*time.Second {
		t.Errorf("busy waits %v, want about 10s then 20s (jitter up to a quarter)", e.waits)
	}

	// Busy for good: ErrBusy after the retries.
	e.g.SetBusy(100)
	e.waits = nil
	_, err := e.client.ProcessFulltext(ctx, "a", pdfA)
	var se *httpx.StatusError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable {
		t.Errorf("always busy: %v, want ErrBusy wrapping the 503", err)
	}
	if len(e.waits) != 2 {
		t.Errorf("%d busy waits, want 2", len(e.waits))
	}

	// A cancelled context ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	e.g.SetBusy(100)
	if _, err := e.client.ProcessFulltext(cctx, "a", pdfA); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestCapacity sends more documents at once than the server has engines:
// the client's cap keeps them in the pool, so none is refused as busy.
func TestCapacity(t *testing.T) {
	tei := recordedTEI(t)
	e := newEnv(t, sim.GrobidConfig{
		Concurrency: 2,
		PoolMaxWait: time.Millisecond, // any request over the pool is refused at once
		Convert: func([]byte) ([]byte, error) {
			time.Sleep(5 * time.Millisecond)
			return tei, nil
		},
	}, 2, -1, Options{BusyRetries: -1})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := e.client.ProcessFulltext(context.Background(), fmt.Sprint(i), []byte(fmt.Sprintf("%%PDF-1.7\n%% doc %d\n", i)))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := e.g.MaxInFlight(); m > 2 {
		t.Errorf("%d conversions at once, the server has 2 engines", m)
	}
	if n := e.g.Count(http.StatusServiceUnavailable); n != 0 {
		t.Errorf("%d requests refused as busy, want none", n)
	}
}

func TestBadInputSendsNothing(t *testing.T) {
	e := newEnv(t, sim.GrobidConfig{}, 0, 2, Options{})
	for name, pdf := range map[string][]byte{
		"empty":     nil,
		"html":      []byte("<!DOCTYPE html><html>not a pdf</html>"),
		"too large": append([]byte("%PDF-1.7\n"), make([]byte, MaxPDF)...),
	} {
		if _, err := e.client.ProcessFulltext(context.Background(), name, pdf); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the document", name, err)
		}
	}
	if n := e.g.Count(0); n != 0 {
		t.Errorf("%d requests sent for bad input, want none", n)
	}
}

// TestOtherAnswers: what a GROBID behind a proxy, or a base URL that is
// no GROBID service, answers.
func TestOtherAnswers(t *testing.T) {
	cases := []struct {
		name  string
		setup func(svc *sim.Service)
		want  error
	}{
		{"400", func(svc *sim.Service) {
			svc.Script(sim.GrobidFulltextPath, sim.Fault{Status: http.StatusBadRequest}, sim.Forever)
		}, ErrBadRequest},
		{"200 html", func(svc *sim.Service) {
			// A proxy's sign-in page in GROBID's place.
			svc.Intercept(func(w http.ResponseWriter, _ *http.Request, _ sim.Call) bool {
				w.Header().Set("Content-Type", "text/html")
				w.Write(sim.LoginPage.Body)
				return true
			})
		}, ErrNotTEI},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := sim.NewGrobid(sim.GrobidConfig{})
			g.Add(pdfA, recordedTEI(t))
			svc := sim.Wrap(sim.GrobidService, g)
			c.setup(svc)
			srv := httptest.NewServer(svc)
			defer srv.Close()
			hc, _ := httpx.New(httpx.Config{UserAgent: "test", RetryMax: -1}, ServiceConfig(srv.URL, 1, time.Second))
			hsvc, _ := hc.Service(ServiceName)
			cl, _ := New(hsvc, Options{})
			if _, err := cl.ProcessFulltext(context.Background(), "x.pdf", pdfA); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
			if g.Count(0) != 0 {
				t.Errorf("GROBID converted %d documents behind the fault", g.Count(0))
			}
		})
	}
	t.Run("a web site: the hint at the base URL", func(t *testing.T) {
		srv := httptest.NewServer(sim.NewPDFSite()) // answers a POST 405
		defer srv.Close()
		hc, _ := httpx.New(httpx.Config{UserAgent: "test", RetryMax: -1}, ServiceConfig(srv.URL, 1, time.Second))
		svc, _ := hc.Service(ServiceName)
		cl, _ := New(svc, Options{})
		if _, err := cl.ProcessFulltext(context.Background(), "x.pdf", pdfA); err == nil || !strings.Contains(err.Error(), "status 405 (is the base URL a GROBID service?)") {
			t.Errorf("got %v, want the 405 and a hint at the base URL", err)
		}
	})
}

func TestNewValidates(t *testing.T) {
	hc, _ := httpx.New(httpx.Config{UserAgent: "test"}, ServiceConfig("", 0, 0))
	svc, _ := hc.Service(ServiceName)
	for _, o := range []Options{{ConsolidateHeader: 4}, {ConsolidateHeader: -1}, {ConsolidateCitations: 3}, {BusyWait: -time.Second}} {
		if _, err := New(svc, o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) accepted")
	}
	sc := ServiceConfig("", 0, 0)
	if sc.BaseURL != DefaultBaseURL || sc.MaxInFlight != DefaultCapacity || sc.Timeout != DefaultTimeout || len(sc.NoRetry) != 1 {
		t.Errorf("ServiceConfig defaults: %+v", sc)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"https://aclanthology.org/P19-1285.pdf": "P19-1285.pdf",
		"CorpusId:42":                           "CorpusId:42.pdf",
		`..\..\evil"name`:                       "evilname.pdf",
		"":                                      "input.pdf",
		"/":                                     "input.pdf",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStuckConversion: a conversion that never ends is given the
// conversion timeout once, retries included, not once per retry.
func TestStuckConversion(t *testing.T) {
	g := sim.NewGrobid(sim.GrobidConfig{Latency: time.Hour})
	srv := httptest.NewServer(g)
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", ""), RetryMax: 5, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond},
		ServiceConfig(srv.URL, 2, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(ServiceName)
	c, err := New(svc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ProcessFulltext(context.Background(), "a.pdf", pdfA)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v, want a timeout", err)
	}
	srv.Close() // waits for the handlers, which log the calls
	if n := len(g.Calls()); n != 1 {
		t.Errorf("%d conversions asked for, want 1", n)
	}
}

// TestBusyWaitStops: the first interrupt ends a busy wait at once (an hour
// here): the document is not asked for again.
func TestBusyWaitStops(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	if err := sleep(context.Background(), stop, time.Hour); !errors.Is(err, httpx.ErrStopped) {
		t.Errorf("err %v, want httpx.ErrStopped", err)
	}
	if err := sleep(context.Background(), nil, time.Millisecond); err != nil {
		t.Errorf("without a stop: %v", err)
	}
}
