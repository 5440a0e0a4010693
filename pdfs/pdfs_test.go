package pdfs

import (
	"context"
	"errors"
	"fmt"
	"github.com/groundwork/curate/internal/testutil"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/membudget"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

const target = "2401.00001"

var (
	pdfOK      = []byte("%PDF-1.7\n% quiet gradients\n%%EOF\n")
	pdfEmpty   = []byte("%PDF-1.4\n% a scan without text\n%%EOF\n")
	pdfLaterOK = []byte("%PDF-1.5\n% converts on the second try\n%%EOF\n")
)

// host is the simulated PDF host (a sim.PDFSite without robots.txt,
// behind a sim.Service that logs and faults requests) on a port of
// 127.0.0.1.
type host struct {
	site *sim.PDFSite
	svc  *sim.Service
	port string
}

// newHost starts a PDF host serving the test's PDFs and a sign-in page.
func newHost(t *testing.T) *host {
	t.Helper()
	h := &host{site: sim.NewPDFSite()}
	for path, pdf := range map[string][]byte{"/ok.pdf": pdfOK, "/empty.pdf": pdfEmpty, "/later.pdf": pdfLaterOK, "/flaky.pdf": pdfOK} {
		h.site.Put(path, pdf)
	}
	h.site.Set("/login", sim.LoginPage)
	h.svc = sim.Wrap(sim.PDFHost, sim.NoRobotsFile().In(h.site))
	srv := httptest.NewServer(h.svc)
	t.Cleanup(srv.Close)
	_, h.port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return h
}

// count returns the requests for path, or for any path but robots.txt
// when path is "".
func (h *host) count(path string) int {
	n := 0
	for _, c := range h.svc.Calls() {
		if c.Path == path || path == "" && c.Path != sim.RobotsPath {
			n++
		}
	}
	return n
}

// fail makes the next n requests for path answer 503 (sim.Forever: all).
func (h *host) fail(path string, n int) { h.svc.Script(path, sim.Unavailable, n) }

type env struct {
	st       *store.Store
	pdfs     *host
	internal *host
	g        *sim.Grobid
	stage    *Stage
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, pdfs: newHost(t), internal: newHost(t)}
	loop := netip.MustParseAddr("127.0.0.1")
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	f, err := oapdf.New(oapdf.Config{
		UserAgent: httpx.UserAgent("test", ""), Hosts: []string{"pdfs.test:" + e.pdfs.port, "mirror.test:" + e.pdfs.port},
		Interval: time.Millisecond, RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, Logger: log,
		Resolve: func(_ context.Context, name string) ([]netip.Addr, error) {
			switch name {
			case "pdfs.test":
				return []netip.Addr{loop}, nil
			case "mirror.test":
				return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
		},
		AllowAddr: func(a netip.Addr) bool { return a == loop },
	})
	if err != nil {
		t.Fatal(err)
	}
	tei, err := os.ReadFile(filepath.Join("testdata", "paper.tei.xml"))
	if err != nil {
		t.Fatal(err)
	}
	e.g = sim.NewGrobid(sim.GrobidConfig{})
	e.g.Add(pdfOK, tei)
	e.g.Add(pdfLaterOK, tei)
	e.g.AddNoContent(pdfEmpty)
	gsrv := httptest.NewServer(e.g)
	t.Cleanup(gsrv.Close)
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", ""), RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond},
		grobid.ServiceConfig(gsrv.URL, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(grobid.ServiceName)
	gc, err := grobid.New(svc, grobid.Options{IncludeRawCitations: true, SegmentSentences: true, BusyRetries: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e.stage = &Stage{Store: st, Fetcher: f, Converter: gc, Log: log, RetryAfter: time.Hour}
	return e
}

// rerun makes e.stage a new Stage of the same configuration: the next
// run.
func (e *env) rerun() {
	old := e.stage
	e.stage = &Stage{Store: old.Store, Fetcher: old.Fetcher, Arxiv: old.Arxiv, Converter: old.Converter, Log: old.Log,
		RetryAfter: old.RetryAfter, Refresh: old.Refresh, Concurrency: old.Concurrency, ParseBudget: old.ParseBudget}
}

func (e *env) at(path string) string { return "http://pdfs.test:" + e.pdfs.port + path }

// edges stores the target's S2 reference list: one cited paper per
// source, with the given open-access URL.
func (e *env) edges(t *testing.T, papers map[string]string) {
	t.Helper()
	list := &record.ScholarReferences{PaperID: "ARXIV:" + target}
	for id, url := range papers {
		p := record.ScholarPaper{PaperID: id, ExternalIDs: &record.ScholarIDs{DOI: "10.5555/" + id}, OpenAccessPDF: &record.ScholarPDF{URL: url, Status: "GOLD", License: "CCBY"}}
		if url == "" {
			p.OpenAccessPDF = &record.ScholarPDF{Status: "CLOSED"}
		}
		list.Edges = append(list.Edges, record.ScholarReference{CitedPaper: p})
	}
	if _, err := record.S2References.Put(context.Background(), e.st, target, &record.S2ReferenceList{Status: record.S2OK, List: list}, nil); err != nil {
		t.Fatal(err)
	}
}

func src(id string) Source { return Source{Key: "bib." + id, S2PaperID: id, Title: "Paper " + id} }

func outcomes(r *Result) map[string]string {
	out := map[string]string{}
	for _, s := range r.Sources {
		out[s.Key] = s.Outcome
	}
	return out
}

func TestProcessTarget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	internal := "http://127.0.0.1:" + e.internal.port + "/ok.pdf"
	e.pdfs.site.Redirect("/to-internal", internal, http.StatusFound)
	e.edges(t, map[string]string{
		"ok": e.at("/ok.pdf"), "empty": e.at("/empty.pdf"), "closed": "", "gone": e.at("/gone.pdf"),
		"login": e.at("/login"), "loopback": internal, "metadata": "http://169.254.169.254/latest/meta-data/",
		"foreign": "https://pdfs.example.net/x.pdf", "redirect": e.at("/to-internal"),
		"rebind": "http://mirror.test:" + e.pdfs.port + "/ok.pdf",
	})
	sources := []Source{src("ok"), src("empty"), src("closed"), src("gone"), src("login"), src("loopback"),
		src("metadata"), src("foreign"), src("redirect"), src("rebind"), {Key: "bib.none", Title: "Unknown to S2"}}
	res, err := e.stage.ProcessTarget(ctx, target, sources)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bib.ok": Converted, "bib.empty": None, "bib.closed": None, "bib.gone": None, "bib.login": None,
		"bib.loopback": None, "bib.metadata": None, "bib.foreign": None, "bib.redirect": None, "bib.rebind": None, "bib.none": None}
	got := outcomes(res)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s, want %s (%+v)", k, got[k], w, res.Sources)
		}
	}
	if res.Converted != 1 || res.None != 10 {
		t.Errorf("counts: %+v", res)
	}

	// What is stored for the converted paper.
	doc, ok, err := record.PDFDocuments.Lookup(ctx, e.st, "s2:ok")
	if err != nil || !ok {
		t.Fatalf("no PDF document: %v", err)
	}
	if doc.Source != record.SourcePDF || doc.ServedBy != record.ServedByGrobid || doc.ConverterVersion != "0.8.1" ||
		doc.URL != e.at("/ok.pdf") || len(doc.Sections) != 3 || len(doc.References) != 2 || len(doc.Mentions) != 2 {
		t.Errorf("document: %+v", doc)
	}
	body, rec, err := record.PDFFiles.Get(ctx, e.st, "s2:ok")
	if err != nil || string(body) != string(pdfOK) || rec.Blob != store.HashOf(pdfOK) || rec.Meta["license"] != "CCBY" {
		t.Errorf("pdf record: %v %+v", err, rec)
	}
	if _, _, err := record.TEIFiles.Get(ctx, e.st, "s2:ok"); err != nil {
		t.Errorf("no TEI stored: %v", err)
	}
	out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "s2:ok")
	if out == nil || out.Status != record.PDFConverted || out.License != "CCBY" || out.SHA256 != string(store.HashOf(pdfOK)) {
		t.Errorf("outcome: %+v", out)
	}
	for _, item := range []string{"s2:login", "s2:loopback", "s2:redirect"} {
		if _, _, err := record.PDFFiles.Get(ctx, e.st, item); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: a PDF was stored (%v)", item, err)
		}
	}

	// The fakes: nothing reached the internal host; the allowed host was
	// asked only for the allowed URLs; GROBID only for the two PDFs.
	if n := e.internal.count(""); n != 0 {
		t.Errorf("the internal host got %d requests", n)
	}
	for path, n := range map[string]int{"/ok.pdf": 1, "/empty.pdf": 1, "/gone.pdf": 1, "/login": 1, "/to-internal": 1} {
		if got := e.pdfs.count(path); got != n {
			t.Errorf("%s asked %d times, want %d", path, got, n)
		}
	}
	if n := e.g.Count(http.StatusOK) + e.g.Count(http.StatusNoContent); n != 2 || e.g.Count(0) != 2 {
		t.Errorf("GROBID calls %+v, want two conversions", e.g.Calls())
	}

	// A second run asks nothing.
	before, calls := e.pdfs.count(""), e.g.Count(0)
	res, err = e.stage.ProcessTarget(ctx, target, sources)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requested != 0 || e.pdfs.count("") != before || e.g.Count(0) != calls || res.Reused != len(sources) {
		t.Errorf("second run: %+v; host %d→%d, grobid %d→%d", res, before, e.pdfs.count(""), calls, e.g.Count(0))
	}
}

// arxivPDFs is a fake of the arXiv service's PDFs.
type arxivPDFs struct {
	mu    sync.Mutex
	asked []string
}

func (a *arxivPDFs) PDF(_ context.Context, id string) (*oapdf.PDF, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, id)
	if id != "2301.50004" {
		return nil, fmt.Errorf("arxiv pdf %s: %w 404", id, oapdf.ErrStatus)
	}
	return &oapdf.PDF{URL: "https://arxiv.org/pdf/" + id, FinalURL: "https://arxiv.org/pdf/" + id, Body: pdfLaterOK, SHA256: string(store.HashOf(pdfLaterOK))}, nil
}

// TestArxivSources: an arXiv source needs a PDF only when the sources
// stage found no HTML for it; its PDF is asked of arXiv (through the
// arXiv service) first, with S2's licence of the same PDF, then of the
// other candidates.
func TestArxivSources(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ax := &arxivPDFs{}
	e.stage.Arxiv = ax
	e.edges(t, map[string]string{"html": e.at("/ok.pdf"), "nohtml": e.at("/ok.pdf"), "unfetched": e.at("/ok.pdf"),
		"onarxiv": "https://arxiv.org/pdf/2301.50004v1"})
	if _, err := record.NoHTMLs.Put(ctx, e.st, "2301.50004", &record.NoHTML{Reason: "404"}, nil); err != nil {
		t.Fatal(err)
	}
	title := "A page"
	if _, err := record.Documents.Put(ctx, e.st, "2301.50001", &record.Document{ID: "2301.50001", Title: &title}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := record.NoHTMLs.Put(ctx, e.st, "2301.50002", &record.NoHTML{Reason: "404"}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.stage.ProcessTarget(ctx, target, []Source{
		{Key: "bib.html", ArxivID: "2301.50001v2", S2PaperID: "html"},
		{Key: "bib.nohtml", ArxivID: "2301.50002", S2PaperID: "nohtml"},
		{Key: "bib.unfetched", ArxivID: "2301.50003", S2PaperID: "unfetched"},
		{Key: "bib.onarxiv", ArxivID: "2301.50004", S2PaperID: "onarxiv"},
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ax.asked) // sources are worked on concurrently
	if got := strings.Join(ax.asked, " "); got != "2301.50002 2301.50004" {
		t.Errorf("arXiv asked for %q", got)
	}
	if out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "2301.50004"); out == nil || out.Status != record.PDFConverted ||
		len(out.Candidates) != 1 || out.Candidates[0].Origin != OriginArxiv || out.License != "CCBY" {
		t.Errorf("arXiv outcome %+v", out)
	}
	if out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "2301.50002"); out == nil || out.Status != record.PDFConverted || out.URL != e.at("/ok.pdf") {
		t.Errorf("fallback outcome %+v", out)
	}
	want := map[string]string{"bib.html": NotNeeded, "bib.nohtml": Converted, "bib.unfetched": NotNeeded}
	if got := outcomes(res); got["bib.html"] != want["bib.html"] || got["bib.nohtml"] != want["bib.nohtml"] || got["bib.unfetched"] != want["bib.unfetched"] {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if !testutil.Has(t)(record.PDFDocuments.Has(ctx, e.st, "2301.50002")) {
		t.Error("the arXiv paper without HTML has no PDF document under its arXiv item")
	}
	if testutil.Has(t)(record.Documents.Has(ctx, e.st, "2301.50002")) {
		t.Error("the PDF document was stored as the paper's HTML document")
	}
}

// TestResume: a conversion that fails while GROBID is busy fails the
// target and keeps the PDF; the next run converts the stored PDF without
// downloading it again. A stored TEI without its Document is parsed
// without any request.
func TestResume(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.edges(t, map[string]string{"later": e.at("/later.pdf")})
	e.g.SetBusy(10)
	res, err := e.stage.ProcessTarget(ctx, target, []Source{src("later")})
	if !errors.Is(err, grobid.ErrBusy) || res.Failed != 1 {
		t.Fatalf("busy GROBID: %v, %+v; want ErrBusy", err, res)
	}
	if _, _, err := record.PDFFiles.Get(ctx, e.st, "s2:later"); err != nil {
		t.Fatalf("the PDF was not kept: %v", err)
	}
	e.g.SetBusy(0)
	res, err = e.stage.ProcessTarget(ctx, target, []Source{src("later")})
	if err != nil || res.Converted != 1 {
		t.Fatalf("second run: %v %+v", err, res)
	}
	if n := e.pdfs.count("/later.pdf"); n != 1 {
		t.Errorf("the PDF was downloaded %d times", n)
	}

	// A TEI stored by hand (as an older run would have left it).
	tei, _, _ := record.TEIFiles.Get(ctx, e.st, "s2:later")
	if _, err := record.TEIFiles.Put(ctx, e.st, "s2:orphan", tei, nil); err != nil {
		t.Fatal(err)
	}
	e.edges(t, map[string]string{"orphan": e.at("/never.pdf")})
	calls := e.g.Count(0)
	res, err = e.stage.ProcessTarget(ctx, target, []Source{src("orphan")})
	if err != nil || res.Converted != 1 || res.Requested != 0 || e.g.Count(0) != calls || e.pdfs.count("/never.pdf") != 0 {
		t.Errorf("stored TEI: %v %+v, grobid %d→%d", err, res, calls, e.g.Count(0))
	}
}

// TestRetry: a host failing for a while gives a failed outcome that the
// next runs try again, up to maxAttempts; a refusal is not retried within
// RetryAfter.
func TestRetry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.edges(t, map[string]string{"flaky": e.at("/flaky.pdf")})
	e.pdfs.fail("/flaky.pdf", 4) // two runs of a first try and one retry
	for run := 1; run <= 3; run++ {
		e.rerun()
		res, err := e.stage.ProcessTarget(ctx, target, []Source{src("flaky")})
		if err != nil {
			t.Fatalf("run %d: %v (a host's failure must not fail the target)", run, err)
		}
		want := Failed
		if run == 3 {
			want = Converted
		}
		if res.Sources[0].Outcome != want {
			t.Errorf("run %d: %s (%s), want %s", run, res.Sources[0].Outcome, res.Sources[0].Reason, want)
		}
	}
	if n := e.pdfs.count("/flaky.pdf"); n != 5 {
		t.Errorf("asked %d times, want 5", n)
	}

	// A host that never answers is given up on after maxAttempts.
	e.edges(t, map[string]string{"down": e.at("/flaky.pdf")})
	e.pdfs.fail("/flaky.pdf", sim.Forever)
	for range maxAttempts + 2 {
		e.rerun()
		if _, err := e.stage.ProcessTarget(ctx, target, []Source{src("down")}); err != nil {
			t.Fatal(err)
		}
	}
	out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "s2:down")
	if out == nil || out.Status != record.PDFNone || out.Attempts != maxAttempts {
		t.Errorf("outcome after %d runs: %+v", maxAttempts+2, out)
	}
	if n := e.pdfs.count("/flaky.pdf") - 5; n != 2*maxAttempts {
		t.Errorf("the dead host was asked %d times, want %d", n, 2*maxAttempts)
	}
	// After the retry interval it is asked again.
	e.rerun()
	e.stage.RetryAfter = time.Nanosecond
	if _, err := e.stage.ProcessTarget(ctx, target, []Source{src("down")}); err != nil {
		t.Fatal(err)
	}
	if n := e.pdfs.count("/flaky.pdf") - 5; n != 2*maxAttempts+2 {
		t.Errorf("after the retry interval: asked %d times, want %d", n, 2*maxAttempts+2)
	}
}

func TestArxivPDF(t *testing.T) {
	for raw, want := range map[string]string{
		"https://arxiv.org/pdf/2401.00001":             "2401.00001",
		"https://arxiv.org/pdf/2401.00001v3":           "2401.00001",
		"http://export.arxiv.org/pdf/2401.00001v1.pdf": "2401.00001",
		"https://arxiv.org/pdf/hep-th/9901001v2":       "hep-th/9901001",
		"https://arxiv.org/abs/2401.00001":             "",
		"https://arxiv.org:8443/pdf/2401.00001":        "",
		// A scheme's default port is no port: through the arXiv service.
		"https://arxiv.org:443/pdf/2401.00001":            "2401.00001",
		"http://export.arxiv.org:80/pdf/2401.00001":       "2401.00001",
		"https://ARXIV.ORG./pdf/2401.00001":               "2401.00001",
		"http://arxiv.org:443/pdf/2401.00001":             "",
		"https://user@arxiv.org/pdf/2401.00001":           "",
		"https://arxiv.org.evil.test/pdf/2401.00001":      "",
		"https://aclanthology.org/pdf/2401.00001":         "",
		"ftp://arxiv.org/pdf/2401.00001":                  "",
		"https://arxiv.org/pdf/not-an-id":                 "",
		"https://arxiv.org/pdf/2401.00001/../../etc/x.sh": "",
	} {
		if got := arxivPDF(raw); got != want {
			t.Errorf("arxivPDF(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestConversionFailureRetried: GROBID's 500 (a failed conversion; its
// causes include a timeout or an engine that ran out of memory) is a
// failed attempt, converted again from the stored PDF on the next run
// without downloading it, up to maxAttempts; a 204 (nothing to extract)
// stands.
func TestConversionFailureRetried(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.edges(t, map[string]string{"later": e.at("/later.pdf"), "empty": e.at("/empty.pdf")})
	e.g.AddFailure(pdfLaterOK, "[TIMEOUT] Processing timeout")
	res, err := e.stage.ProcessTarget(ctx, target, []Source{src("later"), src("empty")})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(res); got["bib.later"] != Failed || got["bib.empty"] != None {
		t.Fatalf("first run: %v, want later failed (500) and empty none (204)", got)
	}
	if out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "s2:later"); out == nil || out.Status != record.PDFFailed || out.Attempts != 1 ||
		!strings.Contains(out.Reason, "TIMEOUT") {
		t.Errorf("outcome after a 500: %+v, want failed, one attempt, the reason", out)
	}
	tei, _ := os.ReadFile(filepath.Join("testdata", "paper.tei.xml"))
	e.g.Add(pdfLaterOK, tei) // the service recovers
	calls := e.g.Count(0)
	e.rerun()
	res, err = e.stage.ProcessTarget(ctx, target, []Source{src("later"), src("empty")})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(res); got["bib.later"] != Converted || got["bib.empty"] != Reused {
		t.Errorf("second run: %v, want later converted and empty reused", got)
	}
	if n := e.g.Count(0) - calls; n != 1 {
		t.Errorf("GROBID asked %d times on the second run, want once (the 204 stands)", n)
	}
	if n := e.pdfs.count("/later.pdf"); n != 1 {
		t.Errorf("the PDF was downloaded %d times, want once", n)
	}

	// A PDF that always fails is given up on after maxAttempts.
	e.edges(t, map[string]string{"bad": e.at("/ok.pdf")})
	e.g.AddFailure(pdfOK, "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1")
	for range maxAttempts + 1 {
		e.rerun()
		if _, err := e.stage.ProcessTarget(ctx, target, []Source{src("bad")}); err != nil {
			t.Fatal(err)
		}
	}
	if out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "s2:bad"); out == nil || out.Status != record.PDFNone || out.Attempts != maxAttempts {
		t.Errorf("outcome after %d runs of 500: %+v, want none after %d attempts", maxAttempts+1, out, maxAttempts)
	}
}

// TestRefused: which download failures last (recorded as none) and which
// may pass (failed, tried again).
func TestRefused(t *testing.T) {
	forbidden := fmt.Errorf("dial: %w", oapdf.ErrForbiddenAddress)
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("fetch: %w: /private/x.pdf", oapdf.ErrRobots), true},
		{fmt.Errorf("fetch: %w: robots.txt answered 503: %w", oapdf.ErrRobots, oapdf.ErrRobotsUnreachable), false},
		{fmt.Errorf("fetch: %w: %w: %w", oapdf.ErrRobots, oapdf.ErrRobotsUnreachable, forbidden), true},
		{fmt.Errorf("fetch: %w 404", oapdf.ErrStatus), true},
		{fmt.Errorf("fetch: %w", oapdf.ErrNotPDF), true},
		{fmt.Errorf("fetch: %w", &httpx.StatusError{Status: 503}), false},
		{errors.New("connection reset"), false},
	} {
		if got := refused(tc.err); got != tc.want {
			t.Errorf("refused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestFailureOncePerRun: a source that several targets cite and whose
// host fails is tried once in a run, so one run counts one attempt.
func TestFailureOncePerRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.edges(t, map[string]string{"flaky": e.at("/flaky.pdf")})
	e.pdfs.fail("/flaky.pdf", sim.Forever)
	for _, tgt := range []string{target, target, target} { // three targets citing it
		res, err := e.stage.ProcessTarget(ctx, tgt, []Source{src("flaky")})
		if err != nil {
			t.Fatal(err)
		}
		if o := res.Sources[0].Outcome; o != Failed && o != Reused {
			t.Errorf("outcome %s, want failed, then reused", o)
		}
	}
	if n := e.pdfs.count("/flaky.pdf"); n != 2 {
		t.Errorf("the failing host was asked %d times in one run, want 2 (one try and one retry)", n)
	}
	if out, _, _ := record.PDFOutcomes.Lookup(ctx, e.st, "s2:flaky"); out == nil || out.Status != record.PDFFailed || out.Attempts != 1 {
		t.Errorf("outcome after one run: %+v, want failed after one attempt", out)
	}
	e.rerun()
	if _, err := e.stage.ProcessTarget(ctx, target, []Source{src("flaky")}); err != nil {
		t.Fatal(err)
	}
	if n := e.pdfs.count("/flaky.pdf"); n != 4 {
		t.Errorf("the next run asked %d times in all, want 4", n)
	}
}

// A stored PDF, TEI or Document whose blob is lost or damaged (the store
// heals: it reads as absent) is made again from what is left, or asked
// for again: never a target failing on it run after run.
func TestLostRecordsMadeAgain(t *testing.T) {
	ctx := context.Background()
	for _, lose := range [][]string{
		{record.PDFDocuments.Name()},
		{record.PDFDocuments.Name(), record.TEIFiles.Name()},
		{record.PDFDocuments.Name(), record.TEIFiles.Name(), record.PDFFiles.Name()},
		{record.TEIFiles.Name(), record.PDFFiles.Name()}, // the Document stands: nothing to do
	} {
		t.Run(strings.Join(lose, ","), func(t *testing.T) {
			e := newEnv(t)
			e.st.Heal(slog.New(slog.NewTextHandler(t.Output(), nil)))
			e.edges(t, map[string]string{"later": e.at("/later.pdf")})
			if res, err := e.stage.ProcessTarget(ctx, target, []Source{src("later")}); err != nil || res.Converted != 1 {
				t.Fatalf("first run: %v %+v", err, res)
			}
			recs, err := e.st.Records(ctx, "s2:later")
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for _, rec := range recs {
				if !slices.Contains(lose, rec.Kind) {
					continue
				}
				lost++
				if err := os.Remove(filepath.Join(e.st.Dir(), "blobs", string(rec.Blob[:2]), string(rec.Blob)+".zst")); err != nil {
					t.Fatal(err)
				}
			}
			if lost != len(lose) {
				t.Fatalf("the first run stored %d of the kinds %v", lost, lose)
			}
			calls := e.g.Count(0)
			e.rerun()
			res, err := e.stage.ProcessTarget(ctx, target, []Source{src("later")})
			if err != nil || res.Failed != 0 {
				t.Fatalf("after losing %v: %v %+v", lose, err, res)
			}
			wantDownloads, wantConversions := 1, 0
			switch {
			case !slices.Contains(lose, record.PDFDocuments.Name()):
			case slices.Contains(lose, record.PDFFiles.Name()):
				wantDownloads, wantConversions = 2, 1
			case slices.Contains(lose, record.TEIFiles.Name()):
				wantConversions = 1
			}
			if n := e.pdfs.count("/later.pdf"); n != wantDownloads {
				t.Errorf("downloads: %d, want %d", n, wantDownloads)
			}
			if n := e.g.Count(0) - calls; n != wantConversions {
				t.Errorf("conversions: %d, want %d", n, wantConversions)
			}
			if slices.Contains(lose, record.PDFDocuments.Name()) {
				if doc, ok, err := record.PDFDocuments.Lookup(ctx, e.st, "s2:later"); err != nil || !ok || doc == nil {
					t.Errorf("the Document was not made again: %v %v", ok, err)
				}
			}
		})
	}
}

// TestParseBudget checks that the parse of a TEI asks the parse budget
// for the TEI's weight, and gives it back.
func TestParseBudget(t *testing.T) {
	e := newEnv(t)
	e.stage.ParseBudget = membudget.New(1 << 30)
	e.edges(t, map[string]string{"ok": e.at("/ok.pdf")})
	if _, err := e.stage.ProcessTarget(context.Background(), target, []Source{src("ok")}); err != nil {
		t.Fatal(err)
	}
	data, _, err := record.TEIFiles.Get(context.Background(), e.st, "s2:ok")
	if err != nil {
		t.Fatal(err)
	}
	if now, peak := e.stage.ParseBudget.InFlight(); now != 0 || peak != tei.Cost(data) {
		t.Errorf("budget: %d in flight after the parse, peak %d; want 0 and the TEI's weight %d", now, peak, tei.Cost(data))
	}
}
