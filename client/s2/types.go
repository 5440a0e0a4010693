package s2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/groundwork/curate/parse/arxiv"
)

// Paper is a Semantic Scholar paper: a cited paper of a reference edge, the
// answer of Paper, or an element of Batch. Fields not asked for stay zero.
// Pointers distinguish S2's null (unknown) from a value.
type Paper struct {
	// PaperID is S2's 40-hex id; empty for an unresolved reference (S2
	// sends null), whose Title then holds a raw bibliography fragment.
	PaperID     string       `json:"paperId"`
	CorpusID    *int64       `json:"corpusId"`
	ExternalIDs *ExternalIDs `json:"externalIds"`
	URL         string       `json:"url"`
	Title       string       `json:"title"`
	// Abstract is often null for legal reasons even when the website shows
	// one, and publishers elide it; Batch sometimes has it when edges do not.
	Abstract         *string           `json:"abstract"`
	Venue            string            `json:"venue"`
	PublicationVenue *PublicationVenue `json:"publicationVenue"`
	// Year and PublicationDate are S2's notion of the date (a venue's or
	// arXiv's); PublicationDate ("YYYY-MM-DD") may be null while Year is set.
	Year                     *int           `json:"year"`
	PublicationDate          *string        `json:"publicationDate"`
	ReferenceCount           *int           `json:"referenceCount"`
	CitationCount            *int           `json:"citationCount"`
	InfluentialCitationCount *int           `json:"influentialCitationCount"`
	IsOpenAccess             *bool          `json:"isOpenAccess"`
	OpenAccessPDF            *OpenAccessPDF `json:"openAccessPdf"`
	FieldsOfStudy            []string       `json:"fieldsOfStudy"`
	S2FieldsOfStudy          []FieldOfStudy `json:"s2FieldsOfStudy"`
	PublicationTypes         []string       `json:"publicationTypes"`
	Journal                  *Journal       `json:"journal"`
	Authors                  []Author       `json:"authors"`
	TLDR                     *TLDR          `json:"tldr"`
}

// Resolved reports whether S2 matched the entry to a paper it knows.
func (p *Paper) Resolved() bool { return p.PaperID != "" }

// ArxivID returns the paper's versionless arXiv id, or "" if it has none.
func (p *Paper) ArxivID() string {
	if p.ExternalIDs == nil {
		return ""
	}
	return arxiv.Normalize(p.ExternalIDs.ArXiv)
}

// DOI returns the paper's DOI, or "" if it has none.
func (p *Paper) DOI() string {
	if p.ExternalIDs == nil {
		return ""
	}
	return p.ExternalIDs.DOI
}

// PDFURL returns the open-access PDF URL, or "" when there is none: since
// 2025 S2 answers a closed paper with {"url": "", ...} rather than null.
func (p *Paper) PDFURL() string {
	if p.OpenAccessPDF == nil {
		return ""
	}
	return p.OpenAccessPDF.URL
}

// OpenAccessPDF is S2's openAccessPdf object. Status, License and
// Disclaimer are empty when S2 sends null or omits them.
type OpenAccessPDF struct {
	URL     string `json:"url"`
	Status  string `json:"status"` // "GREEN", "GOLD", "CLOSED", ...
	License string `json:"license"`
	// Disclaimer explains fields a publisher elided, e.g. the abstract or
	// a citing paper's whole reference list.
	Disclaimer string `json:"disclaimer"`
}

// PublicationVenue is S2's venue record.
type PublicationVenue struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	AlternateNames []string `json:"alternate_names"`
	ISSN           string   `json:"issn"`
	URL            string   `json:"url"`
}

// Journal is where a paper appeared; any part may be empty.
type Journal struct {
	Name   string `json:"name"`
	Volume string `json:"volume"`
	Pages  string `json:"pages"`
}

// Author is one author; AuthorID is empty when S2 has not linked one.
type Author struct {
	AuthorID string `json:"authorId"`
	Name     string `json:"name"`
}

// FieldOfStudy is an s2FieldsOfStudy element.
type FieldOfStudy struct {
	Category string `json:"category"`
	Source   string `json:"source"`
}

// TLDR is S2's generated one-sentence summary (FullPaper field "tldr").
type TLDR struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

// ExternalIDs are a paper's ids in other systems. S2 sends CorpusId as a
// number and the others as strings; keys this type does not name are kept
// verbatim in Other so that nothing S2 sends is lost.
type ExternalIDs struct {
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

// stringFields maps the string-valued JSON keys to their fields.
func (x *ExternalIDs) stringFields() map[string]*string {
	return map[string]*string{
		"ArXiv": &x.ArXiv, "DOI": &x.DOI, "DBLP": &x.DBLP, "MAG": &x.MAG,
		"ACL": &x.ACL, "PubMed": &x.PubMed, "PubMedCentral": &x.PubMedCentral,
	}
}

// UnmarshalJSON decodes S2's mixed-type externalIds object. It accepts a
// number where a string is expected and a numeric string for CorpusId, so
// a change of S2's typing does not lose ids.
func (x *ExternalIDs) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("decode externalIds: %w", err)
	}
	*x = ExternalIDs{}
	fields := x.stringFields()
	for k, v := range raw {
		if k == "CorpusId" {
			n, err := corpusID(v)
			if err != nil {
				return fmt.Errorf("decode externalIds.CorpusId %s: %w", v, err)
			}
			x.CorpusID = n
			continue
		}
		dst, known := fields[k]
		if !known {
			if x.Other == nil {
				x.Other = make(map[string]json.RawMessage)
			}
			x.Other[k] = bytes.Clone(v)
			continue
		}
		s, err := idString(v)
		if err != nil {
			return fmt.Errorf("decode externalIds.%s %s: %w", k, v, err)
		}
		*dst = s
	}
	return nil
}

// MarshalJSON writes the object back in S2's shape, so a decoded Paper can
// be stored and read again without loss.
func (x ExternalIDs) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(x.Other)+8)
	for k, v := range x.Other {
		out[k] = v
	}
	if x.CorpusID != nil {
		out["CorpusId"] = *x.CorpusID
	}
	for k, p := range x.stringFields() {
		if *p != "" {
			out[k] = *p
		}
	}
	return json.Marshal(out)
}

func corpusID(v json.RawMessage) (*int64, error) {
	v = bytes.TrimSpace(v)
	if string(v) == "null" {
		return nil, nil
	}
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		v = []byte(s)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("not an integer")
	}
	return &n, nil
}

func idString(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case string(v) == "null":
		return "", nil
	case len(v) > 0 && v[0] == '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	default:
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return "", fmt.Errorf("neither a string nor a number")
		}
		return n.String(), nil
	}
}
