// Package topics builds topic corpora: small sets of background papers
// that several published papers jointly built on, so that an ideation
// system can be asked for many diverse ideas from one shared context (the
// background-corpus recipe of IDEAgent, seeds/003 §4). Where an instance
// of the dataset is one target and its sources, a topic is one background
// set and the papers that support it.
//
// # Seeds
//
// Seeds are target papers with a citation graph (citegraph's Graph,
// kind "edges"): those of a targets list, or every target in the store.
// LoadGraphs reads them and runs the citegraph stage for listed targets
// the store lacks (its Runner reuses every stored response, so no request
// is made twice). Filter then keeps:
//
//   - seeds with at least one influential reference;
//   - with Options.PublishedOnly, seeds whose Semantic Scholar venue is a
//     publication venue: not empty and not a preprint server — a venue
//     whose letters contain "rxiv" (arXiv in any spelling, "arXiv.org",
//     bioRxiv, medRxiv, …) or "preprint", CoRR, SSRN, Research Square or
//     Authorea (see Published). S2 gives a preprint's server as its venue,
//     so a paper that is only on arXiv is not "published";
//   - with Options.TopPercent k, seeds among the top k% by citation count
//     within their publication year (S2's year, else the arXiv v1 year):
//     with n ranked papers in a year, those with at least the count of
//     the paper ranked ceil(n·k/100), ties all kept. Papers with no
//     citation count or year are left out.
//
// Every seed's verdict is written to seeds.jsonl.
//
// # Influential sets and identity
//
// A seed's influential set holds its references that Semantic Scholar
// marks isInfluential, each by an identity key: "s2:"+paperId; without
// one, "arxiv:"+versionless arXiv ID, then "doi:"+normalized DOI — unless
// another influential edge of the graphs pairs that arXiv ID (or DOI)
// with exactly one S2 paper ID, in which case the edge takes that S2 key
// (Identities). Edges with none of the three are counted and left out:
// a title alone is too weak an identity to equate papers across graphs.
//
// # Grouping
//
// Two seeds are similar when their sets' intersection over union is at
// least Options.IoU (default 0.5). The threshold is inclusive: two papers
// with three influential references each, two of them shared, have IoU
// 2/4 = 0.5 and are as clearly related as small sets get; the recipe's
// "above 0.5" is read as "0.5 or more". IoU is one correctly rounded
// division compared with the parsed threshold, so a fraction equal to the
// threshold compares equal.
//
// Groups are the maximal cliques of the similarity graph (Bron–Kerbosch
// with pivoting), not its connected components: components chain (A like
// B, B like C, A and C unrelated) and grow backgrounds that mix unrelated
// lines of work, whereas in a clique every supporting paper is similar to
// every other. Cliques may overlap — a paper building on two lines of
// work supports two topics — and the set of maximal cliques depends on
// the graph alone, so grouping needs no tie-breaking and ignores input
// order. A group's background set is the union of its members' sets. A
// group is kept when it has at least Options.MinSupport members (3) and
// Options.MinBackground..MaxBackground background papers (5..8); a clique
// with too large a background is rejected whole, not trimmed.
//
// # Selection
//
// Select picks Options.Budget topics (6) from the kept groups by greedy
// farthest-point selection under the distance 1 − Jaccard of background
// sets: the first is the best-supported group (seed 0) or one drawn by
// the seed; each next one is the group farthest from its nearest pick,
// ties going to a category picked fewer times (a group's category is its
// members' most frequent primary category), then to more support, then to
// the smaller ID. Distances are compared as exact fractions. A group whose
// background equals a picked one's is never picked. Group IDs derive from
// the members, so the same seeds give the same IDs in every run.
//
// # Tags and texts
//
// Each selected topic gets a short tag naming its sub-domain or task:
// from the LLM with the embedded, versioned prompt prompts/tag.prompt
// (answers cached in the store by the LLM client; an answer that stays
// invalid falls back to the heuristic, and the topic says so), or from
// HeuristicTag, which joins the words and word pairs most shared among
// the topic's titles (stop-words listed in tagStopword). Each background
// paper carries its
// idea card when the summarize stage wrote one (a source card first), else
// its Semantic Scholar abstract.
//
// # Output
//
// Write publishes topics.parquet and topics.jsonl (the Topic rows),
// groups.jsonl, seeds.jsonl and report.md in one atomic directory swap.
// Each topic carries the exact inputs of its figures: every supporting
// paper's influential set, from which the pairwise overlaps (Pairs), the
// background set and the stats can be computed again and compared. No
// file holds a time stamp, and every list is sorted, so the same store and
// options write the same bytes.
package topics
