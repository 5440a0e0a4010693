package summarize

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/groundwork/curate/record"
)

// Card kinds: which card of a paper is meant.
const (
	// CardGold is a target's own card (the held-out gold idea): problem_gap,
	// core_claim, method and inspiration.
	CardGold = "gold"
	// CardSource is a source's card: the four fields plus results and
	// takeaways.
	CardSource = "source"
)

func checkKind(kind string) error {
	if kind != CardGold && kind != CardSource {
		return fmt.Errorf("unknown card kind %q (want %q or %q)", kind, CardGold, CardSource)
	}
	return nil
}

// claimCopyJaccard is the content-word Jaccard similarity at or above which
// core_claim counts as a copy of problem_gap. Claims share topic words with
// their gap by nature ("LLMs", "instructions"); 0.7 rejects rewordings of
// the same sentence while letting a claim that answers the gap through.
const claimCopyJaccard = 0.7

var (
	// documentRef finds "Document 3"-style numbering, which no card written
	// by this stage may use: the numbered list exists only per instance.
	documentRef = regexp.MustCompile(`(?i)\bdocuments?\s+\d+\b`)
	// bracketed finds bracketed spans, to spot a second label.
	bracketed = regexp.MustCompile(`\[([^\[\]]{1,60})\]`)
	// claimLead is a "we claim that" opening, looked through before the
	// gap test.
	claimLead = regexp.MustCompile(`(?i)^(we|i)\s+(claim|argue|hypothesi[sz]e|contend|posit)\s+(that\s+)?`)
	// gapOpeners are the openings of a gap statement rather than a claim.
	gapOpeners = regexp.MustCompile(`(?i)^(there\s+(is|are|remains?|exists?)\s+(no|little|few|a\s+lack|a\s+need|an?\s+(open\s+)?(gap|need|question|challenge))` +
		`|no\s+(existing|prior|previous|current)\b` +
		`|(little|nothing)\s+is\s+known` +
		`|few\s+(studies|works|methods|papers)` +
		`|it\s+(is|remains)\s+(unclear|unknown|not\s+known|an\s+open\s+question)` +
		`|(the|a|an|one)\s+(key\s+|major\s+|central\s+|critical\s+|open\s+)?(gap|lack|limitation|challenge|problem)\b` +
		`|(the\s+)?lack\s+of\b)`)
	// gapSubjects and gapVerbs together make the "Existing methods lack …"
	// opening: a prior-work subject with a shortcoming verb in the first
	// eight words.
	gapSubject = regexp.MustCompile(`(?i)^(existing|current|prior|previous|conventional|traditional|standard|most|many)\b`)
	gapNoun    = regexp.MustCompile(`(?i)\b(methods?|approach(es)?|work|models?|techniques?|systems?|benchmarks?|datasets?|studies|literature|tools?|metrics?|evaluations?|research|solutions?|frameworks?)\b`)
	gapVerb    = regexp.MustCompile(`(?i)\b(lacks?|fail(s)?|cannot|can't|do\s+not|does\s+not|don't|doesn't|are\s+limited|is\s+limited|struggles?|ignores?|overlooks?|neglects?|miss(es)?|remains?\s+(unclear|unknown|open))\b`)
)

// ParseLabel reads the bracketed label that must open field on axis
// (AxisOpportunity for problem_gap, AxisParadigm for method). It returns
// the canonical label (Other for "[Other]") and the text after it, or an
// error that says what is wrong in words a model can act on: no label, an
// unknown label, a label of the other axis, a second label, or no text
// after the label.
func ParseLabel(field, axis string) (label, rest string, err error) {
	name := "problem_gap"
	want := "opportunity-pattern"
	if axis == AxisParadigm {
		name, want = "method", "method-paradigm"
	}
	s := strings.TrimSpace(field)
	if !strings.HasPrefix(s, "[") {
		return "", "", fmt.Errorf("%s must open with exactly one bracketed %s label, e.g. %q; it opens with %q",
			name, want, "["+Labels(axis)[3]+"]", clip(s, 40))
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", "", fmt.Errorf("%s opens with %q but the bracket is never closed", name, clip(s, 40))
	}
	inner := s[1:end]
	rest = strings.TrimSpace(s[end+1:])
	l, ax, ok := lookupLabel(inner)
	switch {
	case !ok:
		return "", "", fmt.Errorf("%s label [%s] is not one %s label: use exactly one of %s, or [Other]",
			name, inner, want, bracketList(Labels(axis)))
	case ax != "" && ax != axis:
		return "", "", fmt.Errorf("%s uses [%s], a label of the other axis; the axes never share labels: use one of %s, or [Other]",
			name, l, bracketList(Labels(axis)))
	case rest == "":
		return "", "", fmt.Errorf("%s has a label but no text after it", name)
	}
	for _, m := range bracketed.FindAllStringSubmatch(rest, -1) {
		if _, _, isLabel := lookupLabel(m[1]); isLabel {
			return "", "", fmt.Errorf("%s has a second label [%s] after [%s]; keep exactly one label, at the start", name, m[1], l)
		}
	}
	return l, rest, nil
}

func bracketList(labels []string) string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = "[" + l + "]"
	}
	return strings.Join(out, ", ")
}

// check validates the text fields of card as a card of kind and returns the
// labels parsed from problem_gap and method. The error joins every problem
// found, so one follow-up can fix them all.
func check(card *record.Card, kind string) (opportunity, paradigm string, err error) {
	if err := checkKind(kind); err != nil {
		return "", "", err
	}
	var errs []error
	fields := []struct {
		name, value string
		want        bool
	}{
		{"problem_gap", card.ProblemGap, true},
		{"core_claim", card.CoreClaim, true},
		{"method", card.Method, true},
		{"inspiration", card.Inspiration, true},
		{"results", card.Results, kind == CardSource},
		{"takeaways", card.Takeaways, kind == CardSource},
	}
	for _, f := range fields {
		empty := strings.TrimSpace(f.value) == ""
		switch {
		case f.want && empty:
			errs = append(errs, fmt.Errorf("%s is empty", f.name))
		case !f.want && !empty:
			errs = append(errs, fmt.Errorf("%s must be empty on a %s card", f.name, kind))
		}
		if !empty && documentRef.MatchString(f.value) {
			errs = append(errs, fmt.Errorf("%s refers to %q: no numbered document list exists for this card; name prior work by its authors and year or its title",
				f.name, documentRef.FindString(f.value)))
		}
	}
	var gap string
	if strings.TrimSpace(card.ProblemGap) != "" {
		var err error
		if opportunity, gap, err = ParseLabel(card.ProblemGap, AxisOpportunity); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(card.Method) != "" {
		var err error
		if paradigm, _, err = ParseLabel(card.Method, AxisParadigm); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(card.CoreClaim) != "" {
		if err := checkClaim(card.CoreClaim, gap); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return "", "", errors.Join(errs...)
	}
	return opportunity, paradigm, nil
}

// checkClaim says why claim is not a claim: it carries a label, it is a
// question, it opens like a gap statement, or it repeats gap (the
// problem_gap text after its label; "" skips that test).
func checkClaim(claim, gap string) error {
	c := strings.TrimSpace(claim)
	if strings.HasPrefix(c, "[") {
		return errors.New("core_claim must not carry a bracketed label; labels open problem_gap and method only")
	}
	if strings.HasSuffix(c, "?") {
		return errors.New("core_claim is a question; state a definite claim that could turn out false")
	}
	body := claimLead.ReplaceAllString(c, "")
	if m := gapOpeners.FindString(body); m != "" {
		return fmt.Errorf("core_claim opens like a gap statement (%q); state what the paper bets is true, not what is missing", m)
	}
	if gapSubject.MatchString(body) {
		head := firstWords(body, 8)
		if gapNoun.MatchString(head) && gapVerb.MatchString(head) {
			return fmt.Errorf("core_claim opens like a gap statement (%q); state what the paper bets is true, not what prior work lacks", head)
		}
	}
	if gap != "" {
		if j := jaccard(contentWords(c), contentWords(gap)); j >= claimCopyJaccard {
			return fmt.Errorf("core_claim repeats problem_gap (%.0f%% of their content words are shared); state the bet, not the gap", 100*j)
		}
	}
	return nil
}

// Validate checks a card of kind as stored: every required field set and
// no results or takeaways on a gold card; problem_gap and method opening
// with exactly one label of their own axis (or [Other]); a core_claim that
// is a claim; no "Document N" numbering; Opportunity and Paradigm equal to
// the bracketed labels; and a model and prompt version recorded.
func Validate(card *record.Card, kind string) error {
	opp, par, err := check(card, kind)
	if err != nil {
		return err
	}
	var errs []error
	if card.Opportunity != opp {
		errs = append(errs, fmt.Errorf("opportunity is %q but problem_gap says [%s]", card.Opportunity, opp))
	}
	if card.Paradigm != par {
		errs = append(errs, fmt.Errorf("paradigm is %q but method says [%s]", card.Paradigm, par))
	}
	if card.Model == "" || card.PromptVersion == "" {
		errs = append(errs, errors.New("card records no model or prompt version"))
	}
	return errors.Join(errs...)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !runeStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
