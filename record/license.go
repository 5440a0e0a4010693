package record

// LicenseFromOAIPMH is the Source of a licence read from arXiv's OAI-PMH
// metadata (metadataPrefix=arXiv, its <license>): the one place arXiv
// states a paper's licence (the arXiv API has no such field, and Semantic
// Scholar's openAccessPdf.license is empty for arXiv papers).
const LicenseFromOAIPMH = "oai-pmh"

// PaperLicense is what arXiv's metadata says of a paper's licence, stored
// under the paper's versionless arXiv ID (kind PaperLicenses). A record
// is an answer, and every answer is kept so that no paper is asked about
// twice: Found false says the repository has no record of the paper;
// Found with an empty License that its record names none (papers from
// before arXiv recorded licences).
type PaperLicense struct {
	Found bool `json:"found"`
	// License is the licence URL as arXiv gives it
	// ("http://creativecommons.org/licenses/by/4.0/"); "" when the record
	// names none.
	License string `json:"license,omitempty"`
	// Deleted says the repository lists the paper as deleted (it then has
	// no metadata, and so no licence).
	Deleted bool `json:"deleted,omitempty"`
	// Source says where the answer came from (LicenseFromOAIPMH); CheckedAt
	// when (RFC 3339, UTC).
	Source    string `json:"source"`
	CheckedAt string `json:"checked_at"`
}

// Known reports whether the record states the paper's licence, or states
// that its metadata names none: what a dataset card may count.
func (l PaperLicense) Known() bool { return l.Found && !l.Deleted }
