package sim

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
)

// The arXiv API (export.arxiv.org/api/query, GET or POST), answering from
// an Entries source:
//
//   - id_list=a,b: those papers in date order (v1 first), not the order
//     asked; an unknown id has no entry yet counts in totalResults, as the
//     real API does; a malformed id answers 400 with an error entry. A
//     versioned id returns the latest entry.
//   - search_query: terms joined by AND, each cat:X (any of a paper's
//     categories; cat:cs.* matches an archive) or
//     submittedDate:[YYYYMMDDhhmm TO YYYYMMDDhhmm] (v1 date, GMT,
//     inclusive). Other fields, OR and ANDNOT answer 400: there is no
//     full-text search. With id_list too, the search filters the listed
//     papers.
//   - start, max_results (default 10, at most 2000 a call and 30000 in
//     all), sortBy (relevance, submittedDate, lastUpdatedDate) and
//     sortOrder (descending by default). Relevance orders a search by
//     submission date, newest first.
//
// Errors answer 400 with the API's error feed: the error dressed as an
// entry whose id is http://arxiv.org/api/errors#reason.

// Limits of the arXiv API, as its manual states them.
const (
	AtomDefaultResults = 10
	AtomMaxPage        = 2000  // max_results of one call
	AtomMaxResults     = 30000 // start+max_results
)

// AtomUpdated is the <updated> of every feed: the simulated API's date.
const AtomUpdated = "2026-07-01T00:00:00-04:00"

// Entry is one paper as the arXiv API describes it, at its latest version.
type Entry struct {
	ID                 string // versionless canonical id
	Version            int
	Published, Updated time.Time // v1's and the latest version's
	Categories         []string  // the paper's categories, primary first
	// XML is the content of the <entry> element, arxiv: prefixes as the
	// feed declares them.
	XML string
}

// Entries is what the arXiv API knows.
type Entries interface {
	// ArxivEntry returns the entry of the paper with the versionless
	// canonical id (arxiv.ID.Canonical).
	ArxivEntry(id string) (Entry, bool)
	// ArxivEntries returns every entry, for searches.
	ArxivEntries() iter.Seq[Entry]
}

// ParseEntry reads an <entry> element, or its content: the id, version,
// dates and categories, and the content as Entry.XML.
func ParseEntry(s string) (Entry, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<entry") {
		s = `<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">` + s + "</entry>"
	}
	var e atomEntry
	if err := xml.Unmarshal([]byte(s), &e); err != nil {
		return Entry{}, fmt.Errorf("sim: arXiv API entry: %w", err)
	}
	return e.entry()
}

// ParseFeed reads every entry of an arXiv API feed.
func ParseFeed(feed []byte) ([]Entry, error) {
	var f struct {
		Entries []atomEntry `xml:"entry"`
	}
	if err := xml.Unmarshal(feed, &f); err != nil {
		return nil, fmt.Errorf("sim: arXiv API feed: %w", err)
	}
	out := make([]Entry, 0, len(f.Entries))
	for _, ae := range f.Entries {
		e, err := ae.entry()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

type atomEntry struct {
	ID         string `xml:"id"`
	Published  string `xml:"published"`
	Updated    string `xml:"updated"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"category"`
	Inner string `xml:",innerxml"`
}

func (ae atomEntry) entry() (Entry, error) {
	raw := strings.TrimSpace(ae.ID)
	id, err := arxiv.Parse(strings.TrimPrefix(strings.TrimPrefix(raw, "http://arxiv.org/abs/"), "https://arxiv.org/abs/"))
	if err != nil {
		return Entry{}, fmt.Errorf("sim: arXiv API entry %q: %w", raw, err)
	}
	pub, err1 := time.Parse(time.RFC3339, strings.TrimSpace(ae.Published))
	upd, err2 := time.Parse(time.RFC3339, strings.TrimSpace(ae.Updated))
	if err := errors.Join(err1, err2); err != nil {
		return Entry{}, fmt.Errorf("sim: arXiv API entry %s: %w", raw, err)
	}
	e := Entry{ID: id.Canonical(), Version: id.Version, Published: pub, Updated: upd, XML: ae.Inner}
	for _, c := range ae.Categories {
		e.Categories = append(e.Categories, c.Term)
	}
	return e, nil
}

// atomAPI serves the arXiv API over src.
type atomAPI struct{ src Entries }

func (a atomAPI) serve(w http.ResponseWriter, r *http.Request, body []byte, _ bool) {
	if r.URL.Path != "/api/query" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			atomError(w, "malformed_request", "malformed request")
			return
		}
		for k, v := range form {
			q[k] = v
		}
	}
	start, ok1 := atomInt(q, "start", 0)
	maxResults, ok2 := atomInt(q, "max_results", AtomDefaultResults)
	switch {
	case !ok1:
		atomError(w, "start_must_be_an_integer", "start must be an integer")
		return
	case !ok2:
		atomError(w, "max_results_must_be_an_integer", "max_results must be an integer")
		return
	case maxResults > AtomMaxPage:
		atomError(w, "max_results_must_be_less_than_or_equal_to_2000", "max_results must be less than or equal to 2000")
		return
	case start+maxResults > AtomMaxResults:
		atomError(w, "start_plus_max_results_must_be_less_than_or_equal_to_30000", "start plus max_results must be less than or equal to 30000")
		return
	}

	var hits []Entry
	total := -1
	listed := q.Get("id_list") != ""
	if listed {
		seen := map[string]bool{}
		ids := strings.Split(q.Get("id_list"), ",")
		for _, s := range ids {
			s = strings.TrimSpace(s)
			id, err := arxiv.Parse(s)
			if err != nil {
				atomError(w, "incorrect_id_format_for_"+s, "incorrect id format for "+s)
				return
			}
			if e, ok := a.src.ArxivEntry(id.Canonical()); ok && !seen[e.ID] {
				seen[e.ID] = true
				hits = append(hits, e)
			}
		}
		// In date order, not the order asked; the total counts every id
		// asked for, known or not.
		slices.SortStableFunc(hits, func(x, y Entry) int { return x.Published.Compare(y.Published) })
		total = len(ids)
	}
	if sq := strings.TrimSpace(q.Get("search_query")); sq != "" {
		match, msg := parseAtomSearch(sq)
		if match == nil {
			atomError(w, "unsupported_query", msg)
			return
		}
		if !listed {
			hits = slices.Collect(a.src.ArxivEntries())
		}
		hits = slices.DeleteFunc(hits, func(e Entry) bool { return !match(e) })
		if !listed {
			sortEntries(hits, "submittedDate", "descending")
		}
		total = len(hits)
	}
	if sb := q.Get("sortBy"); sb != "" && sb != "relevance" {
		if sb != "submittedDate" && sb != "lastUpdatedDate" {
			atomError(w, "sortBy_must_be_in_relevance,_lastUpdatedDate,_submittedDate", "sortBy must be in relevance, lastUpdatedDate, submittedDate")
			return
		}
		sortEntries(hits, sb, q.Get("sortOrder"))
	}
	if total < 0 {
		total = len(hits)
	}

	page := hits[min(start, len(hits)):min(start+maxResults, len(hits))]
	var b strings.Builder
	query := fmt.Sprintf("search_query=%s&id_list=%s&start=%d&max_results=%d", q.Get("search_query"), q.Get("id_list"), start, maxResults)
	sum := sha1.Sum([]byte(query))
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">` + "\n")
	fmt.Fprintf(&b, "  <link href=\"http://arxiv.org/api/query?%s\" rel=\"self\" type=\"application/atom+xml\"/>\n", html.EscapeString(url.QueryEscape(query)))
	fmt.Fprintf(&b, "  <title type=\"html\">ArXiv Query: %s</title>\n", html.EscapeString(query))
	fmt.Fprintf(&b, "  <id>http://arxiv.org/api/%s</id>\n", base64.RawStdEncoding.EncodeToString(sum[:]))
	fmt.Fprintf(&b, "  <updated>%s</updated>\n", AtomUpdated)
	fmt.Fprintf(&b, "  <opensearch:totalResults>%d</opensearch:totalResults>\n", total)
	fmt.Fprintf(&b, "  <opensearch:startIndex>%d</opensearch:startIndex>\n", start)
	fmt.Fprintf(&b, "  <opensearch:itemsPerPage>%d</opensearch:itemsPerPage>\n", maxResults)
	for _, e := range page {
		b.WriteString("  <entry>")
		b.WriteString(e.XML)
		b.WriteString("</entry>\n")
	}
	b.WriteString("</feed>\n")
	writeAtom(w, http.StatusOK, b.String())
}

// atomInt reads a non-negative integer parameter, def when absent.
func atomInt(q url.Values, name string, def int) (int, bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

func sortEntries(hits []Entry, by, order string) {
	key := func(e Entry) time.Time {
		if by == "lastUpdatedDate" {
			return e.Updated
		}
		return e.Published
	}
	slices.SortStableFunc(hits, func(a, b Entry) int {
		c := key(a).Compare(key(b))
		if order != "ascending" {
			c = -c
		}
		return c
	})
}

// parseAtomSearch compiles a search_query of cat: and submittedDate: terms
// joined by AND. It returns nil and the reason for anything else.
func parseAtomSearch(sq string) (func(Entry) bool, string) {
	var preds []func(Entry) bool
	for _, term := range strings.Split(sq, " AND ") {
		term = strings.TrimSpace(term)
		field, val, ok := strings.Cut(term, ":")
		if !ok || strings.Contains(term, " OR ") || strings.Contains(term, " ANDNOT ") || strings.HasPrefix(term, "(") {
			return nil, fmt.Sprintf("the simulated API supports only cat: and submittedDate: terms joined by AND, not %q", term)
		}
		switch field {
		case "cat":
			cat := val
			preds = append(preds, func(e Entry) bool {
				return slices.ContainsFunc(e.Categories, func(c string) bool {
					if prefix, ok := strings.CutSuffix(cat, "*"); ok {
						return strings.HasPrefix(c, prefix)
					}
					return c == cat
				})
			})
		case "submittedDate":
			from, to, ok := atomDateRange(val)
			if !ok {
				return nil, fmt.Sprintf("submittedDate wants [YYYYMMDDhhmm TO YYYYMMDDhhmm], not %q", val)
			}
			preds = append(preds, func(e Entry) bool {
				t := e.Published.UTC().Truncate(time.Minute)
				return !t.Before(from) && !t.After(to)
			})
		default:
			return nil, fmt.Sprintf("the simulated API has no full-text search; field %q is not supported", field)
		}
	}
	return func(e Entry) bool {
		for _, p := range preds {
			if !p(e) {
				return false
			}
		}
		return true
	}, ""
}

// atomDateRange parses "[202501010000 TO 202512312359]"; dates may also be
// YYYYMMDD or YYYYMMDDhhmmss.
func atomDateRange(v string) (from, to time.Time, ok bool) {
	v, ok1 := strings.CutPrefix(strings.TrimSpace(v), "[")
	v, ok2 := strings.CutSuffix(v, "]")
	a, b, ok3 := strings.Cut(v, " TO ")
	if !ok1 || !ok2 || !ok3 {
		return from, to, false
	}
	parse := func(s string) (time.Time, bool) {
		s = strings.TrimSpace(s)
		for _, layout := range []string{"20060102150405", "200601021504", "20060102"} {
			if len(s) == len(layout) {
				t, err := time.Parse(layout, s)
				return t, err == nil
			}
		}
		return time.Time{}, false
	}
	from, ok1 = parse(a)
	to, ok2 = parse(b)
	return from, to, ok1 && ok2
}

// atomError answers 400 with an error feed, as the arXiv API does.
func atomError(w http.ResponseWriter, code, msg string) {
	id := "http://arxiv.org/api/errors#" + strings.ReplaceAll(code, " ", "_")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">` + "\n")
	b.WriteString("  <title type=\"html\">ArXiv Query: error</title>\n")
	fmt.Fprintf(&b, "  <id>%s</id>\n  <updated>%s</updated>\n", html.EscapeString(id), AtomUpdated)
	b.WriteString("  <opensearch:totalResults>1</opensearch:totalResults>\n  <opensearch:startIndex>0</opensearch:startIndex>\n  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n")
	fmt.Fprintf(&b, "  <entry>\n    <id>%s</id>\n    <title>Error</title>\n    <summary>%s</summary>\n    <updated>%s</updated>\n", html.EscapeString(id), html.EscapeString(msg), AtomUpdated)
	fmt.Fprintf(&b, "    <link href=\"%s\" rel=\"alternate\" type=\"text/html\"/>\n    <author>\n      <name>arXiv api core</name>\n    </author>\n  </entry>\n</feed>\n", html.EscapeString(id))
	writeAtom(w, http.StatusBadRequest, b.String())
}

func writeAtom(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}
