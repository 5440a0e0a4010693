package pdfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// e2ePDFWorld returns a world whose cited papers without an arXiv page
// have open-access PDFs, and in which one such source of some target has
// each hostile URL kind; hostile maps their background index to the kind.
func e2ePDFWorld(t *testing.T, targets int) (sim.WorldConfig, map[int]string) {
	t.Helper()
	cfg := sim.WorldConfig{Seed: 21, Targets: targets, Papers: 400}
	plain, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var picked []int
	for i := range targets {
		p := plain.Target(i)
		for _, r := range plain.References(&p) {
			if r.Role == sim.RoleSource && !r.Paper.IsTarget() && r.Paper.ArxivID == "" && !slices.Contains(picked, r.Paper.Index) {
				picked = append(picked, r.Paper.Index)
			}
		}
	}
	cases := sim.HostileCases()
	if len(picked) < 3*len(cases) {
		t.Fatalf("only %d non-arXiv sources in the world", len(picked))
	}
	hostile := map[int]string{}
	for i, c := range cases {
		hostile[picked[2*i]] = c // spread over the world
	}
	cfg.OpenAccess = &sim.OpenAccess{Hostile: hostile}
	return cfg, hostile
}

// TestE2EPDFs runs curate on a world whose sources without an arXiv page
// have open-access PDFs:
//
//   - without --grobid, nothing is asked of the PDF host, GROBID or the
//     internal service, S2 is asked for no openAccessPdf in batches, no
//     pdfs ledger entry or PDF record is written, and the dataset is byte
//     for byte the dataset of the same world without any open access;
//   - with --grobid (fresh store), at least 90% of the sources that have a
//     convertible PDF get PDF full-text cards; none of the hostile URLs
//     (loopback, 10.x, 169.254.169.254, a foreign host, a name resolving
//     inside, redirects to loopback and to the metadata service, an HTML
//     page, an oversize body) reaches the internal service, stores a PDF
//     or reaches GROBID; GROBID is asked for no more conversions at once
//     than --grobid-capacity, and a busy answer is retried;
//   - curate refresh with --grobid over the store of the run without it
//     re-summarizes exactly the sources whose text improved.
func TestE2EPDFs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs of about 20 s")
	}
	const targets = 60
	cfg, hostile := e2ePDFWorld(t, targets)
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	// The knowledge cut is off: with it (the default) a target whose v1
	// arXiv has no HTML for is read from its v1's PDF once --grobid is
	// given (asked of arXiv, though ar5iv has a page of the version
	// served now), and re-classified and re-carded then: the cut's work
	// (TestE2EKnowledgeCutGrobid), not what this test holds, which is
	// what the sources' PDFs bring.
	fast := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "8", "--log", "warn", "--knowledge-cut", "off"}
	pdfFlags := func(s *sim.Servers) []string {
		return append(s.GrobidFlags(), "--pdf-interval", "1ms", "--pdf-max-size", "1048576", "--grobid-capacity", "3")
	}

	// The world without open access, as every run was before.
	closed := cfg
	closed.OpenAccess = nil
	sc := clitest.Sim(t, closed, sim.Options{})
	dirC := t.TempDir()
	if code, _, stderr := clitest.Run(t, env, clitest.RunArgs(t, sc, dirC+"/store", dirC+"/dataset", fast...)...); code != 0 {
		t.Fatalf("closed world: exit %d\n%s", code, stderr)
	}

	// The open-access world without --grobid.
	s := clitest.Sim(t, cfg, sim.Options{})
	w := s.World
	dirN := t.TempDir()
	if code, _, stderr := clitest.RunWithPDFNet(t, s, env, clitest.RunArgs(t, s, dirN+"/store", dirN+"/dataset", fast...)...); code != 0 {
		t.Fatalf("open world without --grobid: exit %d\n%s", code, stderr)
	}
	for _, name := range []string{sim.PDFHost, sim.GrobidService, sim.Internal} {
		if n := s.Service(name).Stats().Requests; n != 0 {
			t.Errorf("without --grobid, %s got %d requests", name, n)
		}
	}
	for _, c := range s.Service(sim.S2).Calls() {
		if strings.Contains(c.Key, "batch") && strings.Contains(c.Key, "openAccessPdf") {
			t.Errorf("without --grobid, S2 was asked %s", c.Key)
		}
	}
	for _, c := range s.Service(sim.Arxiv).Calls() {
		if strings.Contains(c.Key, "/pdf/") {
			t.Errorf("without --grobid, arXiv was asked %s", c.Key)
		}
	}
	for _, f := range []string{"README.md", "report.html"} {
		a, _ := os.ReadFile(filepath.Join(dirC, "dataset", f))
		b, _ := os.ReadFile(filepath.Join(dirN, "dataset", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("without --grobid, %s differs from the closed world's (%d and %d bytes)", f, len(a), len(b))
		}
	}
	shardsC, shardsN := clitest.Shards(t, dirC+"/dataset"), clitest.Shards(t, dirN+"/dataset")
	if len(shardsC) != len(shardsN) {
		t.Errorf("shards: %d and %d", len(shardsC), len(shardsN))
	}
	for name, b := range shardsC {
		if !bytes.Equal(b, shardsN[name]) {
			t.Errorf("without --grobid, %s differs from the closed world's", name)
		}
	}
	e2eNoPDFRecords(t, dirN+"/store", s.World.TargetIDs())

	// A fresh run with --grobid; GROBID is busy for its first answer.
	s.Reset()
	s.Grobid().SetBusy(1)
	dirG := t.TempDir()
	code, stdout, stderr := clitest.RunWithPDFNet(t, s, env, clitest.RunArgs(t, s, dirG+"/store", dirG+"/dataset", append(fast, pdfFlags(s)...)...)...)
	if code != 0 {
		t.Fatalf("with --grobid: exit %d\n%s\n%s", code, stdout, stderr)
	}
	levels := clitest.SourceLevels(t, dirG+"/dataset")
	var withPDF, pdfCards, hostileSeen, arxivNoHTML, arxivPDF int
	papersWithPDF, papersCarded := map[string]bool{}, map[string]bool{}
	for id, ls := range levels {
		p, ok := w.ByS2(id)
		if !ok {
			t.Errorf("dataset source %s is no paper of the world", id)
			continue
		}
		for _, l := range ls {
			switch c := w.PDFCase(&p); {
			case c == "pdf" && p.ArxivID == "":
				withPDF++
				papersWithPDF[id] = true
				if l == record.TextPDF {
					pdfCards++
					papersCarded[id] = true
				}
			case c == "pdf":
				arxivNoHTML++
				if l == record.TextPDF {
					arxivPDF++
				}
			case c != "":
				hostileSeen++
				if l != record.TextAbstract {
					t.Errorf("hostile source %s (%s) has a %s card", p.Name, c, l)
				}
			case p.ArxivID == "" && l != record.TextAbstract:
				t.Errorf("closed source %s has a %s card", p.Name, l)
			}
		}
	}
	share := float64(pdfCards) / float64(max(withPDF, 1))
	t.Logf("with --grobid: %d of %d source cards (%d of %d papers) of non-arXiv papers with PDFs are PDF full text (%.1f%%); arXiv papers without HTML %d of %d; hostile sources in the dataset %d",
		pdfCards, withPDF, len(papersCarded), len(papersWithPDF), 100*share, arxivPDF, arxivNoHTML, hostileSeen)
	if withPDF < 20 || share < 0.9 {
		t.Errorf("%d of %d sources with PDFs got PDF full-text cards, want at least 90%%", pdfCards, withPDF)
	}
	if hostileSeen == 0 {
		t.Error("no hostile source reached the dataset: the SSRF cases went unchecked")
	}
	if arxivNoHTML == 0 || arxivPDF != arxivNoHTML {
		t.Errorf("%d of %d sources on arXiv without HTML got PDF full-text cards", arxivPDF, arxivNoHTML)
	}
	for _, c := range s.Service(sim.Arxiv).Calls() {
		if id, ok := strings.CutPrefix(c.Key, "GET /pdf/"); ok {
			if p, found := w.ByArxiv(id); !found || p.HTML != sim.HTMLNone {
				t.Errorf("arXiv was asked for the PDF of %s, which has HTML", id)
			}
		}
	}

	// The hostile URLs: nothing reached the internal service, the PDF host
	// was asked only for the hostile URLs on its own allowed name, nothing
	// of theirs was stored or converted.
	if n := s.Service(sim.Internal).Stats().Requests; n != 0 {
		t.Errorf("the internal service got %d requests: %v", n, s.Service(sim.Internal).Calls())
	}
	asked := map[string]int{}
	for _, c := range s.Service(sim.PDFHost).Calls() {
		asked[strings.TrimPrefix(c.Key, "GET ")]++
	}
	converted := map[string]bool{}
	conversions := 0
	for _, c := range s.Grobid().Calls() {
		if c.Path == sim.GrobidFulltextPath && (c.Status == http.StatusOK || c.Status == http.StatusNoContent) {
			converted[c.InputSHA256] = true
			conversions++
		}
	}
	e2eCheckHostile(t, w, dirG+"/store", hostile, asked, converted)
	if n := s.Grobid().MaxInFlight(); n > 3 || n == 0 {
		t.Errorf("GROBID converted %d PDFs at once, --grobid-capacity is 3", n)
	}
	if s.Grobid().Count(http.StatusServiceUnavailable) != 1 {
		t.Errorf("GROBID answered 503 %d times, want the one busy answer", s.Grobid().Count(http.StatusServiceUnavailable))
	}
	if conversions != len(converted) {
		t.Errorf("%d conversions of %d distinct PDFs: a PDF was converted twice", conversions, len(converted))
	}
	ledger := clitest.Ledger(t, dirG+"/store", w.TargetIDs())
	withEntry := 0
	for _, es := range ledger {
		for _, e := range es {
			if e.Stage == "pdfs" && e.Status == store.StatusDone {
				withEntry++
			}
		}
	}
	if withEntry < targets*3/4 {
		t.Errorf("%d of %d targets have a done pdfs ledger entry", withEntry, targets)
	}

	// The same again: nothing is asked of the PDF host or GROBID.
	pdfAsked, grobidAsked := s.Service(sim.PDFHost).Stats().Requests, s.Grobid().Count(0)
	if code, _, stderr := clitest.RunWithPDFNet(t, s, env, clitest.RunArgs(t, s, dirG+"/store", dirG+"/dataset", append(fast, pdfFlags(s)...)...)...); code != 0 {
		t.Fatalf("second run with --grobid: exit %d\n%s", code, stderr)
	}
	if d := s.Service(sim.PDFHost).Stats().Requests - pdfAsked; d != 0 {
		t.Errorf("the second run asked the PDF host %d times", d)
	}
	for _, c := range s.Grobid().Calls()[grobidAsked:] {
		if c.Path != sim.GrobidIsAlivePath && c.Path != sim.GrobidVersionPath {
			t.Errorf("the second run asked GROBID %s %s", c.Method, c.Path)
		}
	}

	// curate refresh with --grobid over the store written without it:
	// the sources whose text improved get new cards, and only they.
	llmBefore := len(s.Service(sim.LLM).Calls())
	args := append([]string{"refresh", "--store", dirN + "/store", "--out", dirN + "/versions", "--targets", e2eTargetsFile(t, s)}, s.Flags()...)
	args = append(append(args, fast...), pdfFlags(s)...)
	if code, _, stderr := clitest.RunWithPDFNet(t, s, env, args...); code != 0 {
		t.Fatalf("refresh with --grobid: exit %d\n%s", code, stderr)
	}
	recarded := map[string]bool{}
	for _, c := range s.Service(sim.LLM).Calls()[llmBefore:] {
		if c.Outcome != sim.OutcomeOK {
			continue
		}
		kind, title, _ := strings.Cut(c.Note, ": ")
		if kind != "source" {
			t.Errorf("refresh made a %s call (%s): only improved source cards should be written", kind, title)
		}
		recarded[title] = true
	}
	improved := map[string]bool{}
	for id, ls := range clitest.SourceLevels(t, dirN+"/versions/latest") {
		p, _ := w.ByS2(id)
		if slices.Contains(ls, record.TextPDF) {
			improved[p.Title] = true
		}
	}
	t.Logf("refresh with --grobid: %d source papers re-carded, %d have PDF full text now", len(recarded), len(improved))
	if len(improved) == 0 || len(recarded) != len(improved) {
		t.Errorf("refresh re-carded %d papers, %d sources have PDF full text now", len(recarded), len(improved))
	}
	for title := range recarded {
		if !improved[title] {
			t.Errorf("refresh re-carded %q, whose text did not improve", title)
		}
	}
}

// e2eTargetsFile writes the world's targets file.
func e2eTargetsFile(t *testing.T, s *sim.Servers) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(f, s.World.TargetsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// e2eNoPDFRecords checks that a store holds no record of the pdfs stage.
func e2eNoPDFRecords(t *testing.T, dir string, targets []string) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, kind := range []string{record.PDFFiles.Name(), record.TEIFiles.Name(), record.PDFDocuments.Name(), record.PDFOutcomes.Name()} {
		if items, err := st.Items(context.Background(), kind); err != nil || len(items) > 0 {
			t.Errorf("without --grobid, the store has %d %s records (%v)", len(items), kind, err)
		}
	}
	for _, k := range targets {
		es, _ := st.Entries(context.Background(), k)
		for _, e := range es {
			if e.Stage == "pdfs" {
				t.Errorf("without --grobid, %s has a pdfs ledger entry", k)
			}
		}
	}
}

// e2eCheckHostile checks what became of each hostile source: the PDF host
// was asked for it only when its URL names the host's allowed name (and
// then once); no PDF of it is stored; GROBID converted only PDFs of
// papers that have one.
func e2eCheckHostile(t *testing.T, w *sim.World, dir string, hostile map[int]string, asked map[string]int, converted map[string]bool) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for j, c := range hostile {
		p := w.Background(j)
		path := "/pdf/b" + strconv.Itoa(j) + ".pdf"
		onHost := slices.Contains([]string{sim.PDFRedirectLoopback, sim.PDFRedirectMetadata, sim.PDFNotPDF, sim.PDFOversize}, c)
		out, ok, err := record.PDFOutcomes.Lookup(ctx, st, "s2:"+w.S2ID(&p))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue // not a source of a target that reached the stage
		}
		if n := asked[path]; onHost && n != 1 || !onHost && n != 0 {
			t.Errorf("%s: the PDF host was asked %d times for %s", c, n, path)
		}
		if out.Status != record.PDFNone || len(out.Candidates) == 0 || out.Candidates[len(out.Candidates)-1].Error == "" {
			t.Errorf("%s: outcome %+v", c, out)
		}
		t.Logf("%s: %s", c, out.Reason)
		if _, _, err := record.PDFFiles.Get(ctx, st, "s2:"+w.S2ID(&p)); err == nil {
			t.Errorf("%s: a PDF was stored", c)
		}
		sum := sha256.Sum256(w.PDF(&p))
		if converted[hex.EncodeToString(sum[:])] {
			t.Errorf("%s: its PDF was sent to GROBID", c)
		}
	}
	for sum := range converted {
		found := false
		for _, item := range mustItems(t, st, record.PDFFiles.Name()) {
			body, _, _ := record.PDFFiles.Get(ctx, st, item)
			s := sha256.Sum256(body)
			found = found || hex.EncodeToString(s[:]) == sum
		}
		if !found {
			t.Errorf("GROBID converted a PDF (%s) that the store does not hold", sum[:12])
		}
	}
}

func mustItems(t *testing.T, st *store.Store, kind string) []string {
	t.Helper()
	items, err := st.Items(context.Background(), kind)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestPDFFlagsChecked: a bad --grobid, --grobid-* or --pdf-* value (with
// --grobid or without), the pdfs stage asked for without --grobid, and a
// GROBID service that is not alive each stop curate with exit 2 before
// anything else is requested.
func TestPDFFlagsChecked(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 2, Targets: 3, OpenAccess: &sim.OpenAccess{}}, sim.Options{})
	g := s.URL(sim.GrobidService)
	for _, tt := range []struct {
		flags []string
		msg   string
	}{
		{[]string{"--grobid", "localhost:8070"}, `--grobid "localhost:8070": want an http or https URL`},
		{[]string{"--grobid", g, "--grobid-capacity", "0"}, "--grobid-capacity 0: want 1 or more"},
		{[]string{"--grobid", g, "--grobid-timeout", "0s"}, "--grobid-timeout 0s: want more than 0"},
		{[]string{"--grobid", g, "--pdf-max-size", "0"}, "--pdf-max-size 0: want 1 to"},
		{[]string{"--grobid", g, "--pdf-interval", "0s"}, "--pdf-interval 0s: want more than 0"},
		{[]string{"--grobid", g, "--pdf-hosts", "127.0.0.1"}, `--pdf-hosts: oapdf: new fetcher: allow-list entry "127.0.0.1": an IP address`},
		{[]string{"--grobid", g, "--pdf-hosts", "default,a/b"}, `allow-list entry "a/b"`},
		{[]string{"--grobid", g, "--pdf-hosts", ""}, "empty host allow-list"},
		{[]string{"--stages", "pdfs"}, "the pdfs stage needs --grobid URL"},
		// Checked without --grobid too: a mistake is named now, not on
		// the day --grobid is added.
		{[]string{"--grobid-capacity", "0"}, "--grobid-capacity 0: want 1 or more"},
		{[]string{"--grobid-timeout", "-1s"}, "--grobid-timeout -1s: want more than 0"},
		{[]string{"--pdf-max-size", "0"}, "--pdf-max-size 0: want 1 to"},
		{[]string{"--pdf-interval", "0s"}, "--pdf-interval 0s: want more than 0"},
		{[]string{"--pdf-hosts", "127.0.0.1"}, `--pdf-hosts: oapdf: new fetcher: allow-list entry "127.0.0.1": an IP address`},
	} {
		dir := t.TempDir()
		code, _, stderr := clitest.Run(t, nil, clitest.RunArgs(t, s, dir+"/store", dir+"/out", tt.flags...)...)
		if code != 2 || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.flags, code, stderr, tt.msg)
		}
	}
	if n := s.Requests(); n != 0 {
		t.Errorf("bad flags made %d requests", n)
	}

	s.Grobid().SetAlive(false)
	dir := t.TempDir()
	code, _, stderr := clitest.RunWithPDFNet(t, s, nil, clitest.RunArgs(t, s, dir+"/store", dir+"/out", s.GrobidFlags()...)...)
	if code != 2 || !strings.Contains(stderr, "grobid service is not alive") || !strings.Contains(stderr, "docker run") {
		t.Errorf("GROBID not alive: exit %d, stderr %q", code, stderr)
	}
	for _, name := range sim.Services {
		if n := s.Service(name).Stats().Requests; n != 0 && name != sim.GrobidService {
			t.Errorf("with GROBID down, %s got %d requests", name, n)
		}
	}
}
