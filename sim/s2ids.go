package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
)

// canonicalS2ID folds the forms of one S2 paper id to one key: prefixes
// case-insensitive, arXiv versions and the subject class of old-style ids
// dropped, DOIs lower-cased (DOIs are case-insensitive), a bare DOI taken
// as DOI:, URL: of an arXiv or Semantic Scholar page resolved. An id of no
// known form is returned as is and matches only itself.
func canonicalS2ID(id string) string {
	id = strings.TrimSpace(id)
	if isHex40(id) {
		return strings.ToLower(id)
	}
	if prefix, rest, ok := strings.Cut(id, ":"); ok {
		switch strings.ToUpper(prefix) {
		case "ARXIV":
			if a := arxiv.Normalize(rest); a != "" {
				return "ARXIV:" + a
			}
			return "ARXIV:" + rest
		case "CORPUSID":
			return "CorpusId:" + rest
		case "DOI":
			return "DOI:" + strings.ToLower(rest)
		case "MAG", "ACL", "PMID", "PMCID":
			return strings.ToUpper(prefix) + ":" + rest
		case "URL":
			return urlS2ID(rest)
		}
	}
	if strings.HasPrefix(id, "10.") {
		return "DOI:" + strings.ToLower(id)
	}
	return id
}

// urlS2ID resolves the URL: form for arxiv.org abstract, PDF and HTML
// pages and semanticscholar.org paper pages.
func urlS2ID(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "URL:" + raw
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	p := strings.Trim(u.Path, "/")
	switch {
	case host == "arxiv.org":
		for _, pre := range []string{"abs/", "pdf/", "html/"} {
			if rest, ok := strings.CutPrefix(p, pre); ok {
				if a := arxiv.Normalize(strings.TrimSuffix(rest, ".pdf")); a != "" {
					return "ARXIV:" + a
				}
			}
		}
	case host == "semanticscholar.org" && strings.HasPrefix(p, "paper/"):
		if last := p[strings.LastIndexByte(p, '/')+1:]; isHex40(last) {
			return strings.ToLower(last)
		}
	}
	return "URL:" + raw
}

// recordS2IDs returns the ids a paper record answers to: its paperId,
// corpusId and external ids.
func recordS2IDs(rec object) []string {
	var ids []string
	if pid := rec.stringOf("paperId"); pid != "" {
		ids = append(ids, pid)
	}
	if c := numberValue(rec.get("corpusId")); c != "" {
		ids = append(ids, "CorpusId:"+c)
	}
	var x map[string]json.RawMessage
	if json.Unmarshal(rec.get("externalIds"), &x) == nil {
		prefixes := map[string]string{
			"ArXiv": "ARXIV:", "DOI": "DOI:", "MAG": "MAG:", "ACL": "ACL:",
			"PubMed": "PMID:", "PubMedCentral": "PMCID:", "CorpusId": "CorpusId:",
		}
		for k, v := range x {
			if p, ok := prefixes[k]; ok {
				if s := numberValue(v); s != "" {
					ids = append(ids, p+s)
				}
			}
		}
	}
	return ids
}

// externalIDsOf returns the externalIds a paper addressed by id has at
// least, or nil.
func externalIDsOf(id string) map[string]any {
	prefix, rest, _ := strings.Cut(canonicalS2ID(id), ":")
	switch prefix {
	case "ARXIV":
		return map[string]any{"ArXiv": rest}
	case "DOI":
		// The id's own spelling: canonicalS2ID lower-cases.
		_, orig, ok := strings.Cut(strings.TrimSpace(id), ":")
		if !ok || !strings.EqualFold(orig, rest) {
			orig = strings.TrimSpace(id)
		}
		return map[string]any{"DOI": orig}
	case "CorpusId":
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return map[string]any{"CorpusId": n}
		}
	}
	return nil
}

// derivedPaperID returns a stable 40-hex paperId for a paper known by id.
func derivedPaperID(id string) string {
	sum := sha1.Sum([]byte("sim:" + canonicalS2ID(id)))
	return hex.EncodeToString(sum[:])
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// numberValue returns a JSON number or string as text, "" for anything
// else (S2 sends CorpusId as a number, other ids as strings).
func numberValue(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}
