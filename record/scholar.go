package record

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/groundwork/curate/parse/arxiv"
)

// The shapes below are what curate keeps of Semantic Scholar's answers
// (kinds "s2-paper", "s2-references", "s2-batch"): every field S2 gives,
// kept as received, so that re-linking never asks again. The client
// (client/s2) converts S2's JSON into them. Their JSON is the stored form:
// it matches S2's own names because stores hold records written with
// them; a field is added, never renamed.

// ScholarPaper is Semantic Scholar's record of a paper: a target, a cited
// paper of a reference edge, or the answer that fills what an edge lacks.
// Fields S2 was not asked for stay zero; pointers tell S2's null (unknown)
// from a value.
type ScholarPaper struct {
	// PaperID is S2's 40-hex id; empty for an unresolved reference, whose
	// Title then holds a raw bibliography fragment.
	PaperID     string      `json:"paperId"`
	CorpusID    *int64      `json:"corpusId"`
	ExternalIDs *ScholarIDs `json:"externalIds"`
	URL         string      `json:"url"`
	Title       string      `json:"title"`
	// Abstract is often null for legal reasons even when S2's website
	// shows one; the batch answer sometimes has it when edges do not.
	Abstract         *string       `json:"abstract"`
	Venue            string        `json:"venue"`
	PublicationVenue *ScholarVenue `json:"publicationVenue"`
	// Year and PublicationDate are S2's notion of the date (a venue's or
	// arXiv's); PublicationDate ("YYYY-MM-DD") may be null while Year is
	// set.
	Year                     *int            `json:"year"`
	PublicationDate          *string         `json:"publicationDate"`
	ReferenceCount           *int            `json:"referenceCount"`
	CitationCount            *int            `json:"citationCount"`
	InfluentialCitationCount *int            `json:"influentialCitationCount"`
	IsOpenAccess             *bool           `json:"isOpenAccess"`
	OpenAccessPDF            *ScholarPDF     `json:"openAccessPdf"`
	FieldsOfStudy            []string        `json:"fieldsOfStudy"`
	S2FieldsOfStudy          []ScholarField  `json:"s2FieldsOfStudy"`
	PublicationTypes         []string        `json:"publicationTypes"`
	Journal                  *ScholarJournal `json:"journal"`
	Authors                  []ScholarAuthor `json:"authors"`
	TLDR                     *ScholarTLDR    `json:"tldr"`
}

// Resolved reports whether S2 matched the entry to a paper it knows.
func (p *ScholarPaper) Resolved() bool { return p.PaperID != "" }

// ArxivID returns the paper's versionless arXiv ID, or "" if it has none.
func (p *ScholarPaper) ArxivID() string {
	if p.ExternalIDs == nil {
		return ""
	}
	return arxiv.Normalize(p.ExternalIDs.ArXiv)
}

// DOI returns the paper's DOI, or "" if it has none.
func (p *ScholarPaper) DOI() string {
	if p.ExternalIDs == nil {
		return ""
	}
	return p.ExternalIDs.DOI
}

// PDFURL returns the open-access PDF's URL, or "" when there is none (S2
// answers a closed paper with an empty URL rather than null).
func (p *ScholarPaper) PDFURL() string {
	if p.OpenAccessPDF == nil {
		return ""
	}
	return p.OpenAccessPDF.URL
}

// ScholarPDF is where S2 says a paper's open-access PDF is. Status,
// License and Disclaimer are empty when S2 gives none.
type ScholarPDF struct {
	URL     string `json:"url"`
	Status  string `json:"status"` // "GREEN", "GOLD", "CLOSED", ...
	License string `json:"license"`
	// Disclaimer explains fields a publisher elided, e.g. the abstract or
	// a citing paper's whole reference list.
	Disclaimer string `json:"disclaimer"`
}

// ScholarVenue is S2's record of a venue.
type ScholarVenue struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	AlternateNames []string `json:"alternate_names"`
	ISSN           string   `json:"issn"`
	URL            string   `json:"url"`
}

// ScholarJournal is where a paper appeared; any part may be empty.
type ScholarJournal struct {
	Name   string `json:"name"`
	Volume string `json:"volume"`
	Pages  string `json:"pages"`
}

// ScholarAuthor is one author; AuthorID is empty when S2 has not linked
// one.
type ScholarAuthor struct {
	AuthorID string `json:"authorId"`
	Name     string `json:"name"`
}

// ScholarField is one of S2's fields of study with who assigned it.
type ScholarField struct {
	Category string `json:"category"`
	Source   string `json:"source"`
}

// ScholarTLDR is S2's generated one-sentence summary.
type ScholarTLDR struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

// ScholarIDs are a paper's identifiers in other systems. Identifiers
// without a field of their own are kept in Other as received, so nothing
// S2 gave is lost. Stored as one JSON object keyed by S2's names
// ("ArXiv", "DOI", "CorpusId", ...): the corpus ID a number, the others
// strings, empty ones left out.
type ScholarIDs struct {
	CorpusID      *int64
	ArXiv         string // versionless; old style keeps the slash: "hep-th/9901001"
	DOI           string
	DBLP          string
	MAG           string
	ACL           string
	PubMed        string
	PubMedCentral string
	Other         map[string]json.RawMessage
}

// scholarCorpusID is the key of ScholarIDs.CorpusID.
const scholarCorpusID = "CorpusId"

// named maps the keys of the string identifiers to their fields.
func (x *ScholarIDs) named() map[string]*string {
	return map[string]*string{
		"ArXiv": &x.ArXiv, "DOI": &x.DOI, "DBLP": &x.DBLP, "MAG": &x.MAG,
		"ACL": &x.ACL, "PubMed": &x.PubMed, "PubMedCentral": &x.PubMedCentral,
	}
}

// MarshalJSON writes the stored object (keys sorted, as for any map).
func (x ScholarIDs) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(x.Other)+8)
	for k, v := range x.Other {
		out[k] = v
	}
	if x.CorpusID != nil {
		out[scholarCorpusID] = *x.CorpusID
	}
	for k, p := range x.named() {
		if *p != "" {
			out[k] = *p
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the stored object.
func (x *ScholarIDs) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("decode externalIds: %w", err)
	}
	*x = ScholarIDs{}
	named := x.named()
	for k, v := range raw {
		var err error
		if dst, ok := named[k]; ok {
			err = json.Unmarshal(v, dst)
		} else if k == scholarCorpusID {
			err = json.Unmarshal(v, &x.CorpusID)
		} else {
			if x.Other == nil {
				x.Other = make(map[string]json.RawMessage)
			}
			x.Other[k] = bytes.Clone(v)
		}
		if err != nil {
			return fmt.Errorf("decode externalIds.%s %s: %w", k, v, err)
		}
	}
	return nil
}

// ScholarReference is one edge of a paper's reference list as S2 knows
// it.
type ScholarReference struct {
	Contexts []string `json:"contexts"`
	// Intents may be empty although ContextsWithIntent carries contexts
	// (their intents are then empty too); both are S2's classifier output.
	Intents            []string         `json:"intents"`
	ContextsWithIntent []ScholarContext `json:"contextsWithIntent"`
	IsInfluential      bool             `json:"isInfluential"`
	CitedPaper         ScholarPaper     `json:"citedPaper"`
}

// ScholarContext is one citing sentence with the intents S2 gave it:
// "background", "methodology", "result".
type ScholarContext struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// ScholarReferences is a paper's reference list, every page joined. Its
// JSON names are the field names, as stores hold them.
type ScholarReferences struct {
	PaperID string             `json:"PaperID"` // the ID asked for
	Edges   []ScholarReference `json:"Edges"`   // in S2's order; unresolved references included
	Pages   int                `json:"Pages"`   // pages fetched
	// Elided is set when the publisher withheld the list: the paper's
	// references are unknown, not zero, and come from the bibliography.
	Elided bool `json:"Elided"`
	// Disclaimer is S2's reason for an elided list; it may be empty.
	Disclaimer string `json:"Disclaimer"`
	// Capped is set when the list went on past what S2's offset paging
	// reaches (10,000 items).
	Capped bool `json:"Capped"`
	// EmptyPage is set when a page came back empty although the previous
	// one announced more: paging stopped and the list is likely short.
	EmptyPage bool `json:"EmptyPage"`
}

// Complete reports whether the list is the whole of what S2 has.
func (l *ScholarReferences) Complete() bool {
	return !l.Elided && !l.Capped && !l.EmptyPage
}
