package record

import (
	"encoding/json"
	"time"
)

// S2 status of a target's reference list.
const (
	S2OK       = "ok"        // the list as S2 has it
	S2Withheld = "withheld"  // "data": null: the publisher withheld it; edges come from the bibliography
	S2Missing  = "not_found" // S2 does not know the paper (404)
	S2Partial  = "partial"   // paging stopped early (10,000 cap or an empty page)
)

// Graph is what the citegraph stage stores for a target (kind "edges"): one
// Edge per bibliography entry or S2 edge, the target's metadata, and how
// the linking went.
type Graph struct {
	TargetID string     `json:"target_id"`
	Meta     TargetMeta `json:"meta"`
	S2Status string     `json:"s2_status"`
	// Disclaimer is S2's reason when the list was withheld.
	Disclaimer string     `json:"disclaimer,omitempty"`
	Edges      []Edge     `json:"edges"`
	Report     LinkReport `json:"report"`
}

// TargetMeta is the target paper's metadata: what decides its split
// (the arXiv v1 date) and its domain (the primary category).
type TargetMeta struct {
	ArxivID         string   `json:"arxiv_id"`
	Title           string   `json:"title,omitempty"`
	Published       string   `json:"published,omitempty"` // arXiv v1 date, YYYY-MM-DD
	PrimaryCategory string   `json:"primary_category,omitempty"`
	Categories      []string `json:"categories,omitempty"`
	DOI             string   `json:"doi,omitempty"`
	S2PaperID       string   `json:"s2_paper_id,omitempty"`
	CorpusID        *int64   `json:"corpus_id,omitempty"`
	Venue           string   `json:"venue,omitempty"`
	Year            int      `json:"year,omitempty"`
	CitationCount   *int     `json:"citation_count,omitempty"`
	// Sources says where each field came from: "html", "s2", "arxiv-api"
	// (MetaFromArxivAPI), "arxiv-id".
	Sources map[string]string `json:"sources,omitempty"`
}

// MetaFromArxivAPI is the TargetMeta source of a v1 date and categories
// read from the arXiv API; a date from "arxiv-id" is the ID's month, and
// then the categories are unknown.
const MetaFromArxivAPI = "arxiv-api"

// HasArxivMeta reports whether the metadata's date and categories came
// from the arXiv API (metadata that says nothing of its sources is taken
// as it is).
func (m TargetMeta) HasArxivMeta() bool {
	src := m.Sources["published"]
	return src == "" || src == MetaFromArxivAPI
}

// LinkReport counts how the S2 edges met the bibliography.
type LinkReport struct {
	S2Edges      int `json:"s2_edges"`
	Bibliography int `json:"bibliography"`
	ByArxivID    int `json:"linked_by_arxiv_id"`
	ByDOI        int `json:"linked_by_doi"`
	ByTitle      int `json:"linked_by_title"`
	// WithID counts S2 edges carrying an arXiv ID or DOI; WithIDLinked those
	// of them that met a bibliography entry.
	WithID       int `json:"s2_edges_with_id"`
	WithIDLinked int `json:"s2_edges_with_id_linked"`
	S2Only       int `json:"s2_only"`
	BibOnly      int `json:"bibliography_only"`
	Unresolved   int `json:"unresolved_s2_edges"`
}

// Linked returns the number of S2 edges joined to a bibliography entry.
func (r LinkReport) Linked() int { return r.ByArxivID + r.ByDOI + r.ByTitle }

// Rate is the share of S2 edges joined to a bibliography entry (1 when
// there are none to join).
func (r LinkReport) Rate() float64 {
	if r.S2Edges == 0 {
		return 1
	}
	return float64(r.Linked()) / float64(r.S2Edges)
}

// S2Paper is Semantic Scholar's record of a target as received; Found
// false records that S2 does not know it.
type S2Paper struct {
	Found bool          `json:"found"`
	Paper *ScholarPaper `json:"paper,omitempty"`
}

// S2ReferenceList is Semantic Scholar's answer for a target's references:
// the list as received and its status (S2OK, S2Withheld, S2Missing,
// S2Partial).
type S2ReferenceList struct {
	Status string             `json:"status"`
	Error  string             `json:"error,omitempty"`
	List   *ScholarReferences `json:"list,omitempty"`
}

// S2Filled holds the batch answers that filled what a target's reference
// edges lacked, by S2 paper ID.
type S2Filled map[string]*ScholarPaper

// ArxivMeta is the arXiv API's answer for one paper; Found false records
// that arXiv does not know it, so it is not asked again.
type ArxivMeta struct {
	Found     bool        `json:"found"`
	CheckedAt string      `json:"checked_at"`
	Entry     *ArxivEntry `json:"entry,omitempty"`
}

// ArxivEntry is one paper as the arXiv API describes it, at its latest
// version (client/arxivapi reads it from the API's Atom feed).
type ArxivEntry struct {
	ID        string    `json:"id"`        // versionless canonical ID: "2401.00001", "hep-th/9901001"
	Version   int       `json:"version"`   // the version the entry describes
	Published time.Time `json:"published"` // when v1 was submitted: the paper's date
	Updated   time.Time `json:"updated"`   // when this version was submitted
	Title     string    `json:"title"`     // whitespace collapsed
	Authors   []string  `json:"authors"`
	Abstract  string    `json:"abstract"` // whitespace collapsed
	// PrimaryCategory is the paper's home category ("cs.CL"); Categories
	// lists every category in arXiv's order, the primary one included, and
	// may hold ACM or MSC class terms.
	PrimaryCategory string   `json:"primary_category"`
	Categories      []string `json:"categories"`
	DOI             string   `json:"doi,omitempty"`
	JournalRef      string   `json:"journal_ref,omitempty"`
	Comment         string   `json:"comment,omitempty"`
}

// UnmarshalJSON also reads the entries stores wrote before the fields had
// snake_case names (single-word names match either way; these two did not).
func (e *ArxivEntry) UnmarshalJSON(data []byte) error {
	type plain ArxivEntry
	var v struct {
		plain
		LegacyPrimaryCategory string `json:"PrimaryCategory"`
		LegacyJournalRef      string `json:"JournalRef"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*e = ArxivEntry(v.plain)
	if e.PrimaryCategory == "" {
		e.PrimaryCategory = v.LegacyPrimaryCategory
	}
	if e.JournalRef == "" {
		e.JournalRef = v.LegacyJournalRef
	}
	return nil
}

// RobotsFile is a host's robots.txt as fetched: the answer's status and,
// for a 2xx answer, the file. A failure to get one is never stored, so a
// stored copy can stand in while the host is unreachable.
type RobotsFile struct {
	URL     string    `json:"url"`
	Fetched time.Time `json:"fetched"`
	Status  int       `json:"status"`
	Body    []byte    `json:"body,omitempty"`
}

// NoHTML records that neither arXiv nor ar5iv had HTML for a paper, and
// when that was checked.
type NoHTML struct {
	CheckedAt string `json:"checked_at"`
	Reason    string `json:"reason"`
}
