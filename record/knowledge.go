package record

import "time"

// Where a citing paper's date comes from (CitingPaper.DateFrom).
const (
	// DateFromS2 is Semantic Scholar's publicationDate (a venue's date or
	// arXiv's), or its year alone.
	DateFromS2 = "s2"
	// DateFromArxiv is the paper's arXiv v1 date: when it was first
	// published, whatever venue printed it later.
	DateFromArxiv = "arxiv-v1"
)

// CitingPaper is a paper that cites a target, as Semantic Scholar lists
// it: post-knowledge of the target's idea when it was first published
// after the target's knowledge cutoff.
type CitingPaper struct {
	PaperID string `json:"paper_id" parquet:"paper_id"` // S2's 40-hex paper ID
	ArxivID string `json:"arxiv_id,omitempty" parquet:"arxiv_id,optional"`
	Title   string `json:"title" parquet:"title"`
	// Abstract is empty when S2 has none (publishers elide some).
	Abstract string `json:"abstract,omitempty" parquet:"abstract,optional"`
	// Date is when the paper was first published (YYYY-MM-DD): its arXiv
	// v1 date when known, else S2's publicationDate; "" when only the
	// year is known. DateFrom says which.
	Date     string `json:"date,omitempty" parquet:"date,optional"`
	Year     int    `json:"year,omitempty" parquet:"year,optional"`
	DateFrom string `json:"date_from,omitempty" parquet:"date_from,optional"`
	Venue    string `json:"venue,omitempty" parquet:"venue,optional"`
	// Influential is S2's judgement that the citing paper builds on the
	// target rather than mentioning it.
	Influential              bool `json:"influential" parquet:"influential"`
	CitationCount            int  `json:"citation_count" parquet:"citation_count"`
	InfluentialCitationCount int  `json:"influential_citation_count" parquet:"influential_citation_count"`
}

// PostKnowledge is what came after a target's knowledge cutoff: the
// papers citing it that were first published after the cutoff, the N most
// influential of them, stored per target (kind PostKnowledgeSets).
type PostKnowledge struct {
	Target string    `json:"target"` // versionless arXiv ID
	Cutoff time.Time `json:"knowledge_cutoff"`
	N      int       `json:"n"` // the most kept
	// Papers are the kept papers, most influential first.
	Papers []CitingPaper `json:"papers"`
	// Citations counts what S2 listed; Before those first published on or
	// before the cutoff's day (knowledge the target could have had, not
	// post-knowledge); Undated those whose date cannot place them (a year
	// alone, the cutoff's); After the post-knowledge, of which Papers
	// are the N most influential.
	Citations int `json:"citations"`
	Before    int `json:"before_cutoff"`
	Undated   int `json:"undated"`
	After     int `json:"after_cutoff"`
	// Complete says S2's list was whole (not cut at its 10,000-item
	// window or by an empty page).
	Complete  bool      `json:"complete"`
	FetchedAt time.Time `json:"fetched_at"`
}

// PostKnowledgeSets are targets' post-knowledge, under the target's
// versionless arXiv ID.
var PostKnowledgeSets = KindOf[PostKnowledge]("post-knowledge")

// FieldPostKnowledge is the name of a target's post-knowledge in every
// dataset instance (its PostKnowledge's Papers, empty when none was
// collected) and in the exports that carry it.
const FieldPostKnowledge = "post_knowledge"
