package s2test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
)

// Recorded responses in ../shared/fixtures/s2 (see its MANIFEST.tsv).
const (
	// RecordedReferencesID is the paper whose reference list was recorded
	// in two pages of limit 100: 156 edges, 9 of them unresolved.
	RecordedReferencesID = "CorpusId:1033682"
	// RecordedPaperID is the id the recorded /paper response was asked
	// for: an arXiv paper addressed by its arXiv DOI.
	RecordedPaperID = "DOI:10.48550/arxiv.2312.07559"

	FileReferencesPage1    = "references_CorpusId1033682_offset0_limit100_allfields.json"
	FileReferencesLastPage = "references_CorpusId1033682_offset100_limit100_lastpage.json"
	FilePaper              = "paper_DOI-arxiv2312.07559.json"
	FileBatch              = "batch_allfields_first-id-not-found-null.json"
	File404                = "error_404_paper_not_found_DOI.json"
	File400                = "error_400_unrecognized_fields.json"
)

// RecordedFields is the fields parameter of the recorded reference pages.
const RecordedFields = "contexts,intents,contextsWithIntent,isInfluential,abstract,authors,citationCount,citationStyles,corpusId,externalIds,fieldsOfStudy,influentialCitationCount,isOpenAccess,journal,openAccessPdf,paperId,publicationDate,publicationTypes,publicationVenue,referenceCount,s2FieldsOfStudy,title,url,venue,year"

// RecordedBatchIDs are the ids of the recorded batch request; S2 did not
// know the first.
var RecordedBatchIDs = []string{"CorpusId:211530585", "CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"}

// Fixture returns the recorded response body in file, skipping the test
// when the shared fixtures are absent.
func Fixture(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(tb, "s2"), file))
	if err != nil {
		tb.Fatalf("s2 fixture: %v", err)
	}
	return b
}

// LoadRecordedReferences makes the 156 recorded edges of
// RecordedReferencesID its reference list, so that paging with limit 100
// and the recorded fields serves the two recorded pages again. It returns
// the edges.
func (s *Server) LoadRecordedReferences(tb testing.TB) []json.RawMessage {
	tb.Helper()
	var edges []json.RawMessage
	for _, f := range []string{FileReferencesPage1, FileReferencesLastPage} {
		var page struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(Fixture(tb, f), &page); err != nil {
			tb.Fatalf("s2 fixture %s: %v", f, err)
		}
		edges = append(edges, page.Data...)
	}
	s.SetReferences(RecordedReferencesID, edges)
	return edges
}

// LoadRecordedPaper registers the recorded paper (PaperQA, arXiv
// 2312.07559), addressable by RecordedPaperID, its paperId, CorpusId and
// ARXIV: id. It returns the paperId.
func (s *Server) LoadRecordedPaper(tb testing.TB) string {
	tb.Helper()
	return s.AddPaper(json.RawMessage(Fixture(tb, FilePaper)))
}

// LoadRecordedBatch registers the papers of the recorded batch answer, so
// that asking for RecordedBatchIDs with the recorded fields answers it
// again: null for the first id.
func (s *Server) LoadRecordedBatch(tb testing.TB) {
	tb.Helper()
	var papers []json.RawMessage
	if err := json.Unmarshal(Fixture(tb, FileBatch), &papers); err != nil {
		tb.Fatalf("s2 fixture %s: %v", FileBatch, err)
	}
	for i, p := range papers {
		if string(p) == "null" {
			continue
		}
		s.AddPaper(p, RecordedBatchIDs[i])
	}
}

// LoadFixtures loads every recorded paper and reference list.
func (s *Server) LoadFixtures(tb testing.TB) {
	tb.Helper()
	s.LoadRecordedReferences(tb)
	s.LoadRecordedPaper(tb)
	s.LoadRecordedBatch(tb)
}
