// Package conformance is the test suite every simulated service backend
// must pass, and the recorded fixtures with it: the protocol invariants
// the real arXiv, ar5iv, Semantic Scholar and arXiv API show, checked
// against what a backend answers.
//
// A backend is a Literature served by package sim's services: the
// synthetic World, the demo corpus, the recorded fixtures loaded into a
// Corpus. Its test builds a Suite that says how to start the services and
// what the backend holds (papers with pages, without, reference lists,
// withheld ones, ids nobody knows), then runs it:
//
//	func TestConformance(t *testing.T) {
//		s := &conformance.Suite{Start: ..., ArxivPages: ..., S2Lists: ...}
//		s.RunTests(t)
//	}
//
// RunTests runs every method of Suite named Test... as a subtest, in name
// order; a test whose probes the backend leaves empty is skipped, saying
// so. The checks of single answers (CheckS2ReferencesPage, CheckS2Paper,
// CheckS2Batch, CheckS2Error, CheckArxivPage, CheckAtomFeed, ...) are
// exported: this package's own test applies them to the recorded
// responses of ../shared/fixtures, so the suite's idea of the protocols is
// held to what the real services answered.
//
// New checks go where they hold for every backend and for the recordings;
// what only one backend does (the demo corpus's quirks, a World's
// determinism) stays in that backend's tests.
package conformance
