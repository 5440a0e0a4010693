package sim_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/sim"
)

var (
	pdfA = []byte("%PDF-1.7\n% paper A\n%%EOF\n")
	pdfB = []byte("%PDF-1.4\n% paper B, nothing to extract\n%%EOF\n")
	pdfC = []byte("%PDF-1.5\n% paper C, conversion fails\n%%EOF\n")
	teiA = []byte(`<?xml version="1.0" encoding="UTF-8"?><TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/><text/></TEI>`)
)

// fulltextBody builds a multipart body as GROBID's clients send it.
func fulltextBody(t *testing.T, input []byte, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if input != nil {
		fw, err := mw.CreateFormFile("input", "paper.pdf")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(input)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

func post(t *testing.T, url, ctype string, body []byte) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url+sim.GrobidFulltextPath, ctype, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestGrobidProtocol(t *testing.T) {
	g := sim.NewGrobid(sim.GrobidConfig{})
	g.Add(pdfA, teiA)
	g.AddNoContent(pdfB)
	g.AddFailure(pdfC, "[TIMEOUT] Processing timeout")
	srv := httptest.NewServer(g)
	defer srv.Close()

	if resp, body := get(t, srv.URL+sim.GrobidIsAlivePath); resp.StatusCode != 200 || body != "true" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("isalive = %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	if resp, body := get(t, srv.URL+sim.GrobidVersionPath); resp.StatusCode != 200 || body != "0.8.1" {
		t.Errorf("version = %d %q, want the bare 0.8.1", resp.StatusCode, body)
	}

	fields := map[string]string{"consolidateHeader": "1", "consolidateCitations": "0", "includeRawCitations": "1", "segmentSentences": "1"}
	cases := []struct {
		name   string
		ctype  string
		body   []byte
		status int
		want   string // body
		ctResp string
	}{
		{"tei", "", nil, 200, string(teiA), "application/xml; charset=UTF-8"},
		{"no content", "", nil, 204, "", ""},
		{"conversion fails", "", nil, 500, "[TIMEOUT] Processing timeout", "text/plain"},
		{"not a pdf", "", nil, 500, "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1", "text/plain"},
		{"no input part", "", nil, 500, "", ""},
		{"not multipart", "application/x-www-form-urlencoded", []byte("input=x"), 415, "HTTP 415 Unsupported Media Type", "text/plain"},
		{"broken multipart", "multipart/form-data; boundary=xyz", []byte("--xyz\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n%PDF-"), 400, "HTTP 400 Bad Request", "text/plain"},
		{"start not an integer", "", nil, 400, "HTTP 400 Bad Request", "text/plain"},
	}
	inputs := map[string][]byte{"tei": pdfA, "no content": pdfB, "conversion fails": pdfC, "not a pdf": []byte("<html>"), "start not an integer": pdfA}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := c.ctype, c.body
			if ctype == "" {
				f := fields
				if c.name == "start not an integer" {
					f = map[string]string{"start": "first"}
				}
				ctype, body = fulltextBody(t, inputs[c.name], f)
			}
			resp, got := post(t, srv.URL, ctype, body)
			if resp.StatusCode != c.status || string(got) != c.want || resp.Header.Get("Content-Type") != c.ctResp {
				t.Errorf("got %d %q (%q), want %d %q (%q)", resp.StatusCode, got, resp.Header.Get("Content-Type"), c.status, c.want, c.ctResp)
			}
		})
	}

	calls := g.Calls()
	first := calls[2] // after isalive and version
	sum := sha256.Sum256(pdfA)
	if first.InputName != "paper.pdf" || first.InputSHA256 != hex.EncodeToString(sum[:]) || first.InputBytes != len(pdfA) ||
		strings.Join(first.Form["segmentSentences"], "") != "1" || strings.Join(first.Form["includeRawCitations"], "") != "1" {
		t.Errorf("call not recorded as sent: %+v", first)
	}

	if resp, _ := get(t, srv.URL+sim.GrobidFulltextPath); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET fulltext = %d, want 405", resp.StatusCode)
	}
	if resp, _ := get(t, srv.URL+"/api/nothing"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path = %d, want 404", resp.StatusCode)
	}
	g.SetAlive(false)
	if _, body := get(t, srv.URL+sim.GrobidIsAlivePath); body != "false" {
		t.Errorf("isalive after SetAlive(false) = %q", body)
	}
}

func TestGrobidVersionJSON(t *testing.T) {
	srv := httptest.NewServer(sim.NewGrobid(sim.GrobidConfig{Version: "0.8.2"}))
	defer srv.Close()
	resp, body := get(t, srv.URL+sim.GrobidVersionPath)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"version":"0.8.2"`) {
		t.Errorf("version = %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestGrobidBusy checks the 503 of an exhausted engine pool: with one
// engine taken, the next request waits PoolMaxWait and gets 503 with an
// empty body; SetBusy scripts the same.
func TestGrobidBusy(t *testing.T) {
	release := make(chan struct{})
	g := sim.NewGrobid(sim.GrobidConfig{
		Concurrency: 1,
		PoolMaxWait: 20 * time.Millisecond,
		Convert: func(pdf []byte) ([]byte, error) {
			<-release
			return teiA, nil
		},
	})
	srv := httptest.NewServer(g)
	defer srv.Close()

	done := make(chan int)
	go func() {
		ctype, body := fulltextBody(t, pdfA, nil)
		resp, err := http.Post(srv.URL+sim.GrobidFulltextPath, ctype, bytes.NewReader(body))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	for g.MaxInFlight() < 1 { // the first request holds the only engine
		time.Sleep(time.Millisecond)
	}
	ctype, body := fulltextBody(t, pdfB, nil)
	resp, got := post(t, srv.URL, ctype, body)
	if resp.StatusCode != http.StatusServiceUnavailable || len(got) != 0 {
		t.Errorf("second request with the pool taken = %d %q, want 503 and no body", resp.StatusCode, got)
	}
	close(release)
	if status := <-done; status != 200 {
		t.Errorf("first request = %d, want 200", status)
	}

	g.SetBusy(2)
	for i, want := range []int{503, 503, 200} {
		ctype, body := fulltextBody(t, pdfA, nil)
		if resp, _ := post(t, srv.URL, ctype, body); resp.StatusCode != want {
			t.Errorf("request %d after SetBusy(2) = %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if g.MaxInFlight() != 1 {
		t.Errorf("max in flight %d, want 1 (the pool size)", g.MaxInFlight())
	}
}

// TestGrobidServesRecordedTEI serves the real recorded TEI files.
func TestGrobidServesRecordedTEI(t *testing.T) {
	dir := fixtures.Dir(t, "grobid-tei")
	files, _ := filepath.Glob(filepath.Join(dir, "*.tei.xml"))
	if len(files) == 0 {
		testneeds.Skip(t, testneeds.Fixtures, "no TEI fixtures in %s", dir)
	}
	g := sim.NewGrobid(sim.GrobidConfig{})
	pdfs := map[string][]byte{}
	for _, f := range files {
		tei, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pdf := []byte("%PDF-1.7\n% " + filepath.Base(f) + "\n")
		g.Add(pdf, tei)
		pdfs[f] = pdf
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	for f, pdf := range pdfs {
		ctype, body := fulltextBody(t, pdf, nil)
		resp, got := post(t, srv.URL, ctype, body)
		want, _ := os.ReadFile(f)
		if resp.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Errorf("%s: status %d, %d bytes; want 200 and the recorded %d bytes", filepath.Base(f), resp.StatusCode, len(got), len(want))
		}
	}
}
