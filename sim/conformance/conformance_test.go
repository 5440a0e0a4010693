package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
	"github.com/groundwork/curate/sim/simtest"
)

// notFoundID is the id of the recorded 404.
const notFoundID = "DOI:10.1101/2024.04.01.587366"

// TestRecordedFixtures holds the suite's checks to what the real services
// answered: every recorded response of ../shared/fixtures passes them.
func TestRecordedFixtures(t *testing.T) {
	pages := []struct {
		file          string
		fields        string
		offset, limit int
		edges, next   int
	}{
		{simtest.FileReferencesPage1, simtest.RecordedFields, 0, 100, 100, 100},
		{simtest.FileReferencesLastPage, simtest.RecordedFields, 100, 100, 56, -1},
		{simtest.FileReferencesMinimal, "title", 0, 50, 50, 50},
	}
	for _, p := range pages {
		edges, next, err := conformance.CheckS2ReferencesPage(p.fields, p.offset, p.limit, 200, simtest.S2Fixture(t, p.file))
		if err != nil || len(edges) != p.edges || next != p.next {
			t.Errorf("%s: %d edges, next %d, %v; the manifest says %d edges, next %d", p.file, len(edges), next, err, p.edges, p.next)
		}
	}
	if err := conformance.CheckS2Paper(simtest.RecordedPaperID, simtest.RecordedPaperFields, 200, simtest.S2Fixture(t, simtest.FilePaper)); err != nil {
		t.Errorf("%s: %v", simtest.FilePaper, err)
	}
	known := []bool{false, true, true, true} // S2 did not know the first
	if err := conformance.CheckS2Batch(simtest.RecordedBatchIDs, known, simtest.RecordedBatchFields, 200, simtest.S2Fixture(t, simtest.FileBatch)); err != nil {
		t.Errorf("%s: %v", simtest.FileBatch, err)
	}
	if err := conformance.CheckS2Error(404, conformance.S2NotFound(notFoundID), 404, simtest.S2Fixture(t, simtest.File404)); err != nil {
		t.Errorf("%s: %v", simtest.File404, err)
	}
	if err := conformance.CheckS2Error(400, conformance.S2UnknownFields("unknown"), 400, simtest.S2Fixture(t, simtest.File400)); err != nil {
		t.Errorf("%s: %v", simtest.File400, err)
	}
	// (reference_item_ and citation_item_*.json are a client's test data,
	// not answers: their key order is the client's.)

	// Every recorded arXiv and ar5iv page is a page as the suite sees one.
	dir := fixtures.Dir(t, "arxiv-html")
	_, ids := simtest.FixtureCorpus(t)
	n := 0
	for _, files := range [][]string{glob(t, dir, "arxiv-*.html"), glob(t, dir, "ar5iv-*.html")} {
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := conformance.CheckArxivPage(b); err != nil {
				t.Errorf("%s: %v", filepath.Base(f), err)
			}
			n++
		}
	}
	if n != len(ids[sim.HTMLArxiv])+len(ids[sim.HTMLAr5iv]) || n == 0 {
		t.Errorf("%d pages checked, the manifest names %d", n, len(ids[sim.HTMLArxiv])+len(ids[sim.HTMLAr5iv]))
	}
}

func glob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConformanceFixtures runs the suite on the recorded fixtures served
// by sim: the real pages and S2 responses, answered by the one
// implementation of each protocol.
func TestConformanceFixtures(t *testing.T) {
	c, pages := simtest.FixtureCorpus(t)
	s := &conformance.Suite{
		Start: func(t *testing.T) map[string]string {
			urls := map[string]string{}
			for _, name := range []string{sim.Arxiv, sim.Ar5iv, sim.S2} {
				urls[name] = simtest.Serve(t, name, c).URL
			}
			return urls
		},
		ArxivPages:  pages[sim.HTMLArxiv],
		ArxivNoHTML: pages[sim.HTMLAr5iv], // ar5iv has them, arXiv has no HTML
		Ar5ivPages:  pages[sim.HTMLAr5iv],
		Ar5ivLacks:  pages[sim.HTMLArxiv], // arXiv has them, ar5iv lacks them
		S2Papers:    append([]string{simtest.RecordedPaperID}, simtest.RecordedBatchIDs[1:]...),
		S2Lists:     []string{simtest.RecordedReferencesID, simtest.RecordedMinimalID},
		S2Unknown:   []string{notFoundID, simtest.RecordedBatchIDs[0]},
	}
	s.RunTests(t)
}

// TestSuiteFails checks that the suite can fail: a backend answering the
// recorded page with a wrong next is caught.
func TestSuiteFails(t *testing.T) {
	body := simtest.S2Fixture(t, simtest.FileReferencesPage1)
	var page map[string]json.RawMessage
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(map[string]json.RawMessage)
	}{
		{"next off by one", func(p map[string]json.RawMessage) { p["next"] = json.RawMessage("101") }},
		{"offset not echoed", func(p map[string]json.RawMessage) { p["offset"] = json.RawMessage("5") }},
		{"data null without disclaimer", func(p map[string]json.RawMessage) { p["data"] = json.RawMessage("null"); delete(p, "next") }},
	} {
		p := maps(page)
		tc.change(p)
		b, _ := json.Marshal(p)
		if _, _, err := conformance.CheckS2ReferencesPage(simtest.RecordedFields, 0, 100, 200, b); err == nil {
			t.Errorf("%s: the check passes", tc.name)
		}
	}
	// An edge with a field not asked for.
	if _, _, err := conformance.CheckS2ReferencesPage("title", 0, 100, 200, body); err == nil {
		t.Error("a page with every field passes as the answer to fields=title")
	}
	if err := conformance.CheckS2Batch(simtest.RecordedBatchIDs, []bool{true, true, true, true}, simtest.RecordedBatchFields, 200, simtest.S2Fixture(t, simtest.FileBatch)); err == nil {
		t.Error("a null element for a known id passes")
	}
	if err := conformance.CheckS2Error(404, "Paper with id X not found", 404, []byte(`{"error": "Paper with id X not found"}`)); err == nil {
		t.Error("an error body without the trailing newline, spaced, passes")
	}
	if err := conformance.CheckArxivPage([]byte("<html><body>No content</body></html>")); err == nil {
		t.Error("a page without LaTeXML markup passes")
	}
	// Citations pages S2 would not send.
	for name, body := range map[string]string{
		"citedPaper nested":  `{"offset":0,"data":[{"citedPaper":{"paperId":"0123456789012345678901234567890123456789","title":"T"}}]}`,
		"null citingPaper":   `{"offset":0,"data":[{"citingPaper":null}]}`,
		"data null":          `{"offset":0,"data":null}`,
		"next on a lone one": `{"offset":0,"next":5,"data":[{"citingPaper":{"paperId":"0123456789012345678901234567890123456789","title":"T"}}]}`,
	} {
		if _, _, err := conformance.CheckS2CitationsPage("", 0, 10, 200, []byte(body)); err == nil {
			t.Errorf("a citations page with %s passes", name)
		}
	}
	if _, _, err := conformance.CheckS2CitationsPage("", 0, 10, 200, []byte(`{"offset":0,"data":[{"citingPaper":{"paperId":"0123456789012345678901234567890123456789","title":"T"}}]}`)); err != nil {
		t.Errorf("a good citations page fails: %v", err)
	}
	// arXivRaw histories the repository would not send.
	raw := func(versions string) []byte {
		return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-07-01T00:00:00Z</responseDate><request>https://oaipmh.arxiv.org/oai</request>
<ListRecords><record><header><identifier>oai:arXiv.org:2603.00001</identifier><datestamp>2026-03-04</datestamp></header>
<metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>2603.00001</id>` + versions + `<title>T</title></arXivRaw></metadata></record></ListRecords></OAI-PMH>`)
	}
	if _, err := conformance.CheckOAIResponse(200, raw(`<version version="v1"><date>Mon, 02 Mar 2026 18:00:01 GMT</date></version>`)); err != nil {
		t.Errorf("a good history fails: %v", err)
	}
	for name, versions := range map[string]string{
		"no versions":   ``,
		"no v1":         `<version version="v2"><date>Mon, 02 Mar 2026 18:00:01 GMT</date></version>`,
		"a gap":         `<version version="v1"><date>Mon, 02 Mar 2026 18:00:01 GMT</date></version><version version="v3"><date>Tue, 03 Mar 2026 18:00:01 GMT</date></version>`,
		"a day":         `<version version="v1"><date>2026-03-02</date></version>`,
		"the zone UTC":  `<version version="v1"><date>Mon, 02 Mar 2026 18:00:01 UTC</date></version>`,
		"dates reverse": `<version version="v1"><date>Tue, 03 Mar 2026 18:00:01 GMT</date></version><version version="v2"><date>Mon, 02 Mar 2026 18:00:01 GMT</date></version>`,
	} {
		if _, err := conformance.CheckOAIResponse(200, raw(versions)); err == nil {
			t.Errorf("arXivRaw with %s passes", name)
		}
	}
}

func maps(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}
