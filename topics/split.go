package topics

import (
	"fmt"
	"slices"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// DefaultTestFrom is the dataset's default cutoff: papers first published
// on or after it belong to the test split.
const DefaultTestFrom = "2026-01-01"

// ReasonTestSplit is the status of a seed of a split the build does not
// draw on (a test target, by default).
const ReasonTestSplit = "split_not_used"

// splitOfSeed returns a seed's split: test when its arXiv v1 date is on
// or after the cutoff (the dataset's rule).
func splitOfSeed(s Seed, cutoff time.Time) string {
	d, err := time.Parse("2006-01-02", s.Published)
	if err == nil && d.Before(cutoff) {
		return record.SplitTrain
	}
	if err != nil && s.Year != 0 && s.Year < cutoff.Year() {
		return record.SplitTrain
	}
	return record.SplitTest
}

// splitOfRef returns a background paper's split. A paper that is a test
// seed is test. A paper with an arXiv ID is dated by it (its first
// version was submitted in the ID's month), and is test when that month
// ends on or after the cutoff; one without, by its Semantic Scholar
// publication date, else its year (test from the cutoff's year on). When
// the date is unknown or straddles the cutoff, the paper counts as test:
// leaving a train paper out costs a little context, letting a test paper
// in contaminates the topic.
func splitOfRef(r *Ref, cutoff time.Time, testSeeds map[string]bool) string {
	if testSeeds[IdentityArxiv+r.ArxivID] || testSeeds[IdentityS2+r.S2PaperID] {
		return record.SplitTest
	}
	if id, err := arxiv.Parse(r.ArxivID); err == nil {
		monthEnd := time.Date(id.Year(), time.Month(id.Month())+1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
		if monthEnd.Before(cutoff) {
			return record.SplitTrain
		}
		return record.SplitTest
	}
	if d, err := time.Parse("2006-01-02", r.PublicationDate); err == nil {
		if d.Before(cutoff) {
			return record.SplitTrain
		}
		return record.SplitTest
	}
	if r.Year != 0 && r.Year < cutoff.Year() {
		return record.SplitTrain
	}
	return record.SplitTest
}

// checkSplits validates Options.Splits and Options.TestFrom.
func (o Options) checkSplits() error {
	if _, err := time.Parse("2006-01-02", o.TestFrom); err != nil {
		return fmt.Errorf("test from %q: want YYYY-MM-DD", o.TestFrom)
	}
	if len(o.Splits) == 0 {
		return fmt.Errorf("splits: name at least one of %s, %s", record.SplitTrain, record.SplitTest)
	}
	for _, s := range o.Splits {
		if s != record.SplitTrain && s != record.SplitTest {
			return fmt.Errorf("splits: unknown split %q (want %s, %s)", s, record.SplitTrain, record.SplitTest)
		}
	}
	return nil
}

// applySplits labels every seed and reference with its split and, for the
// splits the build does not draw on, takes the seeds out (with their
// status) and their papers out of every influential set, so no topic's
// supporting or background papers come from them.
func applySplits(seeds []Seed, refs map[string]*Ref, opt Options) (kept []Seed, dropped []SeedStatus) {
	cutoff, _ := time.Parse("2006-01-02", opt.TestFrom)
	testSeeds := map[string]bool{}
	for i := range seeds {
		seeds[i].Split = splitOfSeed(seeds[i], cutoff)
		if seeds[i].Split == record.SplitTest {
			testSeeds[IdentityArxiv+seeds[i].ID] = true
			if seeds[i].S2PaperID != "" {
				testSeeds[IdentityS2+seeds[i].S2PaperID] = true
			}
		}
	}
	for _, r := range refs {
		r.Split = splitOfRef(r, cutoff, testSeeds)
	}
	use := func(split string) bool { return slices.Contains(opt.Splits, split) }
	for _, s := range seeds {
		if !use(s.Split) {
			dropped = append(dropped, statusOf(s, ReasonTestSplit,
				fmt.Sprintf("a %s paper (arXiv v1 %s, cutoff %s); the build draws on %v", s.Split, s.Published, opt.TestFrom, opt.Splits)))
			continue
		}
		var set []string
		for _, k := range s.Influential {
			if r := refs[k]; r != nil && !use(r.Split) {
				s.OtherSplit++
				continue
			}
			set = append(set, k)
		}
		s.Influential = set
		kept = append(kept, s)
	}
	return kept, dropped
}
