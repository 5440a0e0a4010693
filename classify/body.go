package classify

import (
	"strings"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// omitted marks where trimming left text out of the body.
const omitted = "[…]"

// tokens estimates the tokens of s as package llm does: four bytes a token.
func tokens(s string) int { return (len(s) + 3) / 4 }

// Priority tiers of body paragraphs when the body must be trimmed.
const (
	tierCites = iota // paragraphs with a sentence that cites a reference
	tierIntro        // the introduction
	tierRest         // everything else
)

type bodyPara struct {
	text  string
	heads []int // indices into body.heads: the section and its ancestors, outermost first
	tier  int
	cites []string // its citing sentences, in order
}

// body is the target's text below the abstract, cut into paragraphs.
type body struct {
	heads []string // "## 2 Related Work", ...
	paras []bodyPara
}

func newBody(doc *record.Document, secs map[string]sectionInfo) *body {
	b := &body{}
	if doc == nil {
		return b
	}
	citing := map[string][]string{} // section id → citing sentences
	for _, m := range doc.Mentions {
		citing[m.SectionID] = append(citing[m.SectionID], m.Sentence)
	}
	add := func(text, secID string, heads []int) {
		p := bodyPara{text: text, heads: heads, tier: tierRest}
		for _, s := range citing[secID] {
			if strings.Contains(text, s) {
				p.cites = append(p.cites, s)
			}
		}
		switch {
		case len(p.cites) > 0:
			p.tier = tierCites
		case secs[secID].kind == kindIntro:
			p.tier = tierIntro
		}
		b.paras = append(b.paras, p)
	}
	for _, t := range doc.Preamble {
		add(t, latexml.SectionPreamble, nil)
	}
	var walk func(ss []record.Section, parents []int)
	walk = func(ss []record.Section, parents []int) {
		for _, s := range ss {
			h := strings.Repeat("#", min(max(s.Level, 1), 5)+1) + " " + strings.TrimSpace(s.Number+" "+s.Heading)
			b.heads = append(b.heads, h)
			heads := append(parents[:len(parents):len(parents)], len(b.heads)-1)
			for _, t := range s.Paragraphs {
				add(t, s.ID, heads)
			}
			walk(s.Sections, heads)
		}
	}
	walk(doc.Sections, nil)
	return b
}

// render returns the body within budget tokens: first the sentences that
// cite references, then as many of their whole paragraphs as fit, then
// the introduction, then the rest, each step in document order and each
// paragraph only if it still fits. The kept text comes out in document
// order with its section headings, and "[…]" where text was left out. It
// reports whether anything was left out.
func (b *body) render(budget int) (string, bool) {
	keep := make([]string, len(b.paras)) // "" = left out
	headUsed := make([]bool, len(b.heads))
	used := 0
	cost := func(p *bodyPara, text string) int {
		c := tokens(text) + 1
		for _, h := range p.heads {
			if !headUsed[h] {
				c += tokens(b.heads[h]) + 1
			}
		}
		return c
	}
	take := func(p *bodyPara, i int, text string) bool {
		c := cost(p, text)
		if used+c > budget {
			return false
		}
		used += c
		keep[i] = text
		for _, h := range p.heads {
			headUsed[h] = true
		}
		return true
	}
	// Every citing sentence first, in its place; then as many of their
	// whole paragraphs as fit; then the introduction and the rest.
	for i := range b.paras {
		if p := &b.paras[i]; p.tier == tierCites {
			take(p, i, omitted+" "+strings.Join(p.cites, " "+omitted+" ")+" "+omitted)
		}
	}
	for i := range b.paras {
		p := &b.paras[i]
		switch {
		case p.tier != tierCites || keep[i] == p.text:
			continue
		case keep[i] == "":
			take(p, i, p.text)
			continue
		}
		if c := tokens(p.text) - tokens(keep[i]); used+c <= budget {
			used += c
			keep[i] = p.text
			for _, h := range p.heads {
				headUsed[h] = true
			}
		}
	}
	for tier := tierIntro; tier <= tierRest; tier++ {
		for i := range b.paras {
			if p := &b.paras[i]; p.tier == tier {
				take(p, i, p.text)
			}
		}
	}

	var out strings.Builder
	headDone := make([]bool, len(b.heads))
	trimmed, gap, endsOmitted := false, false, false
	for i, p := range b.paras {
		if keep[i] == "" {
			trimmed, gap = true, true
			continue
		}
		if keep[i] != p.text {
			trimmed = true
		}
		// One marker for a gap, also where a shortened paragraph has one.
		if gap && !endsOmitted && !strings.HasPrefix(keep[i], omitted) {
			out.WriteString(omitted + "\n\n")
		}
		gap = false
		for _, h := range p.heads {
			if !headDone[h] {
				headDone[h] = true
				out.WriteString(b.heads[h] + "\n\n")
			}
		}
		out.WriteString(keep[i] + "\n\n")
		endsOmitted = strings.HasSuffix(keep[i], omitted)
	}
	if gap && !endsOmitted {
		out.WriteString(omitted)
	}
	return strings.TrimSpace(out.String()), trimmed
}
