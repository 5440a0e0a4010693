package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	tmpl, err := LoadTemplate()
	if err != nil {
		return nil, nil, nil, err
	}
	testFrom := opts.TestFrom
	found := findViolations(instances, &testFrom, tmpl)
	rep := &Contamination{
		Policy:     opts.Policy,
		TestFrom:   opts.TestFrom.Format(dateLayout),
		Rules:      Rules(),
		Before:     countSplits(instances),
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
		return instances, nil, rep, nil
	}

	drop := map[int]string{} // instance index -> why
	for i, f := range found {
		victim, partner := f.here, f.other
		if f.crossSplit(instances) {
			want := record.SplitTrain
			if opts.Policy == PolicyDropTest {
				want = record.SplitTest
			}
			if instances[victim].Split != want {
				victim, partner = partner, victim
			}
		}
		if _, done := drop[victim]; !done {
			with := "itself"
			if partner != victim {
				with = instances[partner].InstanceID
			}
			drop[victim] = fmt.Sprintf("%s with %s (%s)", f.Kind, with, strings.TrimSpace(f.Match+" "+f.Value))
		}
		rep.Violations[i].Resolution = fmt.Sprintf("dropped %s %s", instances[victim].Split, instances[victim].InstanceID)
	}
	var (
		kept    []record.Instance
		dropped []Dropped
	)
	for i, in := range instances {
		if why, ok := drop[i]; ok {
			dropped = append(dropped, Dropped{TargetID: in.Target.ArxivID, Reason: DropContaminated, Detail: why})
			if in.Split == record.SplitTest {
				rep.Dropped.Test++
			} else {
				rep.Dropped.Train++
			}
			continue
		}
		kept = append(kept, in)
	}
	rep.After = countSplits(kept)
	// Dropping only removes violations; a leftover would be a bug here.
	if left := findViolations(kept, &testFrom, tmpl); len(left) > 0 {
		return nil, nil, rep, fmt.Errorf("decontaminate: %d violations left after policy %s", len(left), opts.Policy)
	}
	return kept, dropped, rep, nil
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
func (f finding) crossSplit(instances []record.Instance) bool {
	switch f.Kind {
	case KindTestTargetInTrain, KindTestTargetAsSource, KindGoldInPrompt:
		return f.here != f.other && instances[f.here].Split != instances[f.other].Split
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

// findViolations checks instances against every rule (the split dates
// only when testFrom is given). The result is deterministic: instances
// in order, identities by strength.
func findViolations(ins []record.Instance, testFrom *time.Time, tmpl *Template) []finding {
	var out []finding
	tids := make([][]identity, len(ins))
	byKey := map[identity][]int{}
	for i := range ins {
		tids[i] = targetIdentities(ins[i].Target)
		for _, k := range tids[i] {
			byKey[k] = append(byKey[k], i)
		}
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
				if seen[pair{a, b}] || (k.kind == MatchTitle && s2Conflict(ins[a].Target.S2PaperID, ins[b].Target.S2PaperID)) {
					continue
				}
				seen[pair{a, b}] = true
				if ins[a].Split != ins[b].Split {
					tr, te := a, b
					if ins[a].Split == record.SplitTest {
						tr, te = b, a
					}
					out = append(out, newFinding(KindTestTargetInTrain, ins, tr, te, k, ""))
					continue
				}
				first, later := a, b
				if earlier(ins[b], ins[a]) {
					first, later = b, a
				}
				out = append(out, newFinding(KindDuplicate, ins, later, first, k, ""))
			}
		}
	}

	// A test target among a training instance's sources.
	testKeys := map[identity]int{}
	for _, k := range keys {
		for _, i := range byKey[k] {
			if ins[i].Split == record.SplitTest {
				if _, ok := testKeys[k]; !ok {
					testKeys[k] = i
				}
			}
		}
	}
	for i := range ins {
		if ins[i].Split != record.SplitTrain || len(testKeys) == 0 {
			continue
		}
		reported := map[int]bool{}
		for _, s := range ins[i].Sources {
			for _, k := range sourceIdentities(s) {
				te, ok := testKeys[k]
				if !ok || reported[te] || (k.kind == MatchTitle && s2Conflict(s.S2PaperID, ins[te].Target.S2PaperID)) {
					continue
				}
				reported[te] = true
				out = append(out, newFinding(KindTestTargetAsSource, ins, i, te, k, fmt.Sprintf("Document %d", s.DocNumber)))
			}
		}
	}

	// Gold text in a prompt: the instance's own gold anywhere, a test
	// gold in a training prompt.
	x := newLeakIndex(ins, func(int) bool { return true })
	boiler := map[int]map[uint64]bool{}
	for i := range ins {
		k := ins[i].NumIdeas
		if _, ok := boiler[k]; !ok {
			boiler[k] = boilerplate(tmpl, k)
		}
		hits := x.find(ins[i].Prompt, boiler[k], func(owner int) bool {
			return owner == i || ins[i].Split == record.SplitTrain && ins[owner].Split == record.SplitTest
		})
		for _, h := range hits {
			f := newFinding(KindGoldInPrompt, ins, i, h.owner, identity{}, h.String())
			f.Match = h.field
			out = append(out, f)
		}
	}

	// Split dates.
	if testFrom != nil {
		for i, in := range ins {
			d, err := time.Parse(dateLayout, in.Target.Published)
			want := record.SplitTrain
			if err == nil && !d.Before(*testFrom) {
				want = record.SplitTest
			}
			switch {
			case err != nil:
				out = append(out, newFinding(KindSplitDate, ins, i, i, identity{}, fmt.Sprintf("published %q is not a date", in.Target.Published)))
			case in.Split != want:
				out = append(out, newFinding(KindSplitDate, ins, i, i, identity{}, fmt.Sprintf("published %s belongs in %s (test from %s)", in.Target.Published, want, testFrom.Format(dateLayout))))
			}
		}
	}
	return out
}

func newFinding(kind string, ins []record.Instance, here, other int, k identity, detail string) finding {
	f := finding{here: here, other: other, Violation: Violation{
		Kind: kind, InstanceID: ins[here].InstanceID, Split: ins[here].Split,
		Match: k.kind, Value: k.value, Detail: detail,
	}}
	if other != here {
		f.OtherID, f.OtherSplit = ins[other].InstanceID, ins[other].Split
	}
	return f
}

// earlier orders copies of one target: the earliest v1 date first, then
// the lowest instance ID, then the lowest arXiv ID as given.
func earlier(a, b record.Instance) bool {
	return cmp.Or(cmp.Compare(a.Target.Published, b.Target.Published),
		cmp.Compare(a.InstanceID, b.InstanceID), cmp.Compare(a.Target.ArxivID, b.Target.ArxivID)) < 0
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
		KindTestTargetInTrain: 0, KindTestTargetAsSource: 0, KindDuplicate: 0, KindGoldInPrompt: 0, KindSplitDate: 0,
	}
	for _, v := range vs {
		c[v.Kind]++
	}
	return c
}

func kindSummary(vs []Violation) string {
	c := countKinds(vs)
	var parts []string
	for _, k := range []string{KindTestTargetInTrain, KindTestTargetAsSource, KindDuplicate, KindGoldInPrompt, KindSplitDate} {
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
