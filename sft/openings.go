package sft

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/groundwork/curate/gate"
)

// normOpening folds a sentence for the uniqueness check: case,
// punctuation and runs of space do not make two openings different.
func normOpening(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			space = false
		case r == '\'' || r == '\u2019':
			// "let's" and "lets" are one opening
		default:
			space = true
		}
	}
	return b.String()
}

// minTraceWords is the shortest trace accepted: a trace is an
// exploration, not a sentence.
const minTraceWords = 60

// checkTrace says why a trace cannot be used: empty, too short, carrying
// a tag that would end its block early, or not opening with its assigned
// sentence (which is what keeps the openings of a run distinct).
func checkTrace(text, opening string) error {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return fmt.Errorf("the thinking is empty")
	case gate.HasTag(t):
		return fmt.Errorf("the thinking contains one of the tags <think>, </think>, <answer>, </answer>; write the thinking only")
	case !strings.HasPrefix(normOpening(t), normOpening(opening)):
		return fmt.Errorf("the thinking must begin with exactly this sentence: %q", opening)
	}
	if n := len(strings.Fields(t)); n < minTraceWords {
		return fmt.Errorf("the thinking has %d words; explore the documents and candidates in at least %d", n, minTraceWords)
	}
	return nil
}

// The heuristic pool of openings (read-only tables): every combination of a lead, a task
// and an object is a distinct sentence, 24³ = 13,824 of them, more than
// the paper's 7,172 training instances. poolStride visits them so that
// consecutive openings differ in every part.
var (
	openingLeads = []string{
		"Okay,", "Alright,", "Hmm,", "Right,", "So,", "Well,", "Let me see:", "First things first:",
		"To begin,", "Starting out,", "Before anything else,", "Looking at this set,", "Let me think:", "Here goes:",
		"Fine,", "Now,", "Good,", "Interesting,", "OK then,", "Let's see,", "Reading through these,", "At first glance,",
		"Taking stock,", "Quietly now,",
	}
	openingTasks = []string{
		"I want to figure out", "I should work out", "my job is to find", "the real question is",
		"I need to see", "I'd like to pin down", "I'm trying to understand", "the first thing to settle is",
		"what I have to find is", "I'm going to look for", "I wonder", "I should ask myself",
		"it's worth checking", "I have to decide", "I'm curious about", "the puzzle here is",
		"I need to map out", "I want to be careful about", "my first instinct is to ask", "I'll start by asking",
		"the thing to get right is", "I should be honest about", "I'm not yet sure", "it pays to look at",
	}
	openingObjects = []string{
		"where these papers leave a gap that none of them closes alone.",
		"what these documents share and where they quietly disagree.",
		"which loose ends in these sources could be tied together.",
		"what each of these papers assumes without saying so.",
		"where the evidence in these documents runs thin.",
		"which of these methods could travel to another paper's problem.",
		"what would surprise the authors of these papers.",
		"how these pieces of work fit together, if they do at all.",
		"what nobody in this set of papers has measured yet.",
		"which limitation keeps coming back across these sources.",
		"where a method here outruns its own evaluation.",
		"what question these documents circle around without asking.",
		"which result here is the most fragile.",
		"what a newcomer would find missing in this literature.",
		"where two of these papers could inform each other.",
		"what the cheapest convincing experiment here would be.",
		"which claim in these documents I would bet against.",
		"how far the findings here really generalize.",
		"what these papers would need from each other.",
		"where the easy idea hides a harder and better one.",
		"which assumption here is doing the most work.",
		"what kind of contribution this set of papers is missing.",
		"where these sources point without quite getting there.",
		"what I can build on here and what I should leave alone.",
	}
)

// poolStride is coprime to 24³, so i*poolStride covers the pool before it
// repeats, and steps every part of the combination at once.
const poolStride = 5 + 24 + 24*24*7

// templateOpening returns opening number i of the heuristic pool; the
// first 13,824 are distinct.
func templateOpening(i int) string {
	n := len(openingLeads) * len(openingTasks) * len(openingObjects)
	j := (i * poolStride) % n
	a := j % len(openingLeads)
	b := (j / len(openingLeads)) % len(openingTasks)
	c := j / (len(openingLeads) * len(openingTasks))
	return openingLeads[a] + " " + openingTasks[b] + " " + openingObjects[c]
}

// templatePoolSize is how many distinct openings templateOpening has.
func templatePoolSize() int { return len(openingLeads) * len(openingTasks) * len(openingObjects) }
