// Package citegraph is the second stage of the pipeline: it pulls a
// target's reference edges from the Semantic Scholar Graph API (intents,
// isInfluential, citation contexts, the cited paper's metadata), records
// the target's arXiv metadata (v1 date, categories), and joins every edge to
// the target's parsed bibliography and its mention sentences.
package citegraph

import "github.com/groundwork/curate/record"

// Stage is the citegraph stage's name in the store's ledger.
const Stage = "citegraph"

// Record kinds the citegraph stage writes for a target.
const (
	KindS2References = "s2-references" // the S2 reference list as received
	KindS2Batch      = "s2-batch"      // batch lookups that filled missing fields
	KindS2Paper      = "s2-paper"      // S2's record of the target itself
	KindArxivMeta    = "arxiv-meta"    // the arXiv API entry of the target
	KindGraph        = "edges"         // the Graph: the linked edges and metadata
)

// S2 status of a target's reference list.
const (
	S2OK       = "ok"        // the list as S2 has it
	S2Withheld = "withheld"  // "data": null: the publisher withheld it; edges come from the bibliography
	S2Missing  = "not_found" // S2 does not know the paper (404)
	S2Partial  = "partial"   // paging stopped early (10,000 cap or an empty page)
)

// Graph is what the citegraph stage stores for a target (kind "edges"): one
// Edge per bibliography entry or S2 edge, the target's metadata, and how
// the linking went.
type Graph struct {
	TargetID string     `json:"target_id"`
	Meta     TargetMeta `json:"meta"`
	S2Status string     `json:"s2_status"`
	// Disclaimer is S2's reason when the list was withheld.
	Disclaimer string        `json:"disclaimer,omitempty"`
	Edges      []record.Edge `json:"edges"`
	Report     LinkReport    `json:"report"`
}

// TargetMeta is the target paper's metadata: what decides its split
// (the arXiv v1 date) and its domain (the primary category).
type TargetMeta struct {
	ArxivID         string   `json:"arxiv_id"`
	Title           string   `json:"title,omitempty"`
	Published       string   `json:"published,omitempty"` // arXiv v1 date, YYYY-MM-DD
	PrimaryCategory string   `json:"primary_category,omitempty"`
	Categories      []string `json:"categories,omitempty"`
	DOI             string   `json:"doi,omitempty"`
	S2PaperID       string   `json:"s2_paper_id,omitempty"`
	CorpusID        *int64   `json:"corpus_id,omitempty"`
	Venue           string   `json:"venue,omitempty"`
	Year            int      `json:"year,omitempty"`
	CitationCount   *int     `json:"citation_count,omitempty"`
	// Sources says where each field came from: "html", "s2", "arxiv-api".
	Sources map[string]string `json:"sources,omitempty"`
}
