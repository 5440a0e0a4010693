package record

import (
	"strconv"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
)

// Pin is where a paper stood at a knowledge cutoff: the version to read
// and what came after (package knowledgecut computes it from the paper's
// version history; its type is knowledgecut.Pin).
type Pin struct {
	// Version is the last version dated on or before the cutoff, and Date
	// its date; 0 and zero when the paper was first published after it.
	Version int       `json:"version,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	// Latest is the version arXiv serves now, and LatestDate its date.
	Latest     int       `json:"latest"`
	LatestDate time.Time `json:"latest_date"`
	// Later says a version dated after the cutoff exists: the paper was
	// revised after it (or first published after it).
	Later bool `json:"later,omitempty"`
	// FirstAfter says v1 is dated after the cutoff: the paper did not
	// exist then.
	FirstAfter bool `json:"first_after,omitempty"`
}

// PaperPin is one paper of a knowledge cut: where it stood at the
// cutoff, or why that is not known.
type PaperPin struct {
	ArxivID string `json:"arxiv_id"` // versionless canonical ID
	// Pin is nil when the paper's history is unknown, or the target's is
	// (no cutoff).
	Pin *Pin `json:"pin,omitempty"`
	// From says where its history was read (VersionsFrom...); Fallback
	// why not from the metadata snapshot, when one was given and lacked
	// it; Unknown why no history was found.
	From     string `json:"from,omitempty"`
	Fallback string `json:"fallback,omitempty"`
	Unknown  string `json:"unknown,omitempty"`
	// UnknownAsOf is when arXiv answered it has no record of the paper
	// (zero for any other Unknown): asked well after the cutoff, the
	// answer stands for it (knowledgecut.UnknownStands).
	UnknownAsOf time.Time `json:"unknown_as_of,omitzero"`
	// Versions is its history as read (PaperVersions.Versions): the date
	// of whichever version a later stage reads. Partial says versions are
	// missing from it (PaperVersions.Partial): a history read from the
	// arXiv API alone, whose missing versions no other source gave.
	Versions []PaperVersion `json:"versions,omitempty"`
	Partial  bool           `json:"partial,omitempty"`
}

// History returns the paper's history as the cut read it.
func (p PaperPin) History() PaperVersions {
	return PaperVersions{ID: p.ArxivID, Versions: p.Versions, Partial: p.Partial, From: p.From}
}

// SourcePin is a source of a knowledge cut: the paper of the target's
// reference RefKey.
type SourcePin struct {
	RefKey string `json:"ref_key"`
	PaperPin
}

// KnowledgeCut is what the versions stage stores per target (kind
// KnowledgeCuts): the target's knowledge cutoff (its v1 date) and where
// the target and each of its sources on arXiv stood then, so that the
// stages after it read each paper at the version of the time and the
// dataset records what was read.
type KnowledgeCut struct {
	Target string `json:"target"` // versionless arXiv ID
	// Cutoff is the target's v1 date; zero when its history is unknown
	// (then no source is pinned).
	Cutoff time.Time `json:"knowledge_cutoff,omitzero"`
	// TargetPin is the target's own: v1, and the version served now.
	TargetPin PaperPin `json:"target_pin"`
	// Sources are the target's sources with an arXiv ID, in selection
	// order.
	Sources []SourcePin `json:"sources"`
}

// Source returns the pin of the source RefKey names; ok is false when
// the cut has none (the source has no arXiv ID, or was chosen since).
func (c *KnowledgeCut) Source(refKey string) (SourcePin, bool) {
	for _, s := range c.Sources {
		if s.RefKey == refKey {
			return s, true
		}
	}
	return SourcePin{}, false
}

// KnowledgeCuts are targets' knowledge cuts, under the target's
// versionless arXiv ID.
var KnowledgeCuts = KindOf[KnowledgeCut]("knowledge-cut")

// VersionItem is the store item of a paper's text at version v when that
// is not the text stored under its versionless key: "2409.13370v1". A
// source read at the version of its target's cutoff keeps its page, its
// Documents and its card there, apart from the version served now (which
// another target, with a later cutoff, reads).
func VersionItem(key string, v int) string { return key + "v" + strconv.Itoa(v) }

// DocVersion is the arXiv version a Document is of, as its ID says (a
// page's base href names the version served); 0 when it does not say.
func DocVersion(doc *Document) int {
	if doc == nil {
		return 0
	}
	id, err := arxiv.Parse(doc.ID)
	if err != nil {
		return 0
	}
	return id.Version
}

// ItemVersion is the version a store item names (record.VersionItem's
// "2409.13370v1": 1); 0 for a versionless key or an item of no paper.
func ItemVersion(item string) int {
	id, err := arxiv.Parse(item)
	if err != nil {
		return 0
	}
	return id.Version
}
