package s2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// paper is a Semantic Scholar paper as the API sends it: a cited paper of
// a reference edge, the answer of Paper, or an element of Batch. Fields
// not asked for stay zero; pointers distinguish S2's null (unknown) from a
// value. The client hands it on as a record.ScholarPaper (toRecord).
type paper struct {
	PaperID                  string            `json:"paperId"` // null for an unresolved reference
	CorpusID                 *int64            `json:"corpusId"`
	ExternalIDs              *externalIDs      `json:"externalIds"`
	URL                      string            `json:"url"`
	Title                    string            `json:"title"`
	Abstract                 *string           `json:"abstract"`
	Venue                    string            `json:"venue"`
	PublicationVenue         *publicationVenue `json:"publicationVenue"`
	Year                     *int              `json:"year"`
	PublicationDate          *string           `json:"publicationDate"`
	ReferenceCount           *int              `json:"referenceCount"`
	CitationCount            *int              `json:"citationCount"`
	InfluentialCitationCount *int              `json:"influentialCitationCount"`
	IsOpenAccess             *bool             `json:"isOpenAccess"`
	OpenAccessPDF            *openAccessPDF    `json:"openAccessPdf"`
	FieldsOfStudy            []string          `json:"fieldsOfStudy"`
	S2FieldsOfStudy          []fieldOfStudy    `json:"s2FieldsOfStudy"`
	PublicationTypes         []string          `json:"publicationTypes"`
	Journal                  *journal          `json:"journal"`
	Authors                  []author          `json:"authors"`
	TLDR                     *tldr             `json:"tldr"`
}

// openAccessPDF is S2's openAccessPdf object; Status, License and
// Disclaimer are empty when S2 sends null or omits them.
type openAccessPDF struct {
	URL        string `json:"url"`
	Status     string `json:"status"`
	License    string `json:"license"`
	Disclaimer string `json:"disclaimer"`
}

type publicationVenue struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	AlternateNames []string `json:"alternate_names"`
	ISSN           string   `json:"issn"`
	URL            string   `json:"url"`
}

type journal struct {
	Name   string `json:"name"`
	Volume string `json:"volume"`
	Pages  string `json:"pages"`
}

type author struct {
	AuthorID string `json:"authorId"`
	Name     string `json:"name"`
}

type fieldOfStudy struct {
	Category string `json:"category"`
	Source   string `json:"source"`
}

type tldr struct {
	Model string `json:"model"`
	Text  string `json:"text"`
}

// externalIDs are a paper's ids in other systems. S2 sends CorpusId as a
// number and the others as strings; keys this type does not name are kept
// verbatim in Other so that nothing S2 sends is lost.
type externalIDs struct {
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
func (x *externalIDs) stringFields() map[string]*string {
	return map[string]*string{
		"ArXiv": &x.ArXiv, "DOI": &x.DOI, "DBLP": &x.DBLP, "MAG": &x.MAG,
		"ACL": &x.ACL, "PubMed": &x.PubMed, "PubMedCentral": &x.PubMedCentral,
	}
}

// UnmarshalJSON decodes S2's mixed-type externalIds object. It accepts a
// number where a string is expected and a numeric string for CorpusId, so
// a change of S2's typing does not lose ids.
func (x *externalIDs) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("decode externalIds: %w", err)
	}
	*x = externalIDs{}
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
