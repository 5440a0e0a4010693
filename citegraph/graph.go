// Package citegraph is the second stage of the pipeline: it pulls a
// target's reference edges from the Semantic Scholar Graph API (intents,
// isInfluential, citation contexts, the cited paper's metadata), records
// the target's arXiv metadata (v1 date, categories), and joins every edge to
// the target's parsed bibliography and its mention sentences.
package citegraph

// Stage is the citegraph stage's name in the store's ledger.
const Name = "citegraph"
