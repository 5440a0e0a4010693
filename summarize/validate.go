package summarize

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/groundwork/curate/record"
)

func checkKind(kind string) error {
	if kind != record.CardGold && kind != record.CardSource {
		return fmt.Errorf("unknown card kind %q (want %q or %q)", kind, record.CardGold, record.CardSource)
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

// check validates the text fields of card as a card of kind and returns the
// labels parsed from problem_gap and method. The error joins every problem
// found, so one follow-up can fix them all.
func check(card *record.Card, kind string) (opportunity, paradigm string, err error) {
	if err := checkKind(kind); err != nil {
		return "", "", err
	}
	var errs []error
	for f, v := range card.Fields() {
		want := f.Idea || kind == record.CardSource // source cards add results and takeaways
		empty := strings.TrimSpace(*v) == ""
		switch {
		case want && empty:
			errs = append(errs, fmt.Errorf("%s is empty", f.Name))
		case !want && !empty:
			errs = append(errs, fmt.Errorf("%s must be empty on a %s card", f.Name, kind))
		}
		if !empty && documentRef.MatchString(*v) {
			errs = append(errs, fmt.Errorf("%s refers to %q: no numbered document list exists for this card; name prior work by its authors and year or its title",
				f.Name, documentRef.FindString(*v)))
		}
	}
	var gap string
	if strings.TrimSpace(card.ProblemGap) != "" {
		var err error
		if opportunity, gap, err = record.ParseCardLabel(card.ProblemGap, record.AxisOpportunity); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.TrimSpace(card.Method) != "" {
		var err error
		if paradigm, _, err = record.ParseCardLabel(card.Method, record.AxisParadigm); err != nil {
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

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
