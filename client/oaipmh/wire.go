package oaipmh

import (
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
)

// response is an OAI-PMH response. The envelope is in the namespace
// http://www.openarchives.org/OAI/2.0/; the metadata formats are told apart
// by their own namespaces, and their children are matched by local name.
type response struct {
	// XMLName makes a body that is not OAI-PMH (an HTML error page from a
	// proxy, say) a parse error rather than an empty response.
	XMLName      xml.Name     `xml:"http://www.openarchives.org/OAI/2.0/ OAI-PMH"`
	ResponseDate string       `xml:"http://www.openarchives.org/OAI/2.0/ responseDate"`
	Errors       []wireError  `xml:"http://www.openarchives.org/OAI/2.0/ error"`
	ListRecords  *listRecords `xml:"http://www.openarchives.org/OAI/2.0/ ListRecords"`
	GetRecord    *getRecord   `xml:"http://www.openarchives.org/OAI/2.0/ GetRecord"`
	Identify     *identify    `xml:"http://www.openarchives.org/OAI/2.0/ Identify"`
}

type wireError struct {
	Code    string `xml:"code,attr"`
	Message string `xml:",chardata"`
}

// err returns the response's first error, with any further ones appended
// to its message: the protocol allows several, e.g. for a request with
// more than one bad argument.
func (r *response) err() *Error {
	e := &Error{Code: strings.TrimSpace(r.Errors[0].Code), Message: collapse(r.Errors[0].Message)}
	for _, more := range r.Errors[1:] {
		e.Message += "; " + strings.TrimSpace(more.Code) + ": " + collapse(more.Message)
	}
	return e
}

type identify struct {
	RepositoryName    string   `xml:"http://www.openarchives.org/OAI/2.0/ repositoryName"`
	BaseURL           string   `xml:"http://www.openarchives.org/OAI/2.0/ baseURL"`
	ProtocolVersion   string   `xml:"http://www.openarchives.org/OAI/2.0/ protocolVersion"`
	AdminEmails       []string `xml:"http://www.openarchives.org/OAI/2.0/ adminEmail"`
	EarliestDatestamp string   `xml:"http://www.openarchives.org/OAI/2.0/ earliestDatestamp"`
	DeletedRecord     string   `xml:"http://www.openarchives.org/OAI/2.0/ deletedRecord"`
	Granularity       string   `xml:"http://www.openarchives.org/OAI/2.0/ granularity"`
}

type listRecords struct {
	Records []wireRecord     `xml:"http://www.openarchives.org/OAI/2.0/ record"`
	Token   *resumptionToken `xml:"http://www.openarchives.org/OAI/2.0/ resumptionToken"`
}

type getRecord struct {
	Records []wireRecord `xml:"http://www.openarchives.org/OAI/2.0/ record"`
}

// resumptionToken's attributes are optional and only logged. arXiv's 2025
// server sends none of the standard ones.
type resumptionToken struct {
	Value            string `xml:",chardata"`
	Cursor           string `xml:"cursor,attr"`
	CompleteListSize string `xml:"completeListSize,attr"`
}

// token returns the token to send for the next page, "" on the last page.
func (l *listRecords) token() string {
	if l.Token == nil {
		return ""
	}
	return strings.TrimSpace(l.Token.Value)
}

type wireRecord struct {
	Header struct {
		Status     string   `xml:"status,attr"`
		Identifier string   `xml:"http://www.openarchives.org/OAI/2.0/ identifier"`
		Datestamp  string   `xml:"http://www.openarchives.org/OAI/2.0/ datestamp"`
		SetSpecs   []string `xml:"http://www.openarchives.org/OAI/2.0/ setSpec"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ header"`
	Metadata struct {
		ArXiv    *arxivFormat    `xml:"http://arxiv.org/OAI/arXiv/ arXiv"`
		ArXivRaw *arxivRawFormat `xml:"http://arxiv.org/OAI/arXivRaw/ arXivRaw"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ metadata"`
}

// arxivFormat is metadataPrefix=arXiv (http://arxiv.org/OAI/arXiv.xsd).
type arxivFormat struct {
	ID      string `xml:"id"`
	Created string `xml:"created"` // v1's date, YYYY-MM-DD
	Updated string `xml:"updated"` // latest version's date; absent for v1 only
	Authors []struct {
		Keyname   string `xml:"keyname"`
		Forenames string `xml:"forenames"`
		Suffix    string `xml:"suffix"`
	} `xml:"authors>author"`
	Title      string `xml:"title"`
	Categories string `xml:"categories"` // space-separated, primary first
	Comments   string `xml:"comments"`
	JournalRef string `xml:"journal-ref"`
	DOI        string `xml:"doi"`
	License    string `xml:"license"`
	Abstract   string `xml:"abstract"`
}

// arxivRawFormat is metadataPrefix=arXivRaw (http://arxiv.org/OAI/arXivRaw.xsd):
// close to arXiv's internal format, with the version history.
type arxivRawFormat struct {
	ID       string `xml:"id"`
	Versions []struct {
		Version string `xml:"version,attr"` // "v1"
		Date    string `xml:"date"`         // "Mon, 2 Apr 2007 19:18:42 GMT"
	} `xml:"version"`
	Title      string `xml:"title"`
	Authors    string `xml:"authors"` // one string: "A. One, B. Two and C. Three"
	Categories string `xml:"categories"`
	Comments   string `xml:"comments"`
	JournalRef string `xml:"journal-ref"`
	DOI        string `xml:"doi"`
	License    string `xml:"license"`
	Abstract   string `xml:"abstract"`
}

// record converts w. An error means the record cannot be used: its
// identifier names no arXiv paper, or a date does not parse.
func (w *wireRecord) record() (Record, error) {
	h := &w.Header
	r := Record{
		Identifier: strings.TrimSpace(h.Identifier),
		Deleted:    strings.TrimSpace(h.Status) == "deleted",
	}
	// oai:arXiv.org:2401.00001, oai:arXiv.org:hep-th/9901001: the local
	// part follows the second colon (arXiv ids contain none).
	parts := strings.SplitN(r.Identifier, ":", 3)
	if len(parts) != 3 || parts[0] != "oai" {
		return Record{}, fmt.Errorf("record %q: not an oai identifier", r.Identifier)
	}
	id, err := arxiv.Parse(parts[2])
	if err != nil {
		return Record{}, fmt.Errorf("record %s: %w", r.Identifier, err)
	}
	r.ID = id.Canonical()
	if r.Datestamp, err = parseDatestamp(h.Datestamp); err != nil {
		return Record{}, fmt.Errorf("record %s: datestamp: %w", r.Identifier, err)
	}
	for _, s := range h.SetSpecs {
		if s = strings.TrimSpace(s); s != "" {
			r.Sets = append(r.Sets, s)
		}
	}
	if r.Deleted {
		return r, nil // a deleted record has no metadata
	}
	switch md := &w.Metadata; {
	case md.ArXiv != nil:
		r.Meta, err = md.ArXiv.meta(r.ID)
	case md.ArXivRaw != nil:
		r.Meta, err = md.ArXivRaw.meta(r.ID)
	}
	if err != nil {
		return Record{}, fmt.Errorf("record %s: %w", r.Identifier, err)
	}
	return r, nil
}

func (a *arxivFormat) meta(headerID string) (*ArxivMeta, error) {
	id, err := metaID(a.ID, headerID)
	if err != nil {
		return nil, err
	}
	m := newMeta(id, a.Title, a.Categories, a.Abstract, a.DOI, a.JournalRef, a.Comments, a.License)
	if m.Created, err = time.Parse(dayLayout, strings.TrimSpace(a.Created)); err != nil {
		return nil, fmt.Errorf("created: %w", err)
	}
	if s := strings.TrimSpace(a.Updated); s != "" {
		if m.Updated, err = time.Parse(dayLayout, s); err != nil {
			return nil, fmt.Errorf("updated: %w", err)
		}
	}
	for _, au := range a.Authors {
		name := collapse(au.Forenames + " " + au.Keyname + " " + au.Suffix)
		if name != "" {
			m.Authors = append(m.Authors, name)
		}
	}
	return m, nil
}

func (a *arxivRawFormat) meta(headerID string) (*ArxivMeta, error) {
	id, err := metaID(a.ID, headerID)
	if err != nil {
		return nil, err
	}
	m := newMeta(id, a.Title, a.Categories, a.Abstract, a.DOI, a.JournalRef, a.Comments, a.License)
	m.Authors = splitAuthors(a.Authors)
	// Versions are listed in order, but go by their numbers: v1's date is
	// the paper's date, and the highest version is the latest.
	for _, v := range a.Versions {
		n, ok := versionNumber(v.Version)
		if !ok {
			return nil, fmt.Errorf("version %q: not vN", v.Version)
		}
		date, err := parseVersionDate(v.Date)
		if err != nil {
			return nil, fmt.Errorf("version %s date: %w", v.Version, err)
		}
		m.Versions = append(m.Versions, Version{N: n, Date: date})
	}
	slices.SortStableFunc(m.Versions, func(a, b Version) int { return a.N - b.N })
	for i := 1; i < len(m.Versions); i++ {
		if m.Versions[i].N == m.Versions[i-1].N {
			return nil, fmt.Errorf("version v%d listed twice", m.Versions[i].N)
		}
	}
	if len(m.Versions) == 0 || m.Versions[0].N != 1 {
		// Without v1 there is no paper date, the one thing arXivRaw is
		// harvested for.
		return nil, ErrNoV1
	}
	m.Created = m.Versions[0].Date
	if last := m.Versions[len(m.Versions)-1]; last.N > 1 {
		m.Updated = last.Date
	}
	return m, nil
}

// metaID returns the canonical form of the metadata's <id>, or headerID
// when it is absent.
func metaID(s, headerID string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return headerID, nil
	}
	id, err := arxiv.Parse(s)
	if err != nil {
		return "", fmt.Errorf("metadata id: %w", err)
	}
	return id.Canonical(), nil
}

func newMeta(id, title, categories, abstract, doi, journalRef, comments, license string) *ArxivMeta {
	m := &ArxivMeta{
		ID:         id,
		Title:      collapse(title),
		Categories: strings.Fields(categories),
		Abstract:   collapse(abstract),
		DOI:        strings.TrimSpace(doi),
		JournalRef: collapse(journalRef),
		Comments:   collapse(comments),
		License:    strings.TrimSpace(license),
	}
	if len(m.Categories) > 0 {
		m.Primary = m.Categories[0]
	}
	return m
}

func versionNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != 'v' {
		return 0, false
	}
	n := 0
	for _, c := range s[1:] {
		if c < '0' || c > '9' || n > 1e6 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n > 0
}

// parseVersionDate parses an arXivRaw version date. The 2025 server pads
// the day ("Mon, 02 Apr 2007 19:18:42 GMT"), the old one did not.
func parseVersionDate(s string) (time.Time, error) {
	t, err := time.Parse("Mon, _2 Jan 2006 15:04:05 MST", strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// parseDatestamp parses an OAI-PMH UTCdatetime at either granularity.
func parseDatestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	layout := time.RFC3339
	if len(s) == len(dayLayout) {
		layout = dayLayout
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// splitAuthors splits arXivRaw's author string at commas and at " and ",
// except inside parentheses, which hold affiliations that contain both:
// "A. One (Univ. X, Y), B. Two and C. Three".
func splitAuthors(s string) []string {
	s = collapse(s)
	var out []string
	depth, start := 0, 0
	add := func(end int) {
		if name := strings.TrimSpace(s[start:end]); name != "" {
			out = append(out, name)
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth > 0:
		case c == ',':
			add(i)
			start = i + 1
			// "A, B, and C": the "and" after the comma is a separator too.
			if strings.HasPrefix(s[start:], " and ") {
				start += len(" and ")
				i = start - 1
			}
		case strings.HasPrefix(s[i:], " and "):
			add(i)
			start = i + len(" and ")
			i = start - 1
		}
	}
	add(len(s))
	return out
}

// collapse trims s and reduces every run of white space to one space:
// titles and abstracts come wrapped across lines.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
