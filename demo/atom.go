package demo

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/arxiv"
)

// feedUpdated is the <updated> of every feed: the corpus snapshot date.
const feedUpdated = "2026-07-01T00:00:00-04:00"

// atomHandler serves export.arxiv.org/api/query (GET or POST):
//
//   - id_list=a,b: those papers, in the order given; unknown ids are
//     omitted, malformed ones answer 400 with an error entry as arXiv does.
//     A versioned id returns the stored (latest) entry.
//   - search_query: terms joined by AND, each cat:X (any of a paper's
//     categories; cat:cs.* matches an archive) or
//     submittedDate:[YYYYMMDDhhmm TO YYYYMMDDhhmm] (v1 date, GMT, inclusive).
//     Other fields, OR and ANDNOT answer 400: the demo has no full-text
//     search. With id_list too, the search filters the listed papers.
//   - start, max_results (default 10), sortBy (relevance, submittedDate,
//     lastUpdatedDate) and sortOrder (descending by default). Relevance
//     orders a search by submission date, newest first.
type atomHandler struct{ s *store }

func (h atomHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/query" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		atomError(w, "malformed_request", "malformed request")
		return
	}
	q := r.Form
	start, ok1 := intParam(q, "start", 0)
	maxResults, ok2 := intParam(q, "max_results", 10)
	if !ok1 {
		atomError(w, "start_must_be_an_integer", "start must be an integer")
		return
	}
	if !ok2 || maxResults > 30000 {
		atomError(w, "max_results_must_be_an_integer", "max_results must be an integer from 0 to 30000")
		return
	}

	var hits []int
	listed := q.Get("id_list") != ""
	if listed {
		for _, s := range strings.Split(q.Get("id_list"), ",") {
			s = strings.TrimSpace(s)
			id, err := arxiv.Parse(s)
			if err != nil {
				atomError(w, "incorrect_id_format_for_"+s, "incorrect id format for "+s)
				return
			}
			if i, ok := h.s.entryOf[id.Canonical()]; ok && !slices.Contains(hits, i) {
				hits = append(hits, i)
			}
		}
	}
	if sq := strings.TrimSpace(q.Get("search_query")); sq != "" {
		match, msg := parseSearch(sq)
		if match == nil {
			atomError(w, "unsupported_query", msg)
			return
		}
		if !listed {
			for i := range h.s.entries {
				hits = append(hits, i)
			}
		}
		hits = slices.DeleteFunc(hits, func(i int) bool { return !match(h.s.entries[i]) })
		if !listed {
			h.sort(hits, "submittedDate", "descending")
		}
	}
	if sb := q.Get("sortBy"); sb != "" && sb != "relevance" {
		if sb != "submittedDate" && sb != "lastUpdatedDate" {
			atomError(w, "sortBy_must_be_in_relevance,_lastUpdatedDate,_submittedDate", "sortBy must be in relevance, lastUpdatedDate, submittedDate")
			return
		}
		h.sort(hits, sb, q.Get("sortOrder"))
	}

	total := len(hits)
	page := hits[min(start, total):min(start+maxResults, total)]
	var b strings.Builder
	query := fmt.Sprintf("search_query=%s&id_list=%s&start=%d&max_results=%d", q.Get("search_query"), q.Get("id_list"), start, maxResults)
	sum := sha1.Sum([]byte(query))
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">` + "\n")
	fmt.Fprintf(&b, "  <link href=\"http://arxiv.org/api/query?%s\" rel=\"self\" type=\"application/atom+xml\"/>\n", html.EscapeString(url.QueryEscape(query)))
	fmt.Fprintf(&b, "  <title type=\"html\">ArXiv Query: %s</title>\n", html.EscapeString(query))
	fmt.Fprintf(&b, "  <id>http://arxiv.org/api/%s</id>\n", base64.RawStdEncoding.EncodeToString(sum[:]))
	fmt.Fprintf(&b, "  <updated>%s</updated>\n", feedUpdated)
	fmt.Fprintf(&b, "  <opensearch:totalResults>%d</opensearch:totalResults>\n", total)
	fmt.Fprintf(&b, "  <opensearch:startIndex>%d</opensearch:startIndex>\n", start)
	fmt.Fprintf(&b, "  <opensearch:itemsPerPage>%d</opensearch:itemsPerPage>\n", maxResults)
	for _, i := range page {
		b.WriteString("  <entry>")
		b.WriteString(h.s.entries[i].xml)
		b.WriteString("</entry>\n")
	}
	b.WriteString("</feed>\n")
	writeAtom(w, http.StatusOK, b.String())
}

func (h atomHandler) sort(hits []int, by, order string) {
	key := func(i int) time.Time {
		if by == "lastUpdatedDate" {
			return h.s.entries[i].updated
		}
		return h.s.entries[i].published
	}
	slices.SortStableFunc(hits, func(a, b int) int {
		c := key(a).Compare(key(b))
		if order != "ascending" {
			c = -c
		}
		return c
	})
}

// parseSearch compiles a search_query of cat: and submittedDate: terms
// joined by AND. It returns nil and the reason for anything else.
func parseSearch(sq string) (func(entry) bool, string) {
	var preds []func(entry) bool
	for _, term := range strings.Split(sq, " AND ") {
		term = strings.TrimSpace(term)
		field, val, ok := strings.Cut(term, ":")
		if !ok || strings.Contains(term, " OR ") || strings.Contains(term, " ANDNOT ") || strings.HasPrefix(term, "(") {
			return nil, fmt.Sprintf("the demo server supports only cat: and submittedDate: terms joined by AND, not %q", term)
		}
		switch field {
		case "cat":
			cat := val
			preds = append(preds, func(e entry) bool {
				return slices.ContainsFunc(e.cats, func(c string) bool {
					if prefix, ok := strings.CutSuffix(cat, "*"); ok {
						return strings.HasPrefix(c, prefix)
					}
					return c == cat
				})
			})
		case "submittedDate":
			from, to, ok := dateRange(val)
			if !ok {
				return nil, fmt.Sprintf("submittedDate wants [YYYYMMDDhhmm TO YYYYMMDDhhmm], not %q", val)
			}
			preds = append(preds, func(e entry) bool {
				t := e.published.UTC().Truncate(time.Minute)
				return !t.Before(from) && !t.After(to)
			})
		default:
			return nil, fmt.Sprintf("the demo server has no full-text search; field %q is not supported", field)
		}
	}
	return func(e entry) bool {
		for _, p := range preds {
			if !p(e) {
				return false
			}
		}
		return true
	}, ""
}

// dateRange parses "[202501010000 TO 202512312359]"; dates may also be
// YYYYMMDD or YYYYMMDDhhmmss.
func dateRange(v string) (from, to time.Time, ok bool) {
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
	fmt.Fprintf(&b, "  <id>%s</id>\n  <updated>%s</updated>\n", html.EscapeString(id), feedUpdated)
	b.WriteString("  <opensearch:totalResults>1</opensearch:totalResults>\n  <opensearch:startIndex>0</opensearch:startIndex>\n  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n")
	fmt.Fprintf(&b, "  <entry>\n    <id>%s</id>\n    <title>Error</title>\n    <summary>%s</summary>\n    <updated>%s</updated>\n", html.EscapeString(id), html.EscapeString(msg), feedUpdated)
	fmt.Fprintf(&b, "    <link href=\"%s\" rel=\"alternate\" type=\"text/html\"/>\n    <author>\n      <name>arXiv api core</name>\n    </author>\n  </entry>\n</feed>\n", html.EscapeString(id))
	writeAtom(w, http.StatusBadRequest, b.String())
}

func writeAtom(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}
