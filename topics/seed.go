package topics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Prefixes of a reference's identity key (see Identify).
const (
	IdentityS2    = "s2:"
	IdentityArxiv = "arxiv:"
	IdentityDOI   = "doi:"
)

// Seed is a candidate seed paper: a target with its metadata and its
// influential-citation set.
type Seed struct {
	ID              string // versionless arXiv ID (the store item)
	Title           string
	Venue           string // Semantic Scholar's venue
	Year            int    // publication year (S2's, else the arXiv v1 year)
	Published       string // arXiv v1 date
	PrimaryCategory string
	CitationCount   *int
	S2Status        string
	// Influential is the sorted, de-duplicated set of identity keys of the
	// references Semantic Scholar marks influential.
	Influential []string
	// Unidentified counts influential references with no S2 paper ID,
	// arXiv ID or DOI: they cannot be compared across papers and are left
	// out of Influential.
	Unidentified int
	// S2PaperID is the seed's own Semantic Scholar ID.
	S2PaperID string
	// Split is the seed's dataset split (by its arXiv v1 date), and
	// OtherSplit counts the influential references left out of Influential
	// because they belong to a split the build does not draw on.
	Split      string
	OtherSplit int
}

// Ref is what the citation graphs say about one influential reference,
// merged over every edge that names it.
type Ref struct {
	Key       string
	S2PaperID string
	ArxivID   string
	DOI       string
	Title     string
	Year      int
	Abstract  string
	// PublicationDate is Semantic Scholar's (YYYY-MM-DD), and Split the
	// split the paper belongs to (see splitOfRef).
	PublicationDate string
	Split           string
}

// Identities resolves reference edges to identity keys. An edge is known
// by its S2 paper ID; an edge without one by its versionless arXiv ID and
// then its DOI — unless another edge of the same graphs carries that arXiv
// ID (or DOI) together with exactly one S2 paper ID, in which case the edge
// takes that S2 ID, so one paper is one key whichever way a graph names it.
type Identities struct {
	byArxiv map[string]map[string]bool // arXiv ID -> S2 paper IDs
	byDOI   map[string]map[string]bool
}

// NewIdentities learns the aliases of the influential edges of graphs.
func NewIdentities(graphs []*record.Graph) *Identities {
	ids := &Identities{byArxiv: map[string]map[string]bool{}, byDOI: map[string]map[string]bool{}}
	add := func(m map[string]map[string]bool, k, s2 string) {
		if k == "" {
			return
		}
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][s2] = true
	}
	for _, g := range graphs {
		for _, e := range g.Edges {
			s2 := strings.TrimSpace(str(e.S2PaperID))
			if !e.IsInfluential || s2 == "" {
				continue
			}
			add(ids.byArxiv, arxiv.Normalize(str(e.ArxivID)), s2)
			add(ids.byDOI, record.NormalizeDOI(str(e.DOI)), s2)
		}
	}
	return ids
}

// Identify returns the identity key of an edge: "s2:"+paperId,
// "arxiv:"+versionless ID or "doi:"+normalized DOI; "" when the edge has
// none of them.
func (ids *Identities) Identify(e record.Edge) string {
	if s2 := strings.TrimSpace(str(e.S2PaperID)); s2 != "" {
		return IdentityS2 + s2
	}
	only := func(m map[string]bool) (string, bool) {
		if len(m) != 1 {
			return "", false
		}
		for k := range m {
			return k, true
		}
		return "", false
	}
	if a := arxiv.Normalize(str(e.ArxivID)); a != "" {
		if s2, ok := only(ids.byArxiv[a]); ok {
			return IdentityS2 + s2
		}
		return IdentityArxiv + a
	}
	if d := record.NormalizeDOI(str(e.DOI)); d != "" {
		if s2, ok := only(ids.byDOI[d]); ok {
			return IdentityS2 + s2
		}
		return IdentityDOI + d
	}
	return ""
}

// NewSeed returns the Seed of a target's Graph, with its references'
// identities resolved by ids; refs, if not nil, collects what the
// graph says of each influential reference (first non-empty value of
// each field wins, so pass graphs in a fixed order).
func NewSeed(g *record.Graph, ids *Identities, refs map[string]*Ref) Seed {
	m := g.Meta
	s := Seed{
		ID: g.TargetID, Title: m.Title, Venue: strings.TrimSpace(m.Venue), Year: m.Year,
		Published: m.Published, PrimaryCategory: m.PrimaryCategory, CitationCount: m.CitationCount,
		S2Status: g.S2Status, S2PaperID: m.S2PaperID,
	}
	if s.Year == 0 && len(m.Published) >= 4 {
		s.Year, _ = strconv.Atoi(m.Published[:4])
	}
	set := map[string]bool{}
	for _, e := range g.Edges {
		if !e.IsInfluential {
			continue
		}
		k := ids.Identify(e)
		if k == "" {
			s.Unidentified++
			continue
		}
		set[k] = true
		if refs != nil {
			mergeRef(refs, k, e)
		}
	}
	s.Influential = sortedKeys(set)
	return s
}

func mergeRef(refs map[string]*Ref, key string, e record.Edge) {
	r := refs[key]
	if r == nil {
		r = &Ref{Key: key}
		refs[key] = r
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = strings.TrimSpace(v)
		}
	}
	fill(&r.S2PaperID, str(e.S2PaperID))
	fill(&r.ArxivID, arxiv.Normalize(str(e.ArxivID)))
	fill(&r.DOI, record.NormalizeDOI(str(e.DOI)))
	fill(&r.Title, str(e.Title))
	fill(&r.Abstract, str(e.Abstract))
	fill(&r.PublicationDate, str(e.PublicationDate))
	if r.Year == 0 && e.Year != nil {
		r.Year = *e.Year
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Reasons a seed is not used (SeedStatus.Reason).
const (
	ReasonKept          = "kept"
	ReasonInvalidID     = "invalid_id"
	ReasonNoGraph       = "no_citation_graph"
	ReasonCitegraph     = "citegraph_failed"
	ReasonNotPublished  = "not_published"
	ReasonNotTopPercent = "below_top_percent"
	ReasonNoCitations   = "no_citation_count"
	ReasonNoYear        = "no_year"
	ReasonNoInfluential = "no_influential_references"
)

// preprintServer reports whether a venue folded by foldVenue names a
// preprint server, which Semantic Scholar gives as the venue of a
// preprint: a name containing "rxiv" (arXiv in any spelling, "arXiv.org",
// bioRxiv, "medRxiv : the preprint server for health sciences", ChemRxiv,
// PsyArXiv, SocArXiv, TechRxiv, EarthArXiv, engrXiv) or "preprint"
// ("ArXiv preprint", Preprints.org, OSF Preprints), starting with
// "corrabs" ("CoRR abs/…") or "ssrn" ("SSRN Electronic Journal"), or one
// of CoRR, Research Square and Authorea.
func preprintServer(f string) bool {
	switch f {
	case "corr", "researchsquare", "authorea":
		return true
	}
	return strings.Contains(f, "rxiv") || strings.Contains(f, "preprint") ||
		strings.HasPrefix(f, "corrabs") || strings.HasPrefix(f, "ssrn")
}

// foldVenue lower-cases a venue and keeps only its letters and digits, so
// "arXiv.org", "ArXiv" and "arxiv" fold alike.
func foldVenue(v string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(v) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Published reports whether venue (Semantic Scholar's venue of a paper)
// names a publication venue: it is not empty and not a preprint server
// (see preprintServer), and why not when it is not.
func Published(venue string) (bool, string) {
	f := foldVenue(venue)
	switch {
	case f == "":
		return false, "no venue in Semantic Scholar's metadata"
	case preprintServer(f):
		return false, fmt.Sprintf("venue %q is a preprint server", strings.TrimSpace(venue))
	}
	return true, ""
}

// SeedStatus is the verdict on one seed candidate: kept, or the reason it
// was left out. It is written to seeds.jsonl so the filter can be
// checked.
type SeedStatus struct {
	ID              string   `json:"id"`
	Title           string   `json:"title,omitempty"`
	Venue           string   `json:"venue,omitempty"`
	Year            int      `json:"year,omitempty"`
	PrimaryCategory string   `json:"primary_category,omitempty"`
	CitationCount   *int     `json:"citation_count,omitempty"`
	Status          string   `json:"status"` // ReasonKept or the reason
	Detail          string   `json:"detail,omitempty"`
	Influential     []string `json:"influential,omitempty"` // the kept seed's set
	Unidentified    int      `json:"unidentified_influential,omitempty"`
	Split           string   `json:"split,omitempty"`
	// OtherSplit counts influential references left out as papers of a
	// split the build does not draw on.
	OtherSplit int `json:"other_split_influential,omitempty"`
}

func statusOf(s Seed, reason, detail string) SeedStatus {
	st := SeedStatus{
		ID: s.ID, Title: s.Title, Venue: s.Venue, Year: s.Year, PrimaryCategory: s.PrimaryCategory,
		CitationCount: s.CitationCount, Status: reason, Detail: detail, Unidentified: s.Unidentified,
		Split: s.Split, OtherSplit: s.OtherSplit,
	}
	if reason == ReasonKept {
		st.Influential = s.Influential
	}
	return st
}

// Filter keeps the seeds that have influential references, are published
// (when opt.PublishedOnly; see Published) and rank in the top
// opt.TopPercent by citation count within their year (when it is set),
// and returns every seed's status. Seeds come back sorted by ID.
//
// The top k% of a year's n ranked papers are those whose citation count
// is at least that of the paper ranked ceil(n·k/100) by count: papers
// tied with it are all kept, so the cut never depends on input order.
// Papers without a citation count or a year cannot be ranked and are left
// out. Ranking happens after the publication filter, among the papers it
// kept.
func Filter(seeds []Seed, opt Options) (kept []Seed, status []SeedStatus) {
	seeds = slices.Clone(seeds)
	slices.SortFunc(seeds, func(a, b Seed) int { return cmp.Compare(a.ID, b.ID) })
	var pass []Seed
	for _, s := range seeds {
		if len(s.Influential) == 0 {
			status = append(status, statusOf(s, ReasonNoInfluential, "semantic scholar status "+s.S2Status))
			continue
		}
		if opt.PublishedOnly {
			if ok, why := Published(s.Venue); !ok {
				status = append(status, statusOf(s, ReasonNotPublished, why))
				continue
			}
		}
		pass = append(pass, s)
	}
	if opt.TopPercent > 0 {
		var st []SeedStatus
		pass, st = topPercent(pass, opt.TopPercent)
		status = append(status, st...)
	}
	for _, s := range pass {
		status = append(status, statusOf(s, ReasonKept, ""))
	}
	slices.SortStableFunc(status, func(a, b SeedStatus) int { return cmp.Compare(a.ID, b.ID) })
	return pass, status
}

// topPercent applies the per-year citation cut; seeds are sorted by ID.
func topPercent(seeds []Seed, pct float64) (kept []Seed, dropped []SeedStatus) {
	byYear := map[int][]int{} // year -> counts
	for _, s := range seeds {
		if s.CitationCount != nil && s.Year != 0 {
			byYear[s.Year] = append(byYear[s.Year], *s.CitationCount)
		}
	}
	cut := map[int]int{}
	for y, counts := range byYear {
		slices.SortFunc(counts, func(a, b int) int { return cmp.Compare(b, a) })
		// The epsilon keeps 10% of 30 at 3, not 4, when n·k/100 lands a
		// rounding error above an integer.
		k := int(math.Ceil(float64(len(counts))*pct/100 - 1e-9))
		k = min(max(k, 1), len(counts))
		cut[y] = counts[k-1]
	}
	for _, s := range seeds {
		switch {
		case s.Year == 0:
			dropped = append(dropped, statusOf(s, ReasonNoYear, "no year to rank within"))
		case s.CitationCount == nil:
			dropped = append(dropped, statusOf(s, ReasonNoCitations, "semantic scholar gives no citation count"))
		case *s.CitationCount < cut[s.Year]:
			dropped = append(dropped, statusOf(s, ReasonNotTopPercent,
				fmt.Sprintf("%d citations; the top %g%% of %d's %d ranked papers have %d or more", *s.CitationCount, pct, s.Year, len(byYear[s.Year]), cut[s.Year])))
		default:
			kept = append(kept, s)
		}
	}
	return kept, dropped
}
