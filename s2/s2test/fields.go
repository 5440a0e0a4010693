package s2test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Field names of the Graph API, from its swagger.
var (
	// EdgeFields are the fields of a reference edge itself.
	EdgeFields = []string{"contexts", "intents", "contextsWithIntent", "isInfluential"}
	// PaperFields are the fields of a BasePaper: of a cited paper, and of
	// /paper and /paper/batch.
	PaperFields = []string{
		"paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue",
		"publicationVenue", "year", "referenceCount", "citationCount",
		"influentialCitationCount", "isOpenAccess", "openAccessPdf", "fieldsOfStudy",
		"s2FieldsOfStudy", "publicationTypes", "publicationDate", "journal",
		"citationStyles", "authors",
	}
	// FullPaperFields are valid on /paper and /paper/batch only.
	FullPaperFields = []string{"tldr", "embedding", "citations", "references"}
	// AuthorFields may follow "authors." on /paper and /paper/batch.
	AuthorFields = []string{
		"authorId", "externalIds", "url", "name", "affiliations", "homepage",
		"paperCount", "citationCount", "hIndex",
	}
)

type endpoint int

const (
	paperEndpoint endpoint = iota
	referencesEndpoint
)

// validField reports whether the endpoint knows field f.
func validField(ep endpoint, f string) bool {
	if ep == referencesEndpoint {
		return slices.Contains(EdgeFields, f) || slices.Contains(PaperFields, f)
	}
	if slices.Contains(PaperFields, f) || slices.Contains(FullPaperFields, f) {
		return true
	}
	// Subfields: authors.name, citations.title, references.year,
	// embedding.specter_v2.
	head, sub, ok := strings.Cut(f, ".")
	if !ok {
		return false
	}
	switch head {
	case "authors":
		return slices.Contains(AuthorFields, sub)
	case "citations", "references":
		return slices.Contains(PaperFields, sub) || strings.HasPrefix(sub, "authors.") && slices.Contains(AuthorFields, sub[len("authors."):])
	case "embedding":
		return sub == "specter_v1" || sub == "specter_v2"
	}
	return false
}

// parseFields returns the fields asked for (nil when none) and the names
// the endpoint does not know.
func parseFields(q url.Values, ep endpoint) (fields, bad []string) {
	raw := q.Get("fields")
	if raw == "" {
		return nil, nil
	}
	for f := range strings.SplitSeq(raw, ",") {
		if f == "" {
			continue
		}
		if !validField(ep, f) {
			bad = append(bad, f)
			continue
		}
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	return fields, bad
}

func badFields(bad []string) answer {
	return errorAnswer(http.StatusBadRequest, "Unrecognized or unsupported fields: ["+strings.Join(bad, ", ")+"]")
}

// projectPaper writes the paper's paperId and the fields asked for (their
// top-level key for subfields), or paperId and title when none are; fields
// the record lacks are left out, except referenceCount, which a registered
// reference list supplies.
func projectPaper(e *entry, fields []string) []byte {
	if fields == nil {
		fields = []string{"title"}
	}
	var keys []string
	for _, f := range fields {
		head, _, _ := strings.Cut(f, ".")
		if !slices.Contains(keys, head) {
			keys = append(keys, head)
		}
	}
	rec := e.record
	if slices.Contains(keys, "referenceCount") && rec["referenceCount"] == nil && e.edges != nil {
		rec = cloneObject(rec)
		rec["referenceCount"] = json.RawMessage(strconv.Itoa(len(e.edges)))
	}
	return writeObject(rec, append([]string{"paperId"}, keys...))
}

// projectEdge writes the edge fields asked for and the cited paper with
// the paper fields asked for.
func projectEdge(e edge, fields []string) []byte {
	var edgeKeys, paperKeys []string
	for _, f := range fields {
		if slices.Contains(EdgeFields, f) {
			edgeKeys = append(edgeKeys, f)
		} else if f != "paperId" {
			paperKeys = append(paperKeys, f)
		}
	}
	if fields == nil {
		paperKeys = []string{"title"}
	}
	var b bytes.Buffer
	obj := writeObject(e.fields, edgeKeys)
	b.Write(obj[:len(obj)-1])
	if len(obj) > 2 {
		b.WriteByte(',')
	}
	b.WriteString(`"citedPaper":`)
	if e.cited == nil {
		b.WriteString("null")
	} else {
		b.Write(writeObject(e.cited, append([]string{"paperId"}, paperKeys...)))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeObject writes the keys of o that it has, in the order given.
func writeObject(o map[string]json.RawMessage, keys []string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, k := range keys {
		v, ok := o[k]
		if !ok {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func cloneObject(o map[string]json.RawMessage) map[string]json.RawMessage {
	c := make(map[string]json.RawMessage, len(o)+1)
	for k, v := range o {
		c[k] = v
	}
	return c
}
