package arxivapi

import (
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// feed is an API response. Its elements are in the Atom namespace
// http://www.w3.org/2005/Atom, arXiv's own in http://arxiv.org/schemas/atom
// and the paging counts in http://a9.com/-/spec/opensearch/1.1/.
type feed struct {
	Total        int         `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	StartIndex   int         `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
	ItemsPerPage int         `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
	Entries      []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type term struct {
	Term string `xml:"term,attr"`
}

type atomEntry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Updated   string `xml:"http://www.w3.org/2005/Atom updated"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Categories []term `xml:"http://www.w3.org/2005/Atom category"`
	Primary    term   `xml:"http://arxiv.org/schemas/atom primary_category"`
	DOI        string `xml:"http://arxiv.org/schemas/atom doi"`
	JournalRef string `xml:"http://arxiv.org/schemas/atom journal_ref"`
	Comment    string `xml:"http://arxiv.org/schemas/atom comment"`
}

// isError reports whether e is one of the API's error entries, which it
// dresses as papers: <id>http://arxiv.org/api/errors#...</id>,
// <title>Error</title> and the explanation as summary.
func (e *atomEntry) isError() bool {
	return strings.Contains(e.ID, "arxiv.org/api/errors")
}

// errorMessage returns the explanation of the feed's first error entry, or
// "".
func (f *feed) errorMessage() string {
	for i := range f.Entries {
		if e := &f.Entries[i]; e.isError() {
			return collapse(e.Summary)
		}
	}
	return ""
}

// entry converts e. ok is false for an entry that describes no paper: an
// error entry, or one without an arXiv abstract id or a published date.
func (e *atomEntry) entry() (ent record.ArxivEntry, ok bool, err error) {
	if e.isError() {
		return record.ArxivEntry{}, false, nil
	}
	// <id> is http://arxiv.org/abs/2401.00001v2 or .../abs/hep-th/9901001v1.
	_, raw, found := strings.Cut(strings.TrimSpace(e.ID), "arxiv.org/abs/")
	if !found || strings.TrimSpace(e.Published) == "" {
		return record.ArxivEntry{}, false, nil
	}
	id, err := arxiv.Parse(raw)
	if err != nil {
		return record.ArxivEntry{}, false, fmt.Errorf("entry %s: %w", e.ID, err)
	}
	published, err := parseTime(e.Published)
	if err != nil {
		return record.ArxivEntry{}, false, fmt.Errorf("entry %s: published: %w", e.ID, err)
	}
	updated := published
	if strings.TrimSpace(e.Updated) != "" {
		if updated, err = parseTime(e.Updated); err != nil {
			return record.ArxivEntry{}, false, fmt.Errorf("entry %s: updated: %w", e.ID, err)
		}
	}
	ent = record.ArxivEntry{
		ID:              id.Canonical(),
		Version:         id.Version,
		Published:       published,
		Updated:         updated,
		Title:           collapse(e.Title),
		Abstract:        collapse(e.Summary),
		PrimaryCategory: strings.TrimSpace(e.Primary.Term),
		DOI:             strings.TrimSpace(e.DOI),
		JournalRef:      collapse(e.JournalRef),
		Comment:         collapse(e.Comment),
	}
	for _, a := range e.Authors {
		if n := collapse(a.Name); n != "" {
			ent.Authors = append(ent.Authors, n)
		}
	}
	for _, c := range e.Categories {
		if t := strings.TrimSpace(c.Term); t != "" {
			ent.Categories = append(ent.Categories, t)
		}
	}
	return ent, true, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// collapse trims s and reduces every run of white space to one space:
// titles and abstracts come wrapped across lines.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
