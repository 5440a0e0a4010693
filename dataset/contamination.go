package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// Policy says how Decontaminate resolves a violation.
type Policy string

// Policies.
const (
	// PolicyDropTrain drops the training instance of a train/test
	// violation (the default: the test split is the scarce one).
	PolicyDropTrain Policy = "drop-train"
	// PolicyDropTest drops the test instance instead.
	PolicyDropTest Policy = "drop-test"
	// PolicyFail drops nothing and fails on any violation.
	PolicyFail Policy = "fail"
)

// ParsePolicy parses a policy name; "" is PolicyDropTrain.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case "":
		return PolicyDropTrain, nil
	case PolicyDropTrain, PolicyDropTest, PolicyFail:
		return p, nil
	}
	return "", fmt.Errorf("parse contamination policy %q: want %s, %s or %s", s, PolicyDropTrain, PolicyDropTest, PolicyFail)
}

// ErrContaminated is wrapped by the errors of Decontaminate under
// PolicyFail and of Check when a dataset has violations.
var ErrContaminated = errors.New("dataset is contaminated")

// Violation kinds.
const (
	// KindTestTargetInTrain: a test target is also a training target
	// (the same paper under another version, DOI, S2 ID or title).
	KindTestTargetInTrain = "test_target_in_train"
	// KindTestTargetAsSource: a test target is a source of a training
	// instance.
	KindTestTargetAsSource = "test_target_as_train_source"
	// KindDuplicate: two instances of one split have the same target.
	KindDuplicate = "duplicate_instance"
	// KindGoldInPrompt: gold card text occurs in a prompt: the instance's
	// own gold, or a test target's gold in a training prompt (see the
	// rule at shingleWords).
	KindGoldInPrompt = "gold_in_prompt"
	// KindSplitDate: an instance is in the wrong split for its v1 date
	// (found by Check).
	KindSplitDate = "split_date"
	// KindTestGoldInTrainGold: a test instance's gold card reused as a
	// training instance's gold, whole or a field of it, exactly or nearly
	// (the rule of KindGoldInPrompt, with the training gold for the
	// prompt): training on it teaches the held-out answer.
	KindTestGoldInTrainGold = "test_gold_in_train_gold"
)

// Violation is one breach of the contamination rules. Instance is where
// the leak shows (the training instance, the later duplicate, the prompt
// holding gold text); Other is the instance it leaks from (the test target,
// the first copy, the gold's owner).
type Violation struct {
	Kind       string `json:"kind"`
	InstanceID string `json:"instance_id"`
	Split      string `json:"split"`
	OtherID    string `json:"other_instance_id,omitempty"`
	OtherSplit string `json:"other_split,omitempty"`
	// Match is the identity shared (arxiv_id, doi, s2_paper_id, title)
	// or, for gold text, the card field; Value is the shared value.
	Match  string `json:"match,omitempty"`
	Value  string `json:"value,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Resolution says what the policy did, e.g. "dropped train 2401.00001".
	Resolution string `json:"resolution,omitempty"`
}

// SplitCounts counts instances per split.
type SplitCounts struct {
	Train int `json:"train"`
	Test  int `json:"test"`
}

func countSplits(instances []record.Instance) SplitCounts {
	var c SplitCounts
	for _, in := range instances {
		if in.Split == record.SplitTest {
			c.Test++
		} else {
			c.Train++
		}
	}
	return c
}

// Contamination is the contamination report (contamination.json): the
// rules, what was found, and what the policy did about it.
type Contamination struct {
	Policy   Policy      `json:"policy"`
	TestFrom string      `json:"test_from"`
	Rules    []string    `json:"rules"`
	Before   SplitCounts `json:"before"`
	Dropped  SplitCounts `json:"dropped"`
	After    SplitCounts `json:"after"`
	// Counts has the number of violations of each kind (every kind
	// present, zero included).
	Counts     map[string]int `json:"counts"`
	Violations []Violation    `json:"violations"`
}

// Rules states the contamination rules, for the report and dataset card.
func Rules() []string {
	return []string{
		"identity: two records name the same paper when they share the arXiv ID without version, the DOI (lower case, resolver prefix removed), the Semantic Scholar paper ID, or the normalized title (accents, case and punctuation folded; titles under 3 words or 16 characters are not used)",
		"no test target is a training target (" + KindTestTargetInTrain + ") or a source of a training instance (" + KindTestTargetAsSource + ")",
		"no target appears twice within a split (" + KindDuplicate + "); the earliest-dated copy, then the lowest ID, is kept",
		fmt.Sprintf("no gold text in a prompt (%s): an instance's own gold card, or a test target's gold card in a training prompt; a field leaks when it occurs verbatim (%d+ words) or when %.0f%% of its word %d-grams, or a passage of %d+ words, occur in the prompt outside the fixed instruction",
			KindGoldInPrompt, minExactWords, 100*minOverlap, shingleWords, minRunWords),
		"no test target's gold card is a training gold (" + KindTestGoldInTrainGold + "): a field of a test gold leaks into a training gold by the gold-in-prompt rule",
		"test = arXiv v1 date on or after test_from, train = before (" + KindSplitDate + ")",
	}
}

// Decontaminate finds the violations among instances and resolves them by
// policy: under PolicyDropTrain the training side of a train/test violation
// is dropped, under PolicyDropTest the test side; a later duplicate and an
// instance whose prompt holds its own gold are dropped under both. It
// returns the instances kept (in their order), a Dropped entry per
// instance it dropped, and the report. Under PolicyFail nothing is dropped
// and the error wraps ErrContaminated when there is any violation.
func Decontaminate(instances []record.Instance, opts Options) ([]record.Instance, []Dropped, *Contamination, error) {
	opts = opts.withDefaults()
	keep, dropped, rep, err := decontaminate(sliceSet(instances), opts)
	if err != nil || keep == nil {
		if err == nil {
			return instances, nil, rep, nil
		}
		return nil, nil, rep, err
	}
	var kept []record.Instance
	for i, in := range instances {
		if keep[i] {
			kept = append(kept, in)
		}
	}
	// Dropping only removes violations; a leftover would be a bug here.
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	left, _, err := findViolations(sliceSet(kept), &opts.TestFrom, tmpl)
	if err != nil {
		return nil, nil, rep, err
	}
	if len(left) > 0 {
		return nil, nil, rep, fmt.Errorf("decontaminate: %d violations left after policy %s", len(left), opts.Policy)
	}
	return kept, dropped, rep, nil
}

// decontaminate is Decontaminate over any set of instances: which to keep
// (nil: all, under PolicyFail), a Dropped entry for each dropped, and the
// report.
func decontaminate(set instanceSet, opts Options) (keep []bool, dropped []Dropped, rep *Contamination, err error) {
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	testFrom := opts.TestFrom
	found, meta, err := findViolations(set, &testFrom, tmpl)
	if err != nil {
		return nil, nil, nil, err
	}
	rep = &Contamination{
		Policy:     opts.Policy,
		TestFrom:   opts.TestFrom.Format(dateLayout),
		Rules:      Rules(),
		Before:     countMeta(meta, nil),
		Violations: make([]Violation, len(found)),
	}
	for i, f := range found {
		rep.Violations[i] = f.Violation
	}
	rep.Counts = countKinds(rep.Violations)
	if opts.Policy == PolicyFail {
		rep.After = rep.Before
		if len(found) > 0 {
			for i := range rep.Violations {
				rep.Violations[i].Resolution = "none: policy fail"
			}
			return nil, nil, rep, fmt.Errorf("decontaminate: %s: %w", kindSummary(rep.Violations), ErrContaminated)
		}
		return nil, nil, rep, nil
	}

	drop := map[int]string{} // instance index -> why
	for i, f := range found {
		victim, partner := f.here, f.other
		if f.crossSplit(meta) {
			want := record.SplitTrain
			if opts.Policy == PolicyDropTest {
				want = record.SplitTest
			}
			if meta[victim].split != want {
				victim, partner = partner, victim
			}
		}
		if _, done := drop[victim]; !done {
			with := "itself"
			if partner != victim {
				with = meta[partner].id
			}
			drop[victim] = fmt.Sprintf("%s with %s (%s)", f.Kind, with, strings.TrimSpace(f.Match+" "+f.Value))
		}
		rep.Violations[i].Resolution = fmt.Sprintf("dropped %s %s", meta[victim].split, meta[victim].id)
	}
	keep = make([]bool, len(meta))
	for i, m := range meta {
		why, ok := drop[i]
		keep[i] = !ok
		if !ok {
			continue
		}
		dropped = append(dropped, Dropped{TargetID: m.arxivID, Reason: DropContaminated, Detail: why})
		if m.split == record.SplitTest {
			rep.Dropped.Test++
		} else {
			rep.Dropped.Train++
		}
	}
	rep.After = countMeta(meta, keep)
	return keep, dropped, rep, nil
}

// instMeta is what the rules remember of each instance between passes.
type instMeta struct {
	id, split, published, arxivID, s2 string
}

func metaOf(in *record.Instance) instMeta {
	return instMeta{id: in.InstanceID, split: in.Split, published: in.Target.Published, arxivID: in.Target.ArxivID, s2: in.Target.S2PaperID}
}

// countMeta counts the instances per split, those keep says (all when
// keep is nil).
func countMeta(meta []instMeta, keep []bool) SplitCounts {
	var c SplitCounts
	for i, m := range meta {
		switch {
		case keep != nil && !keep[i]:
		case m.split == record.SplitTest:
			c.Test++
		default:
			c.Train++
		}
	}
	return c
}

// finding is a Violation with the indexes of its two instances (other ==
// here when the instance leaks into itself).
type finding struct {
	Violation
	here, other int
}

// crossSplit reports whether the policy chooses between the two sides:
// a train/test violation between two instances. Duplicates, split dates
// and an instance's own gold always drop the instance where they show.
func (f finding) crossSplit(meta []instMeta) bool {
	switch f.Kind {
	case KindTestTargetInTrain, KindTestTargetAsSource, KindGoldInPrompt, KindTestGoldInTrainGold:
		return f.here != f.other && meta[f.here].split != meta[f.other].split
	}
	return false
}

// matchRank orders identity kinds from the strongest evidence.
func matchRank(kind string) int {
	switch kind {
	case MatchArxivID:
		return 0
	case MatchDOI:
		return 1
	case MatchS2:
		return 2
	}
	return 3
}

// goldChunk is how many test instances' golds are indexed at once when
// training prompts are searched for them: it bounds the index's memory,
// each chunk costing one more pass over the training prompts.
const goldChunk = 4000

// findViolations checks instances against every rule (the split dates
// only when testFrom is given), in a few passes over them, holding in
// memory only their identities and the golds of goldChunk test instances
// at a time. The result is deterministic: instances in order, identities
// by strength. It also returns what it kept of each instance.
func findViolations(set instanceSet, testFrom *time.Time, tmpl *modelinput.Template) ([]finding, []instMeta, error) {
	var (
		out  []finding
		meta []instMeta
	)
	byKey := map[identity][]int{}
	if err := set.each(func(i int, in *record.Instance) error {
		meta = append(meta, metaOf(in))
		for _, k := range targetIdentities(in.Target) {
			byKey[k] = append(byKey[k], i)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	keys := make([]identity, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b identity) int {
		return cmp.Or(cmp.Compare(matchRank(a.kind), matchRank(b.kind)), cmp.Compare(a.value, b.value))
	})

	// The same target twice: across splits, or within one.
	type pair struct{ a, b int }
	seen := map[pair]bool{}
	for _, k := range keys {
		idx := byKey[k]
		for x := range idx {
			for _, b := range idx[x+1:] {
				a := idx[x]
				if seen[pair{a, b}] || (k.kind == MatchTitle && s2Conflict(meta[a].s2, meta[b].s2)) {
					continue
				}
				seen[pair{a, b}] = true
				if meta[a].split != meta[b].split {
					tr, te := a, b
					if meta[a].split == record.SplitTest {
						tr, te = b, a
					}
					out = append(out, newFinding(KindTestTargetInTrain, meta, tr, te, k, ""))
					continue
				}
				first, later := a, b
				if earlier(meta[b], meta[a]) {
					first, later = b, a
				}
				out = append(out, newFinding(KindDuplicate, meta, later, first, k, ""))
			}
		}
	}

	// A test target among a training instance's sources.
	testKeys := map[identity]int{}
	for _, k := range keys {
		for _, i := range byKey[k] {
			if meta[i].split == record.SplitTest {
				if _, ok := testKeys[k]; !ok {
					testKeys[k] = i
				}
			}
		}
	}
	byKey = nil
	if len(testKeys) > 0 {
		if err := set.each(func(i int, in *record.Instance) error {
			if in.Split != record.SplitTrain {
				return nil
			}
			reported := map[int]bool{}
			for _, s := range in.Sources {
				for _, k := range sourceIdentities(s) {
					te, ok := testKeys[k]
					if !ok || reported[te] || (k.kind == MatchTitle && s2Conflict(s.S2PaperID, meta[te].s2)) {
						continue
					}
					reported[te] = true
					out = append(out, newFinding(KindTestTargetAsSource, meta, i, te, k, fmt.Sprintf("Document %d", s.DocNumber)))
				}
			}
			// A source the knowledge cut left out that the target's text
			// as read cites (a later version than v1): that text, and the
			// gold card written from it, know the test target.
			for _, s := range in.CutSources {
				if !s.Known {
					continue
				}
				for _, k := range paperIdentities(s.ArxivID, s.DOI, s.S2PaperID, s.Title) {
					te, ok := testKeys[k]
					if !ok || reported[te] || (k.kind == MatchTitle && s2Conflict(s.S2PaperID, meta[te].s2)) {
						continue
					}
					reported[te] = true
					out = append(out, newFinding(KindTestTargetAsSource, meta, i, te, k, "cited by the version of the target read ("+s.RefKey+"), left out by the knowledge cut"))
				}
			}
			return nil
		}); err != nil {
			return nil, nil, err
		}
	}

	// Gold text in a prompt: the instance's own gold anywhere, a test
	// gold in a training prompt or a training gold.
	gold, err := goldInPrompts(set, meta, tmpl, goldChunk)
	if err != nil {
		return nil, nil, err
	}
	out = append(out, gold...)

	// Split dates.
	if testFrom != nil {
		for i, m := range meta {
			d, err := time.Parse(dateLayout, m.published)
			want := record.SplitTrain
			if err == nil && !d.Before(*testFrom) {
				want = record.SplitTest
			}
			switch {
			case err != nil:
				out = append(out, newFinding(KindSplitDate, meta, i, i, identity{}, fmt.Sprintf("published %q is not a date", m.published)))
			case m.split != want:
				out = append(out, newFinding(KindSplitDate, meta, i, i, identity{}, fmt.Sprintf("published %s belongs in %s (test from %s)", m.published, want, testFrom.Format(dateLayout))))
			}
		}
	}
	return out, meta, nil
}

// goldInPrompts finds gold card text in prompts: each instance's own gold
// in its prompt (one pass), then the golds of test instances, chunk at a
// time, in training prompts and in training golds (a pass per chunk).
// Findings come in instance order, then by kind, the gold's owner and
// field.
func goldInPrompts(set instanceSet, meta []instMeta, tmpl *modelinput.Template, chunk int) ([]finding, error) {
	type hit struct {
		at, kind, owner, field int
		f                      finding
	}
	var hits []hit
	boiler := map[int]map[uint64]bool{}
	boilerOf := func(k int) map[uint64]bool {
		if _, ok := boiler[k]; !ok {
			boiler[k] = boilerplate(tmpl, k)
		}
		return boiler[k]
	}
	add := func(i int, h leakHit) {
		f := newFinding(KindGoldInPrompt, meta, i, h.owner, identity{}, h.String())
		f.Match = h.field
		hits = append(hits, hit{at: i, owner: h.owner, field: fieldRank(h.field), f: f})
	}
	addGold := func(i int, h leakHit) {
		f := newFinding(KindTestGoldInTrainGold, meta, i, h.owner, identity{}, strings.Replace(h.String(), "in the prompt", "in the training gold", 1))
		f.Match = h.field
		hits = append(hits, hit{at: i, kind: 1, owner: h.owner, field: fieldRank(h.field), f: f})
	}
	if err := set.eachLeak(func(i int, v *leakView) error {
		x := &leakIndex{}
		x.add(i, v.Gold)
		for _, h := range x.find(v.Prompt, boilerOf(v.NumIdeas), func(int) bool { return true }) {
			add(i, h)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var tests []int
	train := false
	for i, m := range meta {
		if m.split == record.SplitTest {
			tests = append(tests, i)
		} else if m.split == record.SplitTrain {
			train = true
		}
	}
	for lo := 0; train && lo < len(tests); lo += chunk {
		part := tests[lo:min(lo+chunk, len(tests))]
		first, last := part[0], part[len(part)-1]
		in := map[int]bool{}
		for _, i := range part {
			in[i] = true
		}
		x := &leakIndex{}
		if err := set.eachLeak(func(i int, v *leakView) error {
			if in[i] {
				x.add(i, v.Gold)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if err := set.eachLeak(func(i int, v *leakView) error {
			if v.Split != record.SplitTrain {
				return nil
			}
			want := func(owner int) bool { return owner >= first && owner <= last }
			for _, h := range x.find(v.Prompt, boilerOf(v.NumIdeas), want) {
				add(i, h)
			}
			for _, h := range x.find(ideaText(&v.Gold), nil, want) {
				addGold(i, h)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.owner, b.owner), cmp.Compare(a.field, b.field))
	})
	out := make([]finding, len(hits))
	for i, h := range hits {
		out[i] = h.f
	}
	return out, nil
}

// ideaText is a card's idea fields, one a line: what a gold teaches.
func ideaText(c *record.Card) string {
	var b strings.Builder
	for _, v := range c.IdeaFields() {
		b.WriteString(*v)
		b.WriteString("\n")
	}
	return b.String()
}

// fieldRank orders a card's idea fields as the card lists them.
func fieldRank(name string) int {
	fields := record.IdeaFieldNames()
	if i := slices.Index(fields, name); i >= 0 {
		return i
	}
	return len(fields)
}

func newFinding(kind string, meta []instMeta, here, other int, k identity, detail string) finding {
	f := finding{here: here, other: other, Violation: Violation{
		Kind: kind, InstanceID: meta[here].id, Split: meta[here].split,
		Match: k.kind, Value: k.value, Detail: detail,
	}}
	if other != here {
		f.OtherID, f.OtherSplit = meta[other].id, meta[other].split
	}
	return f
}

// earlier orders copies of one target: the earliest v1 date first, then
// the lowest instance ID, then the lowest arXiv ID as given.
func earlier(a, b instMeta) bool {
	return cmp.Or(cmp.Compare(a.published, b.published), cmp.Compare(a.id, b.id), cmp.Compare(a.arxivID, b.arxivID)) < 0
}

// s2Conflict reports whether two records have different Semantic Scholar
// IDs: S2 then holds them for distinct papers, and an equal title is a
// coincidence ("A Survey of Large Language Models"), not an identity.
func s2Conflict(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSpace(a)), strings.ToLower(strings.TrimSpace(b))
	return a != "" && b != "" && a != b
}

func countKinds(vs []Violation) map[string]int {
	c := map[string]int{
		KindTestTargetInTrain: 0, KindTestTargetAsSource: 0, KindDuplicate: 0, KindGoldInPrompt: 0, KindSplitDate: 0, KindTestGoldInTrainGold: 0,
	}
	for _, v := range vs {
		c[v.Kind]++
	}
	return c
}

func kindSummary(vs []Violation) string {
	c := countKinds(vs)
	var parts []string
	for _, k := range []string{KindTestTargetInTrain, KindTestTargetAsSource, KindDuplicate, KindGoldInPrompt, KindTestGoldInTrainGold, KindSplitDate} {
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
