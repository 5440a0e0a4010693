package simtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/sim"
)

// Recorded Semantic Scholar responses in ../shared/fixtures/s2 (see its
// MANIFEST.tsv).
const (
	// RecordedReferencesID is the paper whose reference list was recorded
	// in two pages of limit 100: 156 edges, 9 of them unresolved.
	RecordedReferencesID = "CorpusId:1033682"
	// RecordedPaperID is the id the recorded /paper response was asked
	// for: an arXiv paper addressed by its arXiv DOI.
	RecordedPaperID = "DOI:10.48550/arxiv.2312.07559"
	// RecordedMinimalID is the paper (a bare DOI) whose first page of
	// references was recorded with fields=title and limit 50.
	RecordedMinimalID = "10.2139/ssrn.2250500"

	FileReferencesPage1    = "references_CorpusId1033682_offset0_limit100_allfields.json"
	FileReferencesLastPage = "references_CorpusId1033682_offset100_limit100_lastpage.json"
	FileReferencesMinimal  = "references_DOI-ssrn2250500_fields-title_offset0_limit50.json"
	FilePaper              = "paper_DOI-arxiv2312.07559.json"
	FileBatch              = "batch_allfields_first-id-not-found-null.json"
	File404                = "error_404_paper_not_found_DOI.json"
	File400                = "error_400_unrecognized_fields.json"
)

// RecordedFields is the fields parameter of the recorded reference pages.
const RecordedFields = "contexts,intents,contextsWithIntent,isInfluential,abstract,authors,citationCount,citationStyles,corpusId,externalIds,fieldsOfStudy,influentialCitationCount,isOpenAccess,journal,openAccessPdf,paperId,publicationDate,publicationTypes,publicationVenue,referenceCount,s2FieldsOfStudy,title,url,venue,year"

// RecordedBatchFields is the fields parameter of the recorded batch
// request.
const RecordedBatchFields = "abstract,authors,citationCount,citationStyles,corpusId,externalIds,fieldsOfStudy,influentialCitationCount,isOpenAccess,journal,openAccessPdf,paperId,publicationDate,publicationTypes,publicationVenue,referenceCount,s2FieldsOfStudy,title,url,venue,year"

// RecordedPaperFields is the fields parameter of the recorded /paper
// request.
const RecordedPaperFields = "authors,citationCount,citationStyles,externalIds,influentialCitationCount,isOpenAccess,journal,openAccessPdf,publicationDate,publicationTypes,title,url,venue,year"

// RecordedBatchIDs are the ids of the recorded batch request; S2 did not
// know the first.
var RecordedBatchIDs = []string{"CorpusId:211530585", "CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"}

// S2Fixture returns the recorded response body in file, skipping the test
// when the shared fixtures are absent.
func S2Fixture(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(tb, "s2"), file))
	if err != nil {
		tb.Fatalf("s2 fixture: %v", err)
	}
	return b
}

// ArxivFixture returns the recorded page in file (../shared/fixtures/
// arxiv-html), skipping the test when the shared fixtures are absent.
func ArxivFixture(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(tb, "arxiv-html"), file))
	if err != nil {
		tb.Fatalf("arxiv-html fixture: %v", err)
	}
	return b
}

// AddFixturePage makes site (sim.HTMLArxiv or sim.HTMLAr5iv) serve the
// recorded page in file as the page of id.
func AddFixturePage(tb testing.TB, c *sim.Corpus, site, id, file string) {
	tb.Helper()
	if err := c.AddPage(site, id, ArxivFixture(tb, file)); err != nil {
		tb.Fatal(err)
	}
}

// LoadRecordedReferences makes the 156 recorded edges of
// RecordedReferencesID its reference list, so that paging with limit 100
// and the recorded fields serves the two recorded pages again. It returns
// the edges.
func LoadRecordedReferences(tb testing.TB, c *sim.Corpus) []json.RawMessage {
	tb.Helper()
	var edges []json.RawMessage
	for _, f := range []string{FileReferencesPage1, FileReferencesLastPage} {
		var page struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(S2Fixture(tb, f), &page); err != nil {
			tb.Fatalf("s2 fixture %s: %v", f, err)
		}
		edges = append(edges, page.Data...)
	}
	if err := c.SetS2References(RecordedReferencesID, edges); err != nil {
		tb.Fatal(err)
	}
	return edges
}

// LoadRecordedMinimal makes the 50 recorded edges of RecordedMinimalID
// (citedPaper paperId and title only) the start of its reference list,
// followed by one more, so that the first page of 50 is the recorded one
// with next 50.
func LoadRecordedMinimal(tb testing.TB, c *sim.Corpus) []json.RawMessage {
	tb.Helper()
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(S2Fixture(tb, FileReferencesMinimal), &page); err != nil {
		tb.Fatalf("s2 fixture %s: %v", FileReferencesMinimal, err)
	}
	edges := append(page.Data, json.RawMessage(`{"citedPaper":{"paperId":null,"title":"An edge past the recorded page"}}`))
	if err := c.SetS2References(RecordedMinimalID, edges); err != nil {
		tb.Fatal(err)
	}
	return page.Data
}

// LoadRecordedPaper registers the recorded paper (PaperQA, arXiv
// 2312.07559), addressable by RecordedPaperID, its paperId, CorpusId and
// ARXIV: id. It returns the paperId.
func LoadRecordedPaper(tb testing.TB, c *sim.Corpus) string {
	tb.Helper()
	id, err := c.AddS2Paper(json.RawMessage(S2Fixture(tb, FilePaper)))
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// LoadRecordedBatch registers the papers of the recorded batch answer, so
// that asking for RecordedBatchIDs with the recorded fields answers it
// again: null for the first id.
func LoadRecordedBatch(tb testing.TB, c *sim.Corpus) {
	tb.Helper()
	var papers []json.RawMessage
	if err := json.Unmarshal(S2Fixture(tb, FileBatch), &papers); err != nil {
		tb.Fatalf("s2 fixture %s: %v", FileBatch, err)
	}
	for i, p := range papers {
		if string(p) == "null" {
			continue
		}
		if _, err := c.AddS2Paper(p, RecordedBatchIDs[i]); err != nil {
			tb.Fatal(err)
		}
	}
}

// LoadS2Fixtures loads every recorded paper and reference list.
func LoadS2Fixtures(tb testing.TB, c *sim.Corpus) {
	tb.Helper()
	LoadRecordedReferences(tb, c)
	LoadRecordedMinimal(tb, c)
	LoadRecordedPaper(tb, c)
	LoadRecordedBatch(tb, c)
}

// DefaultDisclaimer is the disclaimer Withhold sends when given none, in
// the wording S2 uses for a publisher-elided reference list.
const DefaultDisclaimer = "Notice: The following paper fields have been elided by the publisher: {'references'}. " +
	"Paper or abstract available at https://api.unpaywall.org/v2/{DOI}?email=<INSERT_YOUR_EMAIL> or https://doi.org/{DOI}."

// Withhold makes the reference list of paper id in c withheld by its
// publisher, as S2 answers it: "data": null with a closed openAccessPdf
// carrying disclaimer (DefaultDisclaimer when empty).
func Withhold(c *sim.Corpus, id, disclaimer string) {
	if disclaimer == "" {
		disclaimer = DefaultDisclaimer
	}
	c.WithholdS2References(id, sim.S2OpenAccessPDF{Status: ptr("CLOSED"), Disclaimer: disclaimer})
}

// FixtureCorpus returns a corpus of every recorded fixture a service
// serves: the arXiv and ar5iv pages of ../shared/fixtures/arxiv-html (as
// its MANIFEST.tsv names them; the arXMLiv page is neither site's) and the
// recorded Semantic Scholar papers and reference lists (LoadS2Fixtures).
// pages lists the page ids by site (sim.HTMLArxiv ids are versioned).
func FixtureCorpus(tb testing.TB) (c *sim.Corpus, pages map[string][]string) {
	tb.Helper()
	dir := fixtures.Dir(tb, "arxiv-html")
	manifest, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		tb.Fatalf("arxiv-html fixtures: %v", err)
	}
	c, pages = sim.NewCorpus(), map[string][]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		cols := strings.Split(line, "\t")
		if i == 0 || len(cols) < 3 {
			continue // the header
		}
		file, id, site := cols[0], cols[1], cols[2]
		if site != sim.HTMLArxiv && site != sim.HTMLAr5iv {
			continue
		}
		AddFixturePage(tb, c, site, id, file)
		pages[site] = append(pages[site], id)
	}
	LoadS2Fixtures(tb, c)
	return c, pages
}
