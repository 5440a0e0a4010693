package dataset

import (
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Identity kinds: the ways two records can name the same paper.
const (
	MatchArxivID = "arxiv_id"    // arXiv ID without version
	MatchDOI     = "doi"         // DOI, lower case, resolver prefix removed
	MatchS2      = "s2_paper_id" // Semantic Scholar paper ID
	MatchTitle   = "title"       // normalized title (record.NormalizeTitle)
)

// minTitleWords and minTitleLen keep short, generic titles ("Introduction",
// "GPT-4") out of title identity, where they would match unrelated papers.
const (
	minTitleWords = 3
	minTitleLen   = 16
)

// identity is one key under which a paper is known.
type identity struct {
	kind, value string
}

func (id identity) String() string { return id.kind + ":" + id.value }

// paperIdentities returns the keys of a paper: its versionless arXiv ID,
// normalized DOI, S2 paper ID and normalized title, each when known.
func paperIdentities(arxivID, doi, s2, title string) []identity {
	var ids []identity
	if a := arxiv.Normalize(arxivID); a != "" {
		ids = append(ids, identity{MatchArxivID, a})
	}
	if d := record.NormalizeDOI(doi); d != "" {
		ids = append(ids, identity{MatchDOI, d})
	}
	if s := strings.TrimSpace(s2); s != "" {
		ids = append(ids, identity{MatchS2, strings.ToLower(s)})
	}
	if t := titleKey(title); t != "" {
		ids = append(ids, identity{MatchTitle, t})
	}
	return ids
}

// titleKey is the normalized title used as an identity, or "" when the
// title is too short to identify a paper.
func titleKey(title string) string {
	t := record.NormalizeTitle(title)
	if len(t) < minTitleLen || len(strings.Fields(t)) < minTitleWords {
		return ""
	}
	return t
}

func targetIdentities(t record.InstanceTarget) []identity {
	return paperIdentities(t.ArxivID, t.DOI, t.S2PaperID, t.Title)
}

func sourceIdentities(s record.InstanceSource) []identity {
	return paperIdentities(s.ArxivID, s.DOI, s.S2PaperID, s.Title)
}

// sharedIdentity returns the first key of a that b also has.
func sharedIdentity(a, b []identity) (identity, bool) {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return x, true
			}
		}
	}
	return identity{}, false
}

// InstanceID returns the instance ID of a target: its arXiv ID without
// version ("2507.11127", "hep-th/9901001"), or "" when targetID is not an
// arXiv ID. Every version of a paper maps to the same instance.
func InstanceID(targetID string) string { return arxiv.Normalize(targetID) }
