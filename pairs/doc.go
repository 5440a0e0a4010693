// Package pairs builds the impact judge's validation pairs (the paper's
// Appendix C.1, "Agreement with real-world impact"): pairs of training
// targets published close together whose Semantic Scholar uptake differs
// clearly, each paper rewritten into an idea-only summary that reveals no
// results, metrics or title, so that a judge compares ideas and the
// higher-uptake paper is the known winner.
//
// The rules, each a field of Options with the paper's value as default:
//
//   - both papers are training targets (arXiv v1 date before the dataset's
//     cutoff) published in FromYear..ToYear (2022–2023), in the same
//     calendar year and at most MaxMonths (4) months apart, which removes
//     the age-of-paper confound;
//   - their citation counts differ by a ratio of at least MinRatio (3) and
//     by at least MinGap (10) citations;
//   - both influential-citation counts are above 0 and the winner's (the
//     paper with more citations) is at least MinInfluentialGap (5) higher.
//
// Counts come from the target's stored Semantic Scholar record (citegraph's
// kind "s2-paper"), with the date it was read (the record's time). Each
// paper is in at most one pair: candidates are taken closest in time
// first. A paper is rewritten from its gold card (and abstract) by an LLM
// through package llm, whose answers the store caches, or by the
// heuristic backend, which says so in the output; CheckSummary rejects a
// summary that leaks the title's words or any number or states results,
// and a paper whose summary fails is left out with the reason.
//
// Write publishes pairs.parquet (both orderings of every pair, the winner
// known), pairs.jsonl (every pair with the claims behind it), papers.jsonl
// (every target considered, with why it was or was not used) and a README.
// Every claim can be re-derived from the store (see the package test).
package pairs
