package sim

// Semantic Scholar's JSON shapes as the Graph API writes them: fields in
// the API's order, pointers and nil slices for its nulls, so that a record
// built from them marshals as S2 would send it. They are the one
// declaration of the wire format for everything that makes S2 data: the
// synthetic World, the demo corpus's generator and the tests' synthetic
// reference lists. (The client's s2 types are made for decoding: a string
// paperId cannot say null, and without omitempty every field is written.)

// S2Paper is a paper record: a /paper answer, an element of a batch
// answer, or the citedPaper of a reference edge.
type S2Paper struct {
	PaperID                  *string           `json:"paperId"` // null for an unresolved reference
	ExternalIDs              *S2ExternalIDs    `json:"externalIds"`
	CorpusID                 *int64            `json:"corpusId"`
	PublicationVenue         *S2Venue          `json:"publicationVenue"`
	URL                      *string           `json:"url"`
	Title                    string            `json:"title"`
	Abstract                 *string           `json:"abstract"`
	Venue                    string            `json:"venue"`
	Year                     *int              `json:"year"`
	ReferenceCount           *int              `json:"referenceCount"`
	CitationCount            *int              `json:"citationCount"`
	InfluentialCitationCount *int              `json:"influentialCitationCount"`
	IsOpenAccess             *bool             `json:"isOpenAccess"`
	OpenAccessPDF            *S2OpenAccessPDF  `json:"openAccessPdf"`
	FieldsOfStudy            []string          `json:"fieldsOfStudy"`
	S2FieldsOfStudy          []S2FieldOfStudy  `json:"s2FieldsOfStudy"`
	PublicationTypes         []string          `json:"publicationTypes"`
	PublicationDate          *string           `json:"publicationDate"`
	Journal                  *S2Journal        `json:"journal"`
	CitationStyles           map[string]string `json:"citationStyles"`
	Authors                  []S2Author        `json:"authors"`
}

// S2ExternalIDs are a paper's ids elsewhere. S2 sends CorpusId as a number
// and leaves out the systems that do not know the paper.
type S2ExternalIDs struct {
	MAG           string `json:"MAG,omitempty"`
	DBLP          string `json:"DBLP,omitempty"`
	ACL           string `json:"ACL,omitempty"`
	ArXiv         string `json:"ArXiv,omitempty"` // versionless
	DOI           string `json:"DOI,omitempty"`
	PubMed        string `json:"PubMed,omitempty"`
	PubMedCentral string `json:"PubMedCentral,omitempty"`
	CorpusID      int64  `json:"CorpusId"`
}

// S2Venue is a publicationVenue.
type S2Venue struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	AlternateNames []string `json:"alternate_names,omitempty"`
	URL            string   `json:"url,omitempty"`
}

// S2OpenAccessPDF is an openAccessPdf: since 2025 S2 sends one for every
// paper, with an empty URL for a closed one. Disclaimer explains what a
// publisher elided (an abstract, or as citingPaperInfo of a withheld
// reference list, the references).
type S2OpenAccessPDF struct {
	URL        string  `json:"url"`
	Status     *string `json:"status"`
	License    *string `json:"license"`
	Disclaimer string  `json:"disclaimer,omitempty"`
}

// S2FieldOfStudy is an s2FieldsOfStudy element.
type S2FieldOfStudy struct {
	Category string `json:"category"`
	Source   string `json:"source"`
}

// S2Journal is where a paper appeared.
type S2Journal struct {
	Name   string `json:"name,omitempty"`
	Volume string `json:"volume,omitempty"`
	Pages  string `json:"pages,omitempty"`
}

// S2Author is one author; AuthorID is null when S2 linked none.
type S2Author struct {
	AuthorID *string `json:"authorId"`
	Name     string  `json:"name"`
}

// S2Edge is one element of a references page: the edge's own fields and
// the cited paper.
type S2Edge struct {
	Contexts           []string    `json:"contexts"`
	Intents            []string    `json:"intents"`
	ContextsWithIntent []S2Context `json:"contextsWithIntent"`
	IsInfluential      bool        `json:"isInfluential"`
	CitedPaper         S2Paper     `json:"citedPaper"`
}

// S2CitingEdge is one element of a citations page: the edge's own fields
// and the citing paper.
type S2CitingEdge struct {
	Contexts           []string    `json:"contexts"`
	Intents            []string    `json:"intents"`
	ContextsWithIntent []S2Context `json:"contextsWithIntent"`
	IsInfluential      bool        `json:"isInfluential"`
	CitingPaper        S2Paper     `json:"citingPaper"`
}

// S2Context is a citing sentence with the intents S2 gave it.
type S2Context struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// ptr returns a pointer to a copy of v, for the wire types' nullable
// fields.
func ptr[T any](v T) *T { return &v }
