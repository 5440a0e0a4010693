package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
)

// The open-access services Start serves beside the others: a PDF host
// the world's open-access URLs point at, a GROBID service converting its
// PDFs, and an internal service that no download of an untrusted URL may
// ever reach.
const (
	PDFHost       = "pdfhost"  // GET /pdf/bJ.pdf
	GrobidService = "grobid"   // GROBID's REST API (see Grobid)
	Internal      = "internal" // counts what reaches it; serves a PDF
)

// Host names of the world's open-access URLs. The services listen on
// 127.0.0.1; PDFNet resolves PDFHostName there and MirrorHostName to a
// private address (a name that looks allowed but leads inside).
const (
	PDFHostName    = "pdfs.sim.test"
	MirrorHostName = "mirror.pdfs.sim.test"
)

// Kinds of hostile open-access URL (OpenAccess.Hostile): each is a paper
// whose PDF a safe downloader must not fetch, or must not keep.
const (
	// PDFLoopback: the URL names 127.0.0.1, the internal service.
	PDFLoopback = "loopback"
	// PDFPrivate: the URL names a private address (10.0.0.7).
	PDFPrivate = "private"
	// PDFMetadata: the URL is a cloud metadata endpoint (169.254.169.254).
	PDFMetadata = "metadata"
	// PDFForeign: the URL's host is on no allow-list.
	PDFForeign = "foreign"
	// PDFRebind: the URL's host (MirrorHostName) resolves to a private
	// address.
	PDFRebind = "rebind"
	// PDFRedirectLoopback: the PDF host answers 302 to the internal
	// service.
	PDFRedirectLoopback = "redirect-loopback"
	// PDFRedirectMetadata: the PDF host answers 302 to 169.254.169.254.
	PDFRedirectMetadata = "redirect-metadata"
	// PDFNotPDF: the PDF host answers an HTML login page.
	PDFNotPDF = "html"
	// PDFOversize: the PDF host answers a PDF of OpenAccess.OversizeBytes.
	PDFOversize = "oversize"
)

// HostileCases lists the hostile URL kinds.
func HostileCases() []string {
	return []string{PDFLoopback, PDFPrivate, PDFMetadata, PDFForeign, PDFRebind,
		PDFRedirectLoopback, PDFRedirectMetadata, PDFNotPDF, PDFOversize}
}

// OpenAccess gives a world's papers without an arXiv page open-access
// PDFs: Semantic Scholar's openAccessPdf names a URL on PDFHostName, the
// PDF host serves a PDF there, and the GROBID service converts it into
// TEI written from the paper's text. Papers on arXiv without HTML keep
// S2's https://arxiv.org/pdf/ID, which the arxiv service serves (GET
// /pdf/ID, in every world).
type OpenAccess struct {
	// Percent is the share of cited papers not on arXiv that have an
	// open-access PDF (default 80); the others are closed. Papers on
	// arXiv have arXiv's.
	Percent int
	// ACLPercent is the share of those that carry an ACL Anthology ID in
	// externalIds (default 30), whose Anthology URL comes first among
	// their candidates.
	ACLPercent int
	// Hostile makes the open-access URL of background papers (by index)
	// one of the hostile kinds (HostileCases).
	Hostile map[int]string
	// OversizeBytes is the size of a PDFOversize answer (default 4 MiB).
	OversizeBytes int
}

// openAccess is where Start serves the open-access services.
type openAccess struct {
	pdfHost  string // host:port of the PDF host's URLs
	internal string // http://127.0.0.1:port of the internal service
}

func (w *World) initOpenAccess() error {
	oa := w.cfg.OpenAccess
	if oa == nil {
		return nil
	}
	if oa.Percent == 0 {
		oa.Percent = 80
	}
	if oa.ACLPercent == 0 {
		oa.ACLPercent = 30
	}
	if oa.OversizeBytes == 0 {
		oa.OversizeBytes = 4 << 20
	}
	if oa.Percent < 0 || oa.Percent > 100 || oa.ACLPercent < 0 || oa.ACLPercent > 100 {
		return fmt.Errorf("sim: open access %d%%, ACL %d%%: want 0 to 100", oa.Percent, oa.ACLPercent)
	}
	for j, c := range oa.Hostile {
		if j < 0 || j >= w.cfg.Papers {
			return fmt.Errorf("sim: hostile PDF of paper %d out of range", j)
		}
		known := false
		for _, k := range HostileCases() {
			known = known || k == c
		}
		if !known {
			return fmt.Errorf("sim: hostile PDF %q: want one of %s", c, strings.Join(HostileCases(), ", "))
		}
	}
	cp := *oa
	w.cfg.OpenAccess = &cp
	return nil
}

// PDFCase returns what the world serves as p's open-access PDF: "" when
// it has none, "pdf" for a PDF GROBID converts, or a hostile kind.
func (w *World) PDFCase(p *Paper) string {
	oa := w.cfg.OpenAccess
	if oa == nil || p.HTML != HTMLNone {
		return ""
	}
	if p.ArxivID != "" {
		return "pdf"
	}
	if c, ok := oa.Hostile[p.Index]; ok && p.Kind == kindBackground {
		return c
	}
	if w.rng("oa", p.Kind, p.Index).IntN(100) >= oa.Percent {
		return ""
	}
	return "pdf"
}

// HasPDF reports whether p has an open-access PDF that a safe pipeline
// can download and convert.
func (w *World) HasPDF(p *Paper) bool { return w.PDFCase(p) == "pdf" }

// ACLID returns p's ACL Anthology ID, "" when it has none.
func (w *World) ACLID(p *Paper) string {
	oa := w.cfg.OpenAccess
	if oa == nil || p.ArxivID != "" || p.Kind != kindBackground || w.rng("acl", p.Index).IntN(100) >= oa.ACLPercent {
		return ""
	}
	return fmt.Sprintf("W%02d-%04d", p.Year()%100, p.Index%10000)
}

// PDFPath is the path of the open-access PDF of p, a paper not on arXiv,
// on the PDF host.
func PDFPath(p *Paper) string { return fmt.Sprintf("/pdf/b%d.pdf", p.Index) }

// openAccessPDF sets S2's openAccessPdf of a paper not on arXiv, and its
// ACL ID in ext, in an open-access world that Start serves; ok is false
// otherwise.
func (w *World) openAccessPDF(p *Paper, ext *S2ExternalIDs) (oa *S2OpenAccessPDF, ok bool) {
	c := w.PDFCase(p)
	if c == "" || w.oa == nil || p.ArxivID != "" {
		return nil, false
	}
	if id := w.ACLID(p); id != "" {
		ext.ACL = id
	}
	base := "http://" + w.oa.pdfHost
	url := base + PDFPath(p)
	switch c {
	case PDFLoopback:
		url = w.oa.internal + "/secret.pdf"
	case PDFPrivate:
		url = "http://10.0.0.7/b.pdf"
	case PDFMetadata:
		url = "http://169.254.169.254/latest/meta-data/"
	case PDFForeign:
		url = "https://pdfs.example.net" + PDFPath(p)
	case PDFRebind:
		_, port, _ := net.SplitHostPort(w.oa.pdfHost)
		url = "http://" + net.JoinHostPort(MirrorHostName, port) + PDFPath(p)
	}
	r := w.rng("oa-licence", p.Kind, p.Index)
	status, license := pick(r, []string{"GOLD", "GREEN", "HYBRID", "BRONZE"}), ptr(pick(r, []string{"CCBY", "CCBYNC", "CCBYSA"}))
	if status == "BRONZE" {
		license = nil
	}
	return &S2OpenAccessPDF{URL: url, Status: &status, License: license}, true
}

// simPDFMarker opens the comment that names the paper a simulated PDF is
// of, which the simulated GROBID reads.
const simPDFMarker = "%sim-paper "

// PDF returns p's PDF as the PDF host serves it: a small PDF whose page
// carries the title, and a comment naming the paper.
func (w *World) PDF(p *Paper) []byte {
	id := p.ArxivID
	if id == "" {
		id = "b" + strconv.Itoa(p.Index)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-1.5\n%s%s seed %d\n", simPDFMarker, id, w.cfg.Seed)
	text := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(p.Title)
	stream := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
	fmt.Fprintf(&b, "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n")
	fmt.Fprintf(&b, "3 0 obj << /Type /Page /Parent 2 0 R /Contents 4 0 R >> endobj\n4 0 obj << /Length %d >> stream\n%s\nendstream endobj\n", len(stream), stream)
	b.WriteString("trailer << /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

var rePDFPath = regexp.MustCompile(`^/pdf/b(\d+)\.pdf$`)

// paperOfPath returns the paper whose PDF is at path on the PDF host.
func (w *World) paperOfPath(path string) (Paper, bool) {
	m := rePDFPath.FindStringSubmatch(path)
	if m == nil {
		return Paper{}, false
	}
	j, err := strconv.Atoi(m[1])
	if err != nil {
		return Paper{}, false
	}
	p, ok := w.byKind(kindBackground, j)
	return p, ok && p.ArxivID == ""
}

// arxivPDF serves arxiv.org/pdf/ID: the PDF of any version of a paper on
// arXiv, HTML or not, as arXiv does; 404 for an unknown ID.
func (w *World) arxivPDF(rw http.ResponseWriter, id string) {
	id = strings.TrimSuffix(id, ".pdf")
	p, ok := w.ByArxiv(id)
	if ok {
		// A version asked for is that version's PDF.
		if a, err := arxiv.Parse(id); err == nil && a.Version > 0 && a.Version != p.Version {
			p, ok = p.AsOf(a.Version)
		}
	}
	if !ok {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.WriteHeader(http.StatusNotFound)
		io.WriteString(rw, "<html><body>Paper not found</body></html>\n")
		return
	}
	writeBody(rw, "application/pdf", w.PDF(&p))
}

// pdfAnswer is what the world's PDF host answers at path: a paper's PDF,
// or what its hostile kind serves.
func (w *World) pdfAnswer(path string) (PDFAnswer, bool) {
	p, ok := w.paperOfPath(path)
	if !ok || w.oa == nil {
		return PDFAnswer{}, false
	}
	switch w.PDFCase(&p) {
	case "pdf", PDFRebind, PDFForeign:
		return PDFAnswer{Body: w.PDF(&p)}, true
	case PDFRedirectLoopback:
		return PDFAnswer{Status: http.StatusFound, Location: w.oa.internal + "/secret.pdf"}, true
	case PDFRedirectMetadata:
		return PDFAnswer{Status: http.StatusFound, Location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/"}, true
	case PDFNotPDF:
		return LoginPage, true
	case PDFOversize:
		pdf := w.PDF(&p)
		return PDFAnswer{Body: append(pdf[:len(pdf):len(pdf)], bytes.Repeat([]byte("%"), w.cfg.OpenAccess.OversizeBytes)...)}, true
	}
	return PDFAnswer{}, false
}

// internalSite is a service inside the network: whatever reaches it is a
// breach, which its call log shows; it answers every path with a PDF so
// that a breach would not go unnoticed as a failed download.
func internalSite() *PDFSite {
	s := NewPDFSite()
	s.find = func(string) (PDFAnswer, bool) {
		return PDFAnswer{Body: []byte("%PDF-1.4\n% internal document\n%%EOF\n")}, true
	}
	return s
}

// convertPDF is the simulated GROBID's conversion: the TEI of the paper
// a simulated PDF names, written from its text.
func (w *World) convertPDF(version string) func(pdf []byte) ([]byte, error) {
	return func(pdf []byte) ([]byte, error) {
		head := pdf[:min(len(pdf), 1024)]
		i := bytes.Index(head, []byte(simPDFMarker))
		if i < 0 {
			return nil, fmt.Errorf("[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1")
		}
		rest := head[i+len(simPDFMarker):]
		id, _, _ := bytes.Cut(rest, []byte(" "))
		var p Paper
		ok := false
		if j, err := strconv.Atoi(strings.TrimPrefix(string(id), "b")); err == nil && id[0] == 'b' {
			p, ok = w.byKind(kindBackground, j)
		} else {
			p, ok = w.ByArxiv(string(id))
		}
		if !ok {
			return nil, ErrGrobidNoContent
		}
		return w.TEI(&p, version), nil
	}
}

// setOpenAccess tells the world where its open-access URLs point.
func (s *Servers) setOpenAccess() {
	host := strings.TrimPrefix(s.urls[PDFHost], "http://")
	_, port, _ := net.SplitHostPort(host)
	s.World.oa = &openAccess{pdfHost: net.JoinHostPort(PDFHostName, port), internal: s.urls[Internal]}
}

// Grobid returns the simulated GROBID service's state: its calls, what it
// converts, whether it is busy.
func (s *Servers) Grobid() *Grobid { return s.grobid }

// PDFHosts returns the allow-list entries of the PDF host's names
// (host:port), as curate's --pdf-hosts takes them.
func (s *Servers) PDFHosts() []string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.urls[PDFHost], "http://"))
	return []string{net.JoinHostPort(PDFHostName, port), net.JoinHostPort(MirrorHostName, port)}
}

// GrobidFlags returns the curate flags that convert open-access PDFs
// through the simulated services: --grobid and --pdf-hosts. The
// downloader must also resolve the PDF host's names (see PDFNet).
func (s *Servers) GrobidFlags() []string {
	return []string{"--grobid", s.URL(GrobidService), "--pdf-hosts", strings.Join(s.PDFHosts(), ",")}
}

// PDFNet returns how a downloader reaches the PDF host: a resolver that
// maps PDFHostName to 127.0.0.1, MirrorHostName to 10.0.0.7 and nothing
// else, and the one loopback address it may dial.
func (s *Servers) PDFNet() (resolve func(ctx context.Context, host string) ([]netip.Addr, error), permit netip.Addr) {
	loop := netip.MustParseAddr("127.0.0.1")
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		switch strings.ToLower(host) {
		case PDFHostName:
			return []netip.Addr{loop}, nil
		case MirrorHostName:
			return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}, loop
}
