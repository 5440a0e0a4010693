package conformance

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// The GROBID invariants, from its REST service's documentation and code
// (docs/notes/grobid.md): GET /api/isalive answers 200 text/plain "true"
// or "false"; GET /api/version the bare version as text/plain before
// 0.8.2, JSON {"version", "revision"} from 0.8.2 on; POST or PUT
// /api/processFulltextDocument takes multipart/form-data with the PDF as
// "input" and answers 200 application/xml with the TEI, 204 without a body
// when nothing could be extracted, 500 with the exception's message when
// the conversion fails, 503 with an empty body when no engine frees up;
// a body that is not multipart is 415 (Jersey's @Consumes), another
// method 405; the TEI is rooted at TEI in the TEI namespace, names GROBID
// and its version in teiHeader's appInfo, and every in-text citation
// points at a biblStruct of the bibliography, numbered b0, b1, ...

// teiNS is the TEI namespace.
const teiNS = "http://www.tei-c.org/ns/1.0"

// TEIInfo is what CheckGrobidTEI reads of a TEI document.
type TEIInfo struct {
	// Version is the GROBID version that wrote it (appInfo's application).
	Version string
	// BiblStructs counts the bibliography's entries (listBibl), Citations
	// the in-text citations that point at one (ref type="bibr" with a
	// target).
	BiblStructs, Citations int
}

var reBiblID = regexp.MustCompile(`^b(\d+)$`)

// CheckGrobidTEI checks an answer of processFulltextDocument with status
// 200 and returns what it read of the TEI.
func CheckGrobidTEI(status int, contentType string, body []byte) (*TEIInfo, error) {
	if status != 200 {
		return nil, fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	if !strings.HasPrefix(contentType, "application/xml") {
		return nil, fmt.Errorf("Content-Type %q, want application/xml", contentType)
	}
	info := &TEIInfo{}
	var errs []error
	d := xml.NewDecoder(bytes.NewReader(body))
	var path []string // local names of the open elements
	ids := map[string]bool{}
	var targets []string
	header, text, app := false, false, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("TEI: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(path) == 0 && (t.Name.Space != teiNS || t.Name.Local != "TEI") {
				return nil, fmt.Errorf("root element {%s}%s, want {%s}TEI", t.Name.Space, t.Name.Local, teiNS)
			}
			path = append(path, t.Name.Local)
			in := strings.Join(path, "/")
			switch {
			case in == "TEI/teiHeader":
				header = true
			case in == "TEI/text":
				text = true
			case in == "TEI/teiHeader/encodingDesc/appInfo/application" && attr(t, "ident") == "GROBID":
				app, info.Version = true, attr(t, "version")
			case t.Name.Local == "biblStruct" && strings.HasSuffix(in, "/listBibl/biblStruct"):
				id := attr(t, "id")
				if m := reBiblID.FindStringSubmatch(id); m == nil || m[1] != fmt.Sprint(info.BiblStructs) {
					errs = append(errs, fmt.Errorf("bibliography entry %d has xml:id %q, want b%d", info.BiblStructs, id, info.BiblStructs))
				}
				ids[id] = true
				info.BiblStructs++
			case t.Name.Local == "ref" && attr(t, "type") == "bibr":
				if tg := attr(t, "target"); tg != "" {
					targets = append(targets, tg)
				}
			}
		case xml.EndElement:
			path = path[:len(path)-1]
		}
	}
	if !header || !text {
		errs = append(errs, fmt.Errorf("teiHeader %v, text %v: want both", header, text))
	}
	if !app || info.Version == "" {
		errs = append(errs, errors.New("no application ident=\"GROBID\" with a version in teiHeader/encodingDesc/appInfo"))
	}
	for _, tg := range targets {
		if !strings.HasPrefix(tg, "#") || !ids[tg[1:]] {
			errs = append(errs, fmt.Errorf("citation target %q names no bibliography entry", tg))
			break
		}
	}
	info.Citations = len(targets)
	return info, errors.Join(errs...)
}

// attr returns the value of the attribute with the local name (xml:id is
// "id").
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// CheckGrobidVersion checks an answer of /api/version and returns the
// version it gives: text before 0.8.2, JSON from then on.
func CheckGrobidVersion(status int, contentType string, body []byte) (string, error) {
	if status != 200 {
		return "", fmt.Errorf("status %d, want 200", status)
	}
	switch {
	case strings.HasPrefix(contentType, "application/json"):
		var v struct {
			Version  *string `json:"version"`
			Revision *string `json:"revision"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Version == nil || v.Revision == nil {
			return "", fmt.Errorf("version JSON %s: want {\"version\", \"revision\"}", truncate(body))
		}
		if !atLeast(*v.Version, 0, 8, 2) {
			return *v.Version, fmt.Errorf("version %s answers JSON, which only 0.8.2 and later do", *v.Version)
		}
		return *v.Version, nil
	case strings.HasPrefix(contentType, "text/plain"):
		v := string(body)
		if v == "" || strings.ContainsAny(v, " \n{") {
			return "", fmt.Errorf("version text %q: want the bare version", truncate(body))
		}
		if atLeast(v, 0, 8, 2) {
			return v, fmt.Errorf("version %s answers text, which only versions before 0.8.2 do", v)
		}
		return v, nil
	}
	return "", fmt.Errorf("Content-Type %q, want text/plain or application/json", contentType)
}

// atLeast reports whether version v (major.minor.patch, any suffix
// after a '-') is at least a.b.c.
func atLeast(v string, a, b, c int) bool {
	var n [3]int
	fmt.Sscanf(strings.SplitN(v, "-", 2)[0], "%d.%d.%d", &n[0], &n[1], &n[2])
	for i, w := range [3]int{a, b, c} {
		if n[i] != w {
			return n[i] > w
		}
	}
	return true
}

// fulltext sends pdf to processFulltextDocument with method, as curate's
// client sends it (segmentSentences and includeRawCitations on).
func fulltext(t *testing.T, method, base string, pdf []byte) response {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("input", "paper.pdf")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(pdf)
	mw.WriteField("segmentSentences", "1")
	mw.WriteField("includeRawCitations", "1")
	mw.Close()
	req, err := http.NewRequest(method, base+sim.GrobidFulltextPath, &b)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, sim.GrobidFulltextPath, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, body}
}

// TestGrobidAlive asks /api/isalive, and posts to it.
func (s *Suite) TestGrobidAlive(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	r := get(t, base+sim.GrobidIsAlivePath)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") || string(r.body) != "true" && string(r.body) != "false" {
		t.Errorf("isalive: %d %q %q, want 200 text/plain true or false", r.status, r.header.Get("Content-Type"), truncate(r.body))
	}
	if r := do(t, http.MethodPost, base+sim.GrobidIsAlivePath, "x"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST isalive: %d, want 405", r.status)
	}
}

// TestGrobidVersion asks /api/version.
func (s *Suite) TestGrobidVersion(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	if s.GrobidVersion == "" {
		t.Skip("the backend names no GROBID version (GrobidVersion)")
	}
	r := get(t, base+sim.GrobidVersionPath)
	v, err := CheckGrobidVersion(r.status, r.header.Get("Content-Type"), r.body)
	if err != nil || v != s.GrobidVersion {
		t.Errorf("version: %q, %v; want %s", v, err, s.GrobidVersion)
	}
}

// TestGrobidFulltext converts each PDF by POST and by PUT: the same TEI,
// of the service's version.
func (s *Suite) TestGrobidFulltext(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	need(t, "PDFs GROBID converts (GrobidTEI)", s.GrobidTEI)
	for i, pdf := range s.GrobidTEI {
		r := fulltext(t, http.MethodPost, base, pdf)
		info, err := CheckGrobidTEI(r.status, r.header.Get("Content-Type"), r.body)
		if err != nil {
			t.Errorf("PDF %d: %v", i, err)
			continue
		}
		if s.GrobidVersion != "" && info.Version != s.GrobidVersion {
			t.Errorf("PDF %d: TEI of GROBID %s, the service runs %s", i, info.Version, s.GrobidVersion)
		}
		if p := fulltext(t, http.MethodPut, base, pdf); p.status != 200 || !bytes.Equal(p.body, r.body) {
			t.Errorf("PUT PDF %d: %d, %d bytes; want the POST's 200 and %d bytes", i, p.status, len(p.body), len(r.body))
		}
	}
}

// TestGrobidNoContent: a PDF nothing can be extracted from is 204
// without a body.
func (s *Suite) TestGrobidNoContent(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	need(t, "PDFs without content (GrobidNoContent)", s.GrobidNoContent)
	for i, pdf := range s.GrobidNoContent {
		if r := fulltext(t, http.MethodPost, base, pdf); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Errorf("PDF %d: %d with %d bytes, want 204 without a body", i, r.status, len(r.body))
		}
	}
}

// TestGrobidFailures: a conversion that fails is 500 with its message;
// so is a body that is no PDF, with BAD_INPUT_DATA.
func (s *Suite) TestGrobidFailures(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	probes := append(append([][]byte(nil), s.GrobidFails...), []byte("<html>no PDF</html>"))
	for i, pdf := range probes {
		r := fulltext(t, http.MethodPost, base, pdf)
		if r.status != http.StatusInternalServerError || len(r.body) == 0 {
			t.Errorf("PDF %d: %d %q, want 500 with the error's message", i, r.status, truncate(r.body))
		}
		if i == len(probes)-1 && !bytes.Contains(r.body, []byte("BAD_INPUT_DATA")) {
			t.Errorf("no PDF: %q, want a BAD_INPUT_DATA message", truncate(r.body))
		}
	}
}

// TestGrobidBusy: when every engine is taken, 503 with an empty body.
func (s *Suite) TestGrobidBusy(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	if s.GrobidBusy == nil || len(s.GrobidTEI) == 0 {
		t.Skip("the backend cannot be made busy (GrobidBusy) or converts no PDF")
	}
	s.GrobidBusy(1)
	if r := fulltext(t, http.MethodPost, base, s.GrobidTEI[0]); r.status != http.StatusServiceUnavailable || len(r.body) != 0 {
		t.Errorf("busy: %d with %d bytes, want 503 without a body", r.status, len(r.body))
	}
	if r := fulltext(t, http.MethodPost, base, s.GrobidTEI[0]); r.status != 200 {
		t.Errorf("after the busy spell: %d, want 200", r.status)
	}
}

// TestGrobidRefusals: a body that is not multipart is 415; GET of the
// conversion 405; a path the service has not 404.
func (s *Suite) TestGrobidRefusals(t *testing.T) {
	base := s.url(t, sim.GrobidService)
	if r := do(t, http.MethodPost, base+sim.GrobidFulltextPath, `{"input": "x"}`); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body: %d, want 415", r.status)
	}
	if r := get(t, base+sim.GrobidFulltextPath); r.status != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", sim.GrobidFulltextPath, r.status)
	}
	if r := get(t, base+"/api/processNothing"); r.status != http.StatusNotFound {
		t.Errorf("GET /api/processNothing: %d, want 404", r.status)
	}
}
