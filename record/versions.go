package record

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Where a paper's version history was read (PaperVersions.From).
const (
	// VersionsFromSnapshot: a local copy of arXiv's metadata snapshot
	// (the JSON-lines file, one paper a line, --arxiv-metadata).
	VersionsFromSnapshot = "snapshot"
	// VersionsFromHarvest: an OAI-PMH ListRecords harvest in arXivRaw.
	VersionsFromHarvest = "oai-harvest"
	// VersionsFromGetRecord: an OAI-PMH GetRecord in arXivRaw, for a
	// paper no harvest covered.
	VersionsFromGetRecord = "oai-getrecord"
	// VersionsFromArxivAPI: an arXiv API entry, which gives v1's date
	// (published), the latest version and its date (updated) and nothing
	// of the versions between: a history of v3 or later read from it is
	// Partial.
	VersionsFromArxivAPI = "arxiv-api"
)

// ErrNoV1 is what PaperVersions.Check wraps when a history lacks v1:
// without it a paper has no date, and no knowledge cutoff can be set.
var ErrNoV1 = errors.New("the version list has no v1")

// PaperVersions is an arXiv paper's version history: each version's number
// and the date arXiv gives for its submission, stored under the paper's
// versionless arXiv ID (kind PaperVersionSets).
//
// A history may be known in part: an arXiv API entry names v1 and the
// latest version, not those between. The versions missing from the list
// (v2 of a list of v1 and v3) are then not known, and Partial says so;
// the dates that are listed are right, and the last version listed is the
// latest as of AsOf. Nothing may be inferred of a missing version's date
// but that it lies between its neighbours' (versions are numbered in the
// order they are submitted).
type PaperVersions struct {
	// ID is the versionless canonical arXiv ID.
	ID string `json:"id"`
	// Versions are in version order, v1 first (Check holds it).
	Versions []PaperVersion `json:"versions"`
	// Partial says versions are missing from the list (Missing lists
	// them): their dates are not known.
	Partial bool `json:"partial,omitempty"`
	// From says where the history was read (VersionsFrom...); AsOf when:
	// a version submitted later is not in it.
	From string    `json:"from"`
	AsOf time.Time `json:"as_of"`
}

// PaperVersion is one version of a paper.
type PaperVersion struct {
	Version int `json:"version"` // 1 for v1
	// Date is when the version was submitted, as arXiv states it
	// ("Mon, 2 Apr 2007 19:18:42 GMT"), in UTC.
	Date time.Time `json:"date"`
}

// Check reports what makes v unusable: no ID, no versions, no v1, a
// version number repeated or out of order, a version without a date,
// versions missing from a history not marked Partial. The error names
// the paper.
func (v PaperVersions) Check() error {
	if v.ID == "" {
		return errors.New("version history without a paper id")
	}
	if len(v.Versions) == 0 || v.Versions[0].Version != 1 {
		got := make([]string, len(v.Versions))
		for i, x := range v.Versions {
			got[i] = fmt.Sprintf("v%d", x.Version)
		}
		return fmt.Errorf("paper %s: %w (versions %v)", v.ID, ErrNoV1, got)
	}
	for i, x := range v.Versions {
		if i > 0 && x.Version <= v.Versions[i-1].Version {
			return fmt.Errorf("paper %s: version v%d listed after v%d", v.ID, x.Version, v.Versions[i-1].Version)
		}
		if x.Date.IsZero() {
			return fmt.Errorf("paper %s: version v%d has no date", v.ID, x.Version)
		}
	}
	if !v.Partial && len(v.Missing()) > 0 {
		// A complete history lists every version; one that lacks some and
		// does not say so would be read as complete.
		return fmt.Errorf("paper %s: versions %v are missing from a history not marked partial", v.ID, v.Missing())
	}
	return nil
}

// Missing lists the version numbers below the latest that v does not
// list: the versions whose dates are not known.
func (v PaperVersions) Missing() []int {
	var out []int
	for i := 1; i < len(v.Versions); i++ {
		for n := v.Versions[i-1].Version + 1; n < v.Versions[i].Version; n++ {
			out = append(out, n)
		}
	}
	return out
}

// First returns v1; ok is false when the history lacks it.
func (v PaperVersions) First() (PaperVersion, bool) {
	if len(v.Versions) == 0 || v.Versions[0].Version != 1 {
		return PaperVersion{}, false
	}
	return v.Versions[0], true
}

// Latest returns the highest version; ok is false for an empty history.
func (v PaperVersions) Latest() (PaperVersion, bool) {
	if len(v.Versions) == 0 {
		return PaperVersion{}, false
	}
	return v.Versions[len(v.Versions)-1], true
}

// Version returns version n; ok is false when the history lacks it.
func (v PaperVersions) Version(n int) (PaperVersion, bool) {
	i, ok := slices.BinarySearchFunc(v.Versions, n, func(x PaperVersion, n int) int { return x.Version - n })
	if !ok {
		return PaperVersion{}, false
	}
	return v.Versions[i], true
}

// OAIHarvest is the progress of an OAI-PMH ListRecords harvest of version
// histories (arXivRaw), stored after every page under the harvest's
// query (kind OAIHarvests), so an interrupted harvest goes on from its
// last page and a finished one is not asked again.
type OAIHarvest struct {
	// Query is the harvest's first request as oaipmh.Query.String writes
	// it ("metadataPrefix=arXivRaw from=2024-01-01 set=cs").
	Query string `json:"query"`
	// Token is the resumption token of the next page; "" before the first
	// page and after the last.
	Token string `json:"token,omitempty"`
	// Complete says the last page was read.
	Complete bool `json:"complete"`
	// Pages and Records count what was read; Stored the histories written
	// (only the papers asked for when the harvest was limited to some);
	// Skipped the records that could not be read (a list without v1, a
	// date that does not parse).
	Pages   int `json:"pages"`
	Records int `json:"records"`
	Stored  int `json:"stored"`
	Skipped int `json:"skipped"`
	// ResponseDate is the repository's clock at the first page: the From
	// of the next incremental harvest.
	ResponseDate time.Time `json:"response_date"`
	// Started and Updated are when the harvest began and last wrote.
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
}

// The stored kinds of version histories.
var (
	// PaperVersionSets are papers' version histories, under the
	// versionless arXiv ID.
	PaperVersionSets = KindOf[PaperVersions]("paper-versions")
	// OAIHarvests are harvests' progress, under "oai-harvest:" and the
	// query.
	OAIHarvests = KindOf[OAIHarvest]("oai-harvest")
)
