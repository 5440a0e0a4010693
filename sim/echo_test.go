package sim_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/sim"
)

// TestEcho: a service in echo mode writes its request's credential
// headers and the planted keys into its errors (every form: as is,
// JSON-escaped, URL-encoded, base64) and into its answers, which stay
// readable in their format.
func TestEcho(t *testing.T) {
	const planted = "sk-PLANTED-echo+key/0123456789"
	const sent = "s2-PLANTED-header-key-0123"
	w := newWorld(t, sim.WorldConfig{Seed: 1, Targets: 5})
	answers := sim.Echo{Keys: []string{planted}, Answers: true}
	errs := sim.Echo{Keys: []string{planted}, Every: 1}
	s := start(t, w, sim.Options{Echo: map[string]sim.Echo{
		sim.Arxiv: answers, sim.S2: answers, sim.ArxivAPI: answers, sim.OAIPMH: answers,
		sim.Ar5iv: errs, sim.LLM: errs, sim.Anthropic: errs, sim.GrobidService: errs,
	}})
	p := w.Target(0)
	tests := []struct {
		name, url string
		status    int
		check     func(body []byte) error // the answer still reads
	}{
		{"arxiv page", s.URL(sim.Arxiv) + "/html/" + p.ArxivID, 200, func(b []byte) error {
			doc, err := latexml.Parse(b, latexml.Options{})
			if err == nil && (doc.Title == nil || *doc.Title != p.Title) {
				err = errors.New("not the paper's title")
			}
			return err
		}},
		{"s2 paper", s.URL(sim.S2) + "/graph/v1/paper/ARXIV:" + p.ArxivID + "?fields=title", 200, func(b []byte) error {
			var v struct{ Title string }
			if err := json.Unmarshal(b, &v); err != nil || v.Title != p.Title {
				return errors.New("not the paper: " + v.Title)
			}
			return nil
		}},
		{"arxiv api", s.URL(sim.ArxivAPI) + "/api/query?id_list=" + p.ArxivID, 200, func(b []byte) error {
			var v struct {
				Entries []struct{ Title string } `xml:"entry"`
			}
			if err := xml.Unmarshal(b, &v); err != nil || len(v.Entries) != 1 {
				return errors.New("no entry")
			}
			return nil
		}},
		{"oai-pmh", s.URL(sim.OAIPMH) + "/oai?verb=ListRecords&metadataPrefix=arXiv", 200, func(b []byte) error {
			return xml.Unmarshal(b, new(struct{}))
		}},
		{"ar5iv error", s.URL(sim.Ar5iv) + "/html/" + p.ArxivID, 400, nil},
		{"llm error", s.URL(sim.LLM) + "/chat/completions", 400, nil},
		{"anthropic error", s.URL(sim.Anthropic) + "/messages", 400, nil},
		{"grobid error", s.URL(sim.GrobidService) + "/api/isalive", 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			req.Header.Set("X-Api-Key", sent)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.status, b)
			}
			for _, f := range []string{sent, planted, url.QueryEscape(planted), base64.StdEncoding.EncodeToString([]byte("curate:" + planted))} {
				if !strings.Contains(string(b), f) && !strings.Contains(resp.Header.Get("X-Echo"), f) {
					t.Errorf("%q not echoed", f)
				}
			}
			if tt.check != nil {
				if err := tt.check(b); err != nil {
					t.Errorf("the echoed answer does not read: %v", err)
				}
			}
		})
	}
}
