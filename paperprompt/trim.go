package paperprompt

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/groundwork/curate/record"
)

// DefaultBudget is the token budget of a paper's text in the paper block
// when none is given: enough for the abstract, introduction and method of
// most papers, and cheap enough to summarize every source of a target.
// Classify and the gold card use the same, so that the two calls about a
// target share the block.
const DefaultBudget = 8000

// Section priorities: trimming keeps text in this order, so that a paper
// that does not fit loses its back matter, appendices and references
// first.
const (
	PriorityAbstract   = iota
	PriorityIntro      // introduction, motivation, overview
	PriorityMethod     // method(s), approach, model, framework, algorithm, ...
	PriorityResults    // results, experiments, evaluation, analysis, ...
	PriorityConclusion // conclusion, discussion, limitations, future work
	PriorityRest       // related work, background and sections named otherwise
	PriorityAppendix   // appendices and supplementary material
	PriorityBackmatter // acknowledgements, availability and contribution statements
)

// minCut is the least room, in bytes, worth filling with the leading
// sentences of a paragraph that does not fit whole.
const minCut = 200

// maxNote bounds the bytes kept free for the note naming the sections
// left out.
const maxNote = 400

// Trimmed is a paper's text cut to a token budget.
type Trimmed struct {
	Text      string
	Tokens    int      // estimated, four bytes a token; at most the budget
	Truncated bool     // some of the paper's text was left out
	Kept      []string // headings of sections kept at least in part, document order
	Dropped   []string // headings of top-level sections with text that were left out
}

// Trim renders doc's abstract and sections as plain text within budget
// tokens (DefaultBudget when budget <= 0). When the paper is longer, whole
// paragraphs are kept by section priority — the abstract, the
// introduction, method sections, results, conclusion and discussion, then
// the rest, appendices last, acknowledgement-like back matter never unless
// everything else fit — and the kept text is rendered in document order
// with its headings, followed by a note naming the sections left out. The
// first paragraph that does not fit ends the filling (so a lower-priority
// section never displaces a higher one); it is cut at a sentence boundary
// when enough room is left. A section's priority comes from keywords in its
// heading; a subsection inherits its parent's unless the parent fell into
// "the rest".
func Trim(doc *record.Document, budget int) Trimmed {
	return TrimText(doc.Abstract, doc, budget)
}

type block struct {
	parent  int // index of the enclosing block, -1 at top level
	top     int // index of the top-level block it belongs to
	prio    int
	heading string // "" for none (preamble, sections without heading)
	paras   []string
	kept    []string // admitted paragraphs (the last may be cut)
	shown   bool     // heading counted and rendered
}

// TrimText is Trim with the abstract given separately (a source's Semantic
// Scholar abstract when its page has none); doc may be nil.
func TrimText(abstract string, doc *record.Document, budget int) Trimmed {
	if budget <= 0 {
		budget = DefaultBudget
	}
	var blocks []*block
	if a := strings.TrimSpace(abstract); a != "" {
		blocks = append(blocks, &block{parent: -1, prio: PriorityAbstract, heading: "Abstract", paras: []string{a}})
	}
	if doc != nil {
		pre := PriorityRest
		if len(doc.Sections) == 0 {
			pre = PriorityIntro // the whole text of a paper without sections
		}
		if len(doc.Preamble) > 0 {
			blocks = append(blocks, &block{parent: -1, top: len(blocks), prio: pre, paras: doc.Preamble})
		}
		var add func(ss []record.Section, parent, parentPrio int)
		add = func(ss []record.Section, parent, parentPrio int) {
			for _, s := range ss {
				p := SectionPriority(s)
				if parent >= 0 && parentPrio != PriorityRest {
					p = parentPrio
				}
				b := &block{parent: parent, prio: p, heading: headingLine(s), paras: s.Paragraphs}
				b.top = len(blocks)
				if parent >= 0 {
					b.top = blocks[parent].top
				}
				blocks = append(blocks, b)
				add(s.Sections, len(blocks)-1, p)
			}
		}
		add(doc.Sections, -1, PriorityRest)
	}

	order := make([]int, len(blocks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(blocks[a].prio, blocks[b].prio) })

	limit := budget * 4
	total := 0
	for _, b := range blocks {
		if b.heading != "" {
			total += len(b.heading) + 2
		}
		for _, p := range b.paras {
			total += len(strings.TrimSpace(p)) + 2
		}
	}
	// A paper that does not fit keeps room for the note naming what was
	// left out.
	reserve := 0
	if total > limit {
		reserve = min(maxNote, limit/10)
	}
	fillLimit := limit - reserve
	used := 0
	truncated := false
	// headingCost is what showing b's heading and its unshown ancestors'
	// costs, two bytes of separator each.
	headingCost := func(b *block) int {
		n := 0
		for x := b; ; x = blocks[x.parent] {
			if !x.shown && x.heading != "" {
				n += len(x.heading) + 2
			}
			if x.parent < 0 {
				return n
			}
		}
	}
	show := func(b *block) {
		for x := b; ; x = blocks[x.parent] {
			x.shown = true
			if x.parent < 0 {
				return
			}
		}
	}
fill:
	for _, i := range order {
		b := blocks[i]
		for _, p := range b.paras {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			hc := headingCost(b)
			if used+hc+len(p)+2 <= fillLimit {
				show(b)
				b.kept = append(b.kept, p)
				used += hc + len(p) + 2
				continue
			}
			truncated = true
			if room := fillLimit - used - hc - 2; room >= minCut {
				if cut := cutSentences(p, room); cut != "" {
					show(b)
					b.kept = append(b.kept, cut)
					used += hc + len(cut) + 2
				}
			}
			break fill
		}
	}

	var (
		parts []string
		t     Trimmed
	)
	for _, b := range blocks {
		if b.shown && b.heading != "" {
			parts = append(parts, b.heading)
			t.Kept = append(t.Kept, b.heading)
		}
		parts = append(parts, b.kept...)
		if len(b.kept) < nonEmpty(b.paras) {
			truncated = true
		}
	}
	for i, b := range blocks {
		if b.parent >= 0 || b.heading == "" || b.shown || b.prio == PriorityBackmatter {
			continue
		}
		if hasText(blocks, i) {
			t.Dropped = append(t.Dropped, b.heading)
		}
	}
	t.Truncated = truncated
	t.Text = strings.Join(parts, "\n\n")
	if note := droppedNote(t.Dropped, limit-len(t.Text)-2); note != "" {
		t.Text += "\n\n" + note
	}
	t.Tokens = EstimateTokens(t.Text)
	return t
}

// droppedNote names the left-out sections in at most room bytes, as many
// as fit.
func droppedNote(dropped []string, room int) string {
	if len(dropped) == 0 {
		return ""
	}
	const open, more, end = "[Left out for length: ", "; …", "]"
	note := open
	for i, h := range dropped {
		sep := ""
		if i > 0 {
			sep = "; "
		}
		if len(note)+len(sep)+len(h)+len(more)+len(end) > room {
			if i == 0 {
				return ""
			}
			return note + more + end
		}
		note += sep + h
	}
	return note + end
}

// HasBody reports whether doc has text beyond its abstract.
func HasBody(doc *record.Document) bool {
	if doc == nil {
		return false
	}
	if nonEmpty(doc.Preamble) > 0 {
		return true
	}
	var text func(ss []record.Section) bool
	text = func(ss []record.Section) bool {
		for _, s := range ss {
			if nonEmpty(s.Paragraphs) > 0 || text(s.Sections) {
				return true
			}
		}
		return false
	}
	return text(doc.Sections)
}

func nonEmpty(ps []string) int {
	n := 0
	for _, p := range ps {
		if strings.TrimSpace(p) != "" {
			n++
		}
	}
	return n
}

// hasText reports whether block i or a block nested in it has a paragraph.
func hasText(blocks []*block, i int) bool {
	for j := i; j < len(blocks); j++ {
		if j > i && blocks[j].top != blocks[i].top {
			break
		}
		if nonEmpty(blocks[j].paras) > 0 {
			return true
		}
	}
	return false
}

// cutSentences returns the leading whole sentences of p that fit in room
// bytes, or "".
func cutSentences(p string, room int) string {
	n := 0
	var keep []string
	for _, s := range Sentences(p) {
		add := len(s)
		if len(keep) > 0 {
			add++
		}
		if n+add > room {
			break
		}
		keep = append(keep, s)
		n += add
	}
	return strings.Join(keep, " ")
}

func headingLine(s record.Section) string {
	return strings.TrimSpace(strings.TrimSpace(s.Number) + " " + strings.TrimSpace(s.Heading))
}

// SectionPriority classifies a section by the words of its heading.
func SectionPriority(s record.Section) int {
	h := strings.ToLower(s.Heading)
	words := strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) })
	has := func(prefixes ...string) bool {
		for _, w := range words {
			for _, p := range prefixes {
				if strings.HasPrefix(w, p) {
					return true
				}
			}
		}
		return false
	}
	phrase := func(ps ...string) bool {
		for _, p := range ps {
			if strings.Contains(h, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("acknowledg", "funding") || phrase("availability", "author contribution", "competing interest",
		"conflict of interest", "conflicts of interest", "declaration", "references", "bibliography"):
		return PriorityBackmatter
	case s.Appendix || has("appendix", "appendices", "supplement"):
		return PriorityAppendix
	case phrase("related work", "prior work", "previous work", "literature") || has("background", "preliminar"):
		return PriorityRest
	case has("introduction", "motivation", "overview"):
		return PriorityIntro
	case has("result", "experiment", "evaluat", "finding", "analys", "ablation", "benchmark", "simulation",
		"comparison", "performance", "application", "example", "empirical", "validation"):
		// "Empirical strategy" is a method, not a result.
		if phrase("empirical strategy", "empirical approach") {
			return PriorityMethod
		}
		return PriorityResults
	case has("method", "approach", "model", "framework", "algorithm", "formulation", "architecture",
		"design", "proposed", "scheme", "technique", "strategy", "theory", "estimat", "setup", "implementation"):
		return PriorityMethod
	case has("conclu", "discussion", "summary", "limitation", "outlook", "remarks") || phrase("future work", "future research"):
		return PriorityConclusion
	}
	return PriorityRest
}
