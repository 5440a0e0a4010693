package dataset

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"

	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// The gold-in-prompt rule. Texts are compared as sequences of words
// (letters and digits, lower-cased; punctuation and spacing ignored). A
// gold card field leaks into a prompt when
//
//   - exact: the whole field (at least minExactWords words) occurs in the
//     prompt as a contiguous run of words; or
//   - near: the field has at least shingleWords words and either at least
//     minOverlap of its distinct word 5-grams occur in the prompt, or a run
//     of consecutive field 5-grams that all occur in the prompt spans at
//     least minRunWords words (a long shared passage).
//
// The prompt's fixed instruction text (the template rendered without
// documents) is not counted, so a card that happens to echo the field
// definitions is not flagged.
const (
	shingleWords  = 5
	minExactWords = 6
	minRunWords   = 20
	minOverlap    = 0.5
)

// words splits s into lower-case runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// shingles returns the hashes of the word n-grams of ws, in order.
func shingles(ws []string) []uint64 {
	if len(ws) < shingleWords {
		return nil
	}
	out := make([]uint64, 0, len(ws)-shingleWords+1)
	h := fnv.New64a()
	for i := 0; i+shingleWords <= len(ws); i++ {
		h.Reset()
		for _, w := range ws[i : i+shingleWords] {
			h.Write([]byte(w))
			h.Write([]byte{0})
		}
		out = append(out, h.Sum64())
	}
	return out
}

// goldText is one field of one gold card, prepared for matching.
type goldText struct {
	owner  int // index of the instance whose gold it is
	field  string
	joined string   // " w1 w2 ... " for the exact test
	grams  []uint64 // in field order
	ngrams int      // distinct grams
}

// leakIndex finds gold card fields in prompts. Its gram index is a
// sorted array rather than a map: it holds the golds of thousands of
// instances at a time, and a map of them costs several times more.
type leakIndex struct {
	golds  []goldText
	grams  []uint64 // sorted; grams[i] belongs to golds[owner[i]]
	owners []int32
	short  []int // golds with too few words for a 5-gram
	sorted bool
}

func newLeakIndex(instances []record.Instance, include func(i int) bool) *leakIndex {
	x := &leakIndex{}
	for i := range instances {
		if include(i) {
			x.add(i, instances[i].Gold)
		}
	}
	return x
}

// add indexes the gold fields of owner's card.
func (x *leakIndex) add(owner int, gold record.Card) {
	x.sorted = false
	// The gold idea's fields are what must never reach a prompt.
	for f, v := range gold.IdeaFields() {
		ws := words(*v)
		if len(ws) < minExactWords {
			continue
		}
		g := goldText{owner: owner, field: f.Name, joined: " " + strings.Join(ws, " ") + " ", grams: shingles(ws)}
		gi := int32(len(x.golds))
		seen := map[uint64]bool{}
		for _, h := range g.grams {
			if !seen[h] {
				seen[h] = true
				x.grams = append(x.grams, h)
				x.owners = append(x.owners, gi)
			}
		}
		g.ngrams = len(seen)
		if g.ngrams == 0 {
			x.short = append(x.short, int(gi))
		}
		x.golds = append(x.golds, g)
	}
}

// sort orders the gram index for lookups.
func (x *leakIndex) sort() {
	if x.sorted {
		return
	}
	idx := make([]int, len(x.grams))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(x.grams[a], x.grams[b]); c != 0 {
			return c
		}
		return cmp.Compare(x.owners[a], x.owners[b])
	})
	grams, owners := make([]uint64, len(idx)), make([]int32, len(idx))
	for i, j := range idx {
		grams[i], owners[i] = x.grams[j], x.owners[j]
	}
	x.grams, x.owners, x.sorted = grams, owners, true
}

// holders calls fn with each gold holding gram h.
func (x *leakIndex) holders(h uint64, fn func(gi int32)) {
	i, _ := slices.BinarySearch(x.grams, h)
	for ; i < len(x.grams) && x.grams[i] == h; i++ {
		fn(x.owners[i])
	}
}

// leakHit is one gold field found in one prompt.
type leakHit struct {
	owner   int
	field   string
	exact   bool
	overlap float64 // share of the field's distinct 5-grams in the prompt
	run     int     // longest shared passage, in words
}

func (h leakHit) String() string {
	if h.exact {
		return fmt.Sprintf("gold %s occurs verbatim", h.field)
	}
	return fmt.Sprintf("gold %s: %.0f%% of its 5-grams and a %d-word passage in the prompt", h.field, 100*h.overlap, h.run)
}

// find returns the gold fields that leak into prompt, among those whose
// owner want accepts. boiler holds the grams of the fixed instruction.
// boilerGrams counts g's distinct grams that belong to the fixed
// instruction text (left out of a prompt's grams).
func boilerGrams(g *goldText, boiler map[uint64]bool) int {
	if len(boiler) == 0 {
		return 0
	}
	n := 0
	seen := map[uint64]bool{}
	for _, h := range g.grams {
		if boiler[h] && !seen[h] {
			seen[h] = true
			n++
		}
	}
	return n
}

func (x *leakIndex) find(prompt string, boiler map[uint64]bool, want func(owner int) bool) []leakHit {
	pw := words(prompt)
	joined := " " + strings.Join(pw, " ") + " "
	have := map[uint64]bool{}
	for _, h := range shingles(pw) {
		if !boiler[h] {
			have[h] = true
		}
	}
	x.sort()
	counts := map[int32]int{}
	for h := range have {
		x.holders(h, func(gi int32) { counts[gi]++ })
	}
	var hits []leakHit
	check := func(gi int) {
		g := &x.golds[gi]
		if !want(g.owner) {
			return
		}
		n := counts[int32(gi)]
		// A field is copied whole only if every one of its 5-grams is in
		// the prompt; the substring search runs only then (it dominated
		// the stage's time on large corpora).
		exact := false
		if g.ngrams == 0 || n+boilerGrams(g, boiler) >= g.ngrams {
			exact = strings.Contains(joined, g.joined)
		}
		hit := leakHit{owner: g.owner, field: g.field, exact: exact}
		if g.ngrams > 0 {
			hit.overlap = float64(n) / float64(g.ngrams)
		}
		run := 0
		for _, h := range g.grams {
			if have[h] {
				run++
				hit.run = max(hit.run, run+shingleWords-1)
			} else {
				run = 0
			}
		}
		if hit.exact || hit.overlap >= minOverlap || hit.run >= minRunWords {
			hits = append(hits, hit)
		}
	}
	// Only fields sharing a 5-gram with the prompt can match, except
	// those too short for 5-grams, which can only match exactly.
	cands := make([]int, 0, len(counts)+len(x.short))
	for gi := range counts {
		cands = append(cands, int(gi))
	}
	cands = append(cands, x.short...)
	slices.Sort(cands)
	for _, gi := range cands {
		check(gi)
	}
	return hits
}

// boilerplate returns the 5-grams of the template's instruction for K
// ideas: the part of every prompt that no card wrote.
func boilerplate(t *modelinput.Template, numIdeas int) map[uint64]bool {
	out := map[uint64]bool{}
	if t == nil || numIdeas < 1 {
		return out
	}
	text, err := t.Render(nil, numIdeas)
	if err != nil {
		return out
	}
	for _, h := range shingles(words(text)) {
		out[h] = true
	}
	return out
}
