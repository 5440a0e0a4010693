package classify

import (
	"strings"
	"unicode"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// Kinds of section, by what a citation in them says about the reference.
const (
	kindAbstract   = "abstract"
	kindIntro      = "introduction"
	kindMethod     = "method"
	kindRelated    = "related work"
	kindExperiment = "experiments"
	kindDiscussion = "discussion"
	kindAppendix   = "appendix"
	kindBody       = "body" // a heading that says nothing we know
)

// headingKinds maps words of a heading to a section kind, first match
// winning, so "Related work and background" is related work and
// "Experimental setup" is experiments.
var headingKinds = []struct {
	kind  string
	words []string
}{
	// Back matter weighs like an appendix: "Data availability" is no
	// data section.
	{kindAppendix, []string{"acknowledg", "funding", "availability", "author contribution", "competing interest",
		"conflict of interest", "conflicts of interest", "ethic", "impact statement", "supplementa", "appendix"}},
	{kindIntro, []string{"introduction", "motivation"}},
	{kindRelated, []string{"related work", "related research", "related literature", "prior work", "previous work",
		"literature", "background", "state of the art"}},
	{kindDiscussion, []string{"discussion", "conclusion", "concluding", "limitation", "future work", "outlook", "summary"}},
	{kindExperiment, []string{"experiment", "evaluation", "result", "empirical", "benchmark", "setup", "ablation",
		"training", "implementation detail", "data", "simulation", "application"}},
	{kindMethod, []string{"method", "approach", "model", "architecture", "framework", "proposed", "our ", "algorithm",
		"formulation", "preliminar", "problem", "theor", "design", "technique", "definition", "analysis",
		"construction", "estimat", "derivation", "mechanism"}},
}

// sectionInfo is what the classifier knows about one section id.
type sectionInfo struct {
	kind    string
	heading string // the top-level section's heading, for rationales
}

// sectionMap maps every section id of doc (and the abstract and preamble
// pseudo-sections) to its kind. A subsection takes the kind of its own
// heading, else of its nearest ancestor's; appendices are appendices
// whatever their heading. When no heading names an introduction, the first
// non-appendix top-level section is taken as one, since papers open with it.
func sectionMap(doc *record.Document) map[string]sectionInfo {
	m := map[string]sectionInfo{
		latexml.SectionAbstract: {kind: kindAbstract, heading: "Abstract"},
		latexml.SectionPreamble: {kind: kindBody, heading: "the front matter"},
	}
	if doc == nil {
		return m
	}
	hasIntro := false
	var walk func(ss []record.Section, parent string, top string, appendix bool)
	walk = func(ss []record.Section, parent, top string, appendix bool) {
		for _, s := range ss {
			k := headingKind(s.Heading)
			switch {
			case appendix || s.Appendix:
				k = kindAppendix
			case k == "":
				k = parent
			}
			t := top
			if t == "" {
				t = strings.TrimSpace(s.Heading)
				switch {
				case t != "":
				case s.Number != "":
					t = "section " + s.Number
				default:
					t = "an untitled section"
				}
			}
			if k == kindIntro {
				hasIntro = true
			}
			m[s.ID] = sectionInfo{kind: k, heading: t}
			walk(s.Sections, k, t, appendix || s.Appendix)
		}
	}
	walk(doc.Sections, kindBody, "", false)
	if !hasIntro {
		for _, s := range doc.Sections {
			if s.Appendix {
				continue
			}
			var mark func(s record.Section)
			mark = func(s record.Section) {
				if info := m[s.ID]; info.kind == kindBody {
					info.kind = kindIntro
					m[s.ID] = info
				}
				for _, c := range s.Sections {
					mark(c)
				}
			}
			mark(s)
			break
		}
	}
	return m
}

// headingKind returns the kind a heading names, or "". Words match at the
// start of a word of the heading ("result" matches "Results", "data"
// matches "Datasets" but not "Metadata").
func headingKind(h string) string {
	h = " " + strings.Join(strings.FieldsFunc(strings.ToLower(h), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ") + " "
	for _, hk := range headingKinds {
		for _, w := range hk.words {
			if strings.Contains(h, " "+w) {
				return hk.kind
			}
		}
	}
	return ""
}
