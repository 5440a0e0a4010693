package sft

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/record"
)

// HeuristicVersion is the prompt version the heuristic teacher records
// for all three calls: change the templates, bump it.
const HeuristicVersion = "sft-heuristic-v1"

// Heuristic is a teacher without a model, for offline runs and demos. It
// is honest about what it is: its rows say model "heuristic". Its ideas
// recombine the instance's documents deterministically (the gap of one,
// the method of another, each keeping its source's label), its openings
// come from a fixed pool of 13,824 distinct sentences, and its traces are
// templated first-person walks through the documents and the cards. Its
// output passes the gate; it teaches the format, not ideation.
type Heuristic struct{}

var _ Teacher = Heuristic{}

// Model returns llm.HeuristicModel.
func (Heuristic) Model() string { return llm.HeuristicModel }

// PromptVersions returns HeuristicVersion for every call.
func (Heuristic) PromptVersions() PromptVersions {
	return PromptVersions{Ideas: HeuristicVersion, Openings: HeuristicVersion, Trace: HeuristicVersion}
}

// Ideas pairs the documents: idea j takes its gap from one document and
// its method from another, starting at a document chosen by the instance
// ID so that instances do not all lead with Document 1.
func (Heuristic) Ideas(_ context.Context, in *Input) (*Ideas, error) {
	docs := in.Documents
	if len(docs) == 0 {
		return nil, &RejectError{Stage: StageIdeas, Reason: ReasonTeacherInvalid, Detail: "the instance has no documents", Attempts: 1}
	}
	n := len(docs)
	start := int(hash64(in.InstanceID) % uint64(n))
	cards := make([]record.Card, in.NumIdeas)
	for j := range cards {
		a := (start + j) % n
		b := (a + 1 + j/n) % n
		cards[j] = recombine(docs[a], docs[b], docs)
		cards[j].Model, cards[j].PromptVersion = llm.HeuristicModel, HeuristicVersion
	}
	// The heuristic holds itself to the gate like any teacher.
	answer, err := gate.Answer(cards)
	if err == nil {
		_, err = gate.CheckAnswer(answer, in.NumIdeas)
	}
	if err != nil {
		return nil, &RejectError{Stage: StageIdeas, Reason: cmp.Or(gate.ReasonOf(err), ReasonTeacherInvalid), Detail: err.Error(), Attempts: 1, Raw: answer}
	}
	return &Ideas{Cards: cards, Call: Call{Attempts: 1}}, nil
}

// recombine writes the card that carries the method of b to the gap of a.
func recombine(a, b record.PromptDocument, docs []record.PromptDocument) record.Card {
	opp, gap := labelled(a.ProblemGap, record.AxisOpportunity, a.Opportunity)
	par, how := labelled(b.Method, record.AxisParadigm, b.Paradigm)
	gapSentence := firstSentence(gap, "its problem is left open")
	howSentence := firstSentence(how, "its method")
	c := record.Card{Opportunity: opp, Paradigm: par}
	if a.N == b.N {
		c.ProblemGap = fmt.Sprintf("[%s] %s Document %d raises this without settling it.", opp, gapSentence, a.N)
		c.CoreClaim = fmt.Sprintf("We claim that the problem Document %d raises can be settled by a direct, better-controlled version of its own approach.", a.N)
		c.Method = fmt.Sprintf("[%s] Revisit the approach of Document %d (%s) under conditions that test it directly.", par, b.N, trimEnd(howSentence))
		c.Inspiration = fmt.Sprintf("Document %d states the problem: %s It also proposes an approach, but does not test it where the problem is hardest. Testing it there is the step the document stops short of.", a.N, gapSentence)
		return c
	}
	c.ProblemGap = fmt.Sprintf("[%s] %s No document connects this problem with the approach of Document %d, so it stays open.", opp, gapSentence, b.N)
	c.CoreClaim = fmt.Sprintf("We claim that the approach of Document %d carries over to the problem raised in Document %d and handles it better than the approaches Document %d relies on.", b.N, a.N, a.N)
	c.Method = fmt.Sprintf("[%s] Carry the approach of Document %d over to the setting of Document %d (%s) and compare it against the approach Document %d uses.", par, b.N, a.N, trimEnd(howSentence), a.N)
	other := ""
	for _, d := range docs {
		if d.N != a.N && d.N != b.N {
			other = fmt.Sprintf(" Document %d is a useful check, since it neither states this problem nor uses this approach.", d.N)
			break
		}
	}
	c.Inspiration = fmt.Sprintf("Document %d states the problem: %s Document %d contributes an approach: %s Neither connects the two: Document %d does not consider this approach, and Document %d never faces this setting.%s The leap is not obvious because the two documents come from different lines of work.",
		a.N, gapSentence, b.N, howSentence, a.N, b.N, other)
	return c
}

// labelled splits a source field into its label (axis) and text; a field
// whose label does not parse keeps the card's recorded label, else Other.
func labelled(field, axis, recorded string) (label, text string) {
	if l, rest, err := record.ParseCardLabel(field, axis); err == nil {
		return l, rest
	}
	if record.IsCardLabel(axis, recorded) {
		return recorded, strings.TrimSpace(field)
	}
	return record.Other, strings.TrimSpace(field)
}

// Openings returns the next n sentences of the fixed pool, skipping any
// already used.
func (Heuristic) Openings(_ context.Context, n int, used []string) (*Openings, error) {
	seen := make(map[string]bool, len(used))
	for _, u := range used {
		seen[normOpening(u)] = true
	}
	var out []string
	for i := len(used); len(out) < n && i < len(used)+n+templatePoolSize(); i++ {
		s := templateOpening(i)
		if !seen[normOpening(s)] {
			seen[normOpening(s)] = true
			out = append(out, s)
		}
	}
	if len(out) < n {
		return nil, &RejectError{Stage: StageOpenings, Reason: ReasonOpening, Detail: fmt.Sprintf("the pool of %d openings is used up", templatePoolSize()), Attempts: 1}
	}
	return &Openings{Sentences: out, Call: Call{Attempts: 1}}, nil
}

// Trace walks through the documents, floats and rejects a candidate,
// hedges, asks, arrives at each card and checks labels and differences.
// The phrasing varies with the instance so traces do not share more than
// their structure.
func (Heuristic) Trace(_ context.Context, in *Input, cards []record.Card, opening, _ string) (*Trace, error) {
	h := hash64(in.InstanceID)
	pick := func(salt uint64, options ...string) string { return options[(h/salt)%uint64(len(options))] }
	var b strings.Builder
	b.WriteString(opening)
	b.WriteString("\n\n")
	b.WriteString(pick(1, "Let me go through the documents one by one.", "I'll read the documents in order first.", "First, what does each document actually give me?"))
	for _, d := range in.Documents {
		_, gap := labelled(d.ProblemGap, record.AxisOpportunity, d.Opportunity)
		_, how := labelled(d.Method, record.AxisParadigm, d.Paradigm)
		fmt.Fprintf(&b, " Document %d (%s) is concerned with this: %s Its approach, roughly: %s", d.N, cmp.Or(d.Title, "untitled"),
			firstSentence(gap, "a problem it states only loosely."), firstSentence(how, "an approach it describes only loosely."))
	}
	b.WriteString("\n\n")
	first, last := in.Documents[0].N, in.Documents[len(in.Documents)-1].N
	fmt.Fprintf(&b, "%s One obvious idea would be to scale up the method of Document %d on more data, but that is incremental and Document %d already hints at it, so I'll drop it. ",
		pick(3, "What could I propose?", "Where is the opening?", "So where does that leave me?"), first, first)
	fmt.Fprintf(&b, "I'm not sure the setting of Document %d transfers as easily as it looks; its assumptions may be narrower than the summary suggests. ", last)
	fmt.Fprintf(&b, "%s\n\n", pick(5, "What would it take for these findings to hold outside their own benchmarks?",
		"Is the gap here really about methods, or about how the problem is measured?",
		"Would the authors of these documents even agree on what counts as progress?"))
	ordinals := []string{"first", "second", "third", "fourth", "fifth"}
	for i, c := range cards {
		ord := fmt.Sprintf("number %d", i+1)
		if i < len(ordinals) {
			ord = ordinals[i]
		}
		_, gap := labelled(c.ProblemGap, record.AxisOpportunity, c.Opportunity)
		_, how := labelled(c.Method, record.AxisParadigm, c.Paradigm)
		claim := strings.TrimSpace(strings.TrimPrefix(c.CoreClaim, "We claim that"))
		fmt.Fprintf(&b, "The %s idea: %s The bet would be that %s As for how: %s I'd call the gap %s and the method %s; ",
			ord, firstSentence(gap, ""), claim, firstSentence(how, ""), article(c.Opportunity), article(c.Paradigm))
		b.WriteString(pick(uint64(7+i), "that seems right to me.", "on reflection, yes.", "I considered another label, but this one fits better.") + "\n\n")
	}
	if len(cards) > 1 {
		b.WriteString(pick(11, "Do these ideas differ enough?", "Are any two of these the same idea in disguise?", "Let me check they are not redundant.") +
			" Each starts from a different document's problem and borrows a different approach, so they pull in different directions. I'll order them as above, most promising first.")
	} else {
		b.WriteString("That is the one idea I'd stand behind.")
	}
	return &Trace{Text: b.String(), Call: Call{Attempts: 1}}, nil
}

func article(label string) string {
	if label == record.Other {
		return "Other, since no label really fits"
	}
	return "[" + label + "]"
}

// firstSentence returns the first sentence of s (up to ". ", "? " or
// "! "), or def when s is empty.
func firstSentence(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '?' || s[i] == '!') && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	if !strings.ContainsAny(s[len(s)-1:], ".?!") {
		s += "."
	}
	return s
}

func trimEnd(s string) string { return strings.TrimRight(s, ".?! ") }

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
