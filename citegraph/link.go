package citegraph

import (
	"strings"
	"unicode"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Ref is one Semantic Scholar reference edge, reduced to what linking and
// the Edge record need.
type Ref struct {
	PaperID         string // "" for an unresolved reference
	CorpusID        *int64
	ArxivID         string
	DOI             string
	Title           string // for unresolved references, a raw bibliography fragment
	Abstract        string
	Venue           string
	Year            int
	PublicationDate string
	OpenAccessPDF   string
	Authors         []string
	Intents         []string
	Contexts        []string
	IsInfluential   bool
}

// bibEntry is a bibliography entry with its folded fields.
type bibEntry struct {
	ref    *record.Reference
	arxiv  string
	doi    string
	title  string // normalized parsed title
	text   string // normalized entry text
	linked bool
}

// Link joins S2 reference edges to the target's bibliography: by arXiv ID,
// then DOI, then normalized title (equal, truncated, nearly equal, or
// contained in the entry's text). Each entry joins at most one edge. Every
// S2 edge and every bibliography entry becomes one Edge, in bibliography
// order followed by the S2 edges the bibliography lacks; mention sentences
// from the HTML and S2 contexts are merged without duplicates.
func Link(targetID string, doc *record.Document, refs []Ref) ([]record.Edge, record.LinkReport) {
	var bib []*bibEntry
	if doc != nil {
		for i := range doc.References {
			r := &doc.References[i]
			bib = append(bib, &bibEntry{
				ref:   r,
				arxiv: arxiv.Normalize(r.ArxivID),
				doi:   record.NormalizeDOI(r.DOI),
				title: linkTitle(r.Title),
				text:  linkTitle(r.Text),
			})
		}
	}
	rep := record.LinkReport{S2Edges: len(refs), Bibliography: len(bib)}
	match := make([]*bibEntry, len(refs))
	how := make([]string, len(refs))

	// Strongest evidence first, so a title match never takes an entry an
	// identifier would have claimed.
	for i, r := range refs {
		a := arxiv.Normalize(r.ArxivID)
		if a == "" {
			continue
		}
		for _, b := range bib {
			if !b.linked && b.arxiv == a {
				b.linked, match[i], how[i] = true, b, record.LinkArxivID
				break
			}
		}
	}
	for i, r := range refs {
		d := record.NormalizeDOI(r.DOI)
		if match[i] != nil || d == "" {
			continue
		}
		for _, b := range bib {
			if !b.linked && b.doi == d {
				b.linked, match[i], how[i] = true, b, record.LinkDOI
				break
			}
		}
	}
	for i, r := range refs {
		if match[i] != nil {
			continue
		}
		t := linkTitle(r.Title)
		if t == "" {
			continue
		}
		var best *bibEntry
		bestScore := 0
		for _, b := range bib {
			if b.linked {
				continue
			}
			score := 0
			switch {
			case b.title != "" && (b.title == t || compact(b.title) == compact(t)):
				// Equal, or equal but for spacing: "$\alpha$ILP" comes
				// out of the HTML as "\alpha ILP", "neuro-symbolic" is
				// "neurosymbolic" elsewhere.
				score = 3
			case containsTitle(b.text, t):
				score = 2
			case titleMatch(b.title, t):
				score = 1
			case shortPrefix(b.title, t) && b.ref.Year != 0 && abs(b.ref.Year-r.Year) <= 1:
				// "A decomposable attention model" cited for S2's "A
				// Decomposable Attention Model for Natural Language
				// Inference": a short prefix, trusted when the years agree.
				score = 1
			}
			// An entry naming another paper by its identifier is not this one.
			if score > 0 && conflicting(b, r) {
				score = 0
			}
			if score > bestScore {
				best, bestScore = b, score
			}
		}
		if best != nil {
			best.linked, match[i], how[i] = true, best, record.LinkTitle
		}
	}

	mentions := map[string][]record.Mention{}
	if doc != nil {
		for _, m := range doc.Mentions {
			for _, k := range m.RefKeys {
				mentions[k] = append(mentions[k], m)
			}
		}
	}
	byEntry := map[*bibEntry]int{}
	for i, b := range match {
		if b != nil {
			byEntry[b] = i
		}
	}

	var edges []record.Edge
	for _, b := range bib {
		i, ok := byEntry[b]
		if !ok {
			rep.BibOnly++
			edges = append(edges, bibEdge(targetID, b.ref, mentions[b.ref.Key]))
			continue
		}
		edges = append(edges, s2Edge(targetID, refs[i], b.ref, how[i], mentions[b.ref.Key]))
	}
	for i, r := range refs {
		switch how[i] {
		case record.LinkArxivID:
			rep.ByArxivID++
		case record.LinkDOI:
			rep.ByDOI++
		case record.LinkTitle:
			rep.ByTitle++
		}
		if r.PaperID == "" {
			rep.Unresolved++
		}
		if r.ArxivID != "" || r.DOI != "" {
			rep.WithID++
			if match[i] != nil {
				rep.WithIDLinked++
			}
		}
		if match[i] == nil {
			rep.S2Only++
			edges = append(edges, s2Edge(targetID, r, nil, record.LinkNone, nil))
		}
	}
	return edges, rep
}

// linkTitle folds a title for linking: LaTeX's Greek letters become the
// letters S2 writes ("\\alpha ILP" and "αILP" alike), then NormalizeTitle,
// which would drop the command and lose the letter.
func linkTitle(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return record.NormalizeTitle(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		if g, ok := greekLetters[s[i+1:j]]; ok {
			b.WriteRune(g)
			i = j - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return record.NormalizeTitle(b.String())
}

// greekLetters maps LaTeX's Greek letter commands to the letters.
var greekLetters = map[string]rune{
	"alpha": 'α', "beta": 'β', "gamma": 'γ', "delta": 'δ', "epsilon": 'ε', "varepsilon": 'ε',
	"zeta": 'ζ', "eta": 'η', "theta": 'θ', "vartheta": 'θ', "iota": 'ι', "kappa": 'κ',
	"lambda": 'λ', "mu": 'μ', "nu": 'ν', "xi": 'ξ', "pi": 'π', "varpi": 'π', "rho": 'ρ',
	"varrho": 'ρ', "sigma": 'σ', "varsigma": 'σ', "tau": 'τ', "upsilon": 'υ', "phi": 'φ',
	"varphi": 'φ', "chi": 'χ', "psi": 'ψ', "omega": 'ω',
	"Gamma": 'Γ', "Delta": 'Δ', "Theta": 'Θ', "Lambda": 'Λ', "Xi": 'Ξ', "Pi": 'Π',
	"Sigma": 'Σ', "Upsilon": 'Υ', "Phi": 'Φ', "Psi": 'Ψ', "Omega": 'Ω',
}

// compact removes the spaces of a normalized title.
func compact(s string) string { return strings.ReplaceAll(s, " ", "") }

// conflicting reports whether entry b carries an identifier that names a
// different paper than r.
func conflicting(b *bibEntry, r Ref) bool {
	if a := arxiv.Normalize(r.ArxivID); a != "" && b.arxiv != "" && a != b.arxiv {
		return true
	}
	if d := record.NormalizeDOI(r.DOI); d != "" && b.doi != "" && d != b.doi {
		return true
	}
	return false
}

func bibEdge(targetID string, ref *record.Reference, ms []record.Mention) record.Edge {
	e := record.Edge{
		TargetID: targetID,
		RefKey:   ptr(ref.Key),
		ArxivID:  nonEmpty(ref.ArxivID),
		DOI:      nonEmpty(ref.DOI),
		Title:    nonEmpty(ref.Title),
		Intents:  []string{},
		Link:     record.LinkNone,
	}
	if ref.Year != 0 {
		e.Year = ptr(ref.Year)
	}
	e.Contexts, e.MentionSections = mergeContexts(ms, nil)
	return e
}

func s2Edge(targetID string, r Ref, ref *record.Reference, link string, ms []record.Mention) record.Edge {
	e := record.Edge{
		TargetID:        targetID,
		S2PaperID:       nonEmpty(r.PaperID),
		CorpusID:        r.CorpusID,
		ArxivID:         nonEmpty(arxiv.Normalize(r.ArxivID)),
		DOI:             nonEmpty(r.DOI),
		Abstract:        nonEmpty(r.Abstract),
		Venue:           nonEmpty(r.Venue),
		PublicationDate: nonEmpty(r.PublicationDate),
		OpenAccessPDF:   nonEmpty(r.OpenAccessPDF),
		Authors:         r.Authors,
		Intents:         append([]string{}, r.Intents...),
		IsInfluential:   r.IsInfluential,
		Link:            link,
	}
	if r.PaperID != "" {
		e.Title = nonEmpty(r.Title) // an unresolved edge's title is a raw fragment
	}
	if r.Year != 0 {
		e.Year = ptr(r.Year)
	}
	if ref != nil {
		e.RefKey = ptr(ref.Key)
		if e.ArxivID == nil {
			e.ArxivID = nonEmpty(ref.ArxivID)
		}
		if e.DOI == nil {
			e.DOI = nonEmpty(ref.DOI)
		}
		if e.Title == nil {
			e.Title = nonEmpty(ref.Title)
		}
		if e.Year == nil && ref.Year != 0 {
			e.Year = ptr(ref.Year)
		}
	} else if e.Title == nil {
		e.Title = nonEmpty(r.Title)
	}
	e.Contexts, e.MentionSections = mergeContexts(ms, r.Contexts)
	return e
}

// mergeContexts returns the HTML mention sentences followed by the S2
// contexts that repeat none of them, and the sections of the mentions.
// Two texts are the same context when, letters and digits only, one
// contains the other (S2's PDF-extracted contexts differ from the HTML in
// spacing, hyphenation and citation markers).
func mergeContexts(ms []record.Mention, s2 []string) ([]string, []string) {
	out := []string{}
	var keys []string
	var sections []string
	seenSec := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		k := foldContext(s)
		if k == "" {
			return
		}
		for _, old := range keys {
			if strings.Contains(old, k) || strings.Contains(k, old) {
				return
			}
		}
		keys = append(keys, k)
		out = append(out, s)
	}
	for _, m := range ms {
		add(m.Sentence)
		if !seenSec[m.SectionID] {
			seenSec[m.SectionID] = true
			sections = append(sections, m.SectionID)
		}
	}
	for _, c := range s2 {
		add(c)
	}
	return out, sections
}

func foldContext(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// shortPrefix reports whether one title of at least three words is a
// prefix of the other, on a word boundary.
func shortPrefix(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a != "" && strings.Count(a, " ") >= 2 && strings.HasPrefix(b+" ", a+" ")
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
