// Package record defines the record shapes every stage of the pipeline shares:
// the parsed Document, the reference Edge, the Selection of a reference as a
// source, the idea Card and the dataset Instance. The JSON that curate prints
// and stores uses exactly these shapes (see schema.md); keep one definition of
// each here and add fields rather than renaming them.
package record

// Source names which service served a Document's HTML.
const (
	SourceArxiv   = "arxiv"
	SourceAr5iv   = "ar5iv"
	SourceArxmliv = "arxmliv" // a LaTeXML page from neither site (e.g. the arXMLiv corpus)
	SourceUnknown = "unknown"
)

// Severity values of a Document's conversion status.
const (
	SeverityOK      = "ok"
	SeverityWarning = "warning"
	SeverityError   = "error"
	SeverityFatal   = "fatal"
	SeverityUnknown = "unknown"
)

// Document is a paper parsed from its arXiv or ar5iv LaTeXML HTML.
type Document struct {
	ID       string   `json:"id"`
	Source   string   `json:"source"`
	URL      string   `json:"url,omitempty"`
	Title    *string  `json:"title"`
	Authors  []string `json:"authors"`
	Abstract string   `json:"abstract"`
	// Preamble holds paragraphs outside every section (licence notes,
	// front matter, the whole text of a paper without sections).
	Preamble   []string    `json:"preamble,omitempty"`
	Sections   []Section   `json:"sections"`
	Tables     []Table     `json:"tables"`
	References []Reference `json:"references"`
	Mentions   []Mention   `json:"mentions"`
	FullText   string      `json:"full_text"`
	Conversion Conversion  `json:"conversion"`
}

// Section is one heading of the paper with its paragraphs and subsections.
// Appendices are sections too (ids "A1", "A1.SS2", ...).
type Section struct {
	ID         string    `json:"id"`
	Number     string    `json:"number,omitempty"`
	Heading    string    `json:"heading"`
	Level      int       `json:"level"`
	Appendix   bool      `json:"appendix,omitempty"`
	Paragraphs []string  `json:"paragraphs"`
	Sections   []Section `json:"sections,omitempty"`
}

// Table is a data table (never an equation layout) with its caption and
// cell rows; a cell spanning several columns is repeated in each of them so
// that every row of a rectangular table has the same length.
type Table struct {
	ID      string     `json:"id"`
	Number  string     `json:"number,omitempty"`
	Caption string     `json:"caption"`
	Rows    [][]string `json:"rows"`
}

// Reference is one bibliography entry of a Document.
type Reference struct {
	Key     string `json:"key"`
	Label   string `json:"label,omitempty"`
	Text    string `json:"text"`
	ArxivID string `json:"arxiv_id,omitempty"`
	DOI     string `json:"doi,omitempty"`
	Title   string `json:"title,omitempty"`
	Year    int    `json:"year,omitempty"`
}

// Mention is one sentence of the paper that cites references.
type Mention struct {
	RefKeys   []string `json:"ref_keys"`
	Sentence  string   `json:"sentence"`
	SectionID string   `json:"section_id"`
}

// Conversion is what the page says about its own LaTeX-to-HTML conversion,
// plus what the parser found wrong with it.
type Conversion struct {
	Severity         string   `json:"severity"`
	Errors           int      `json:"errors"`
	MissingCitations int      `json:"missing_citations"`
	Truncated        bool     `json:"truncated"`
	Empty            bool     `json:"empty,omitempty"`
	Notes            []string `json:"notes,omitempty"`
}

// Edge is one reference of a target: a bibliography entry, a Semantic
// Scholar reference edge, or both joined.
type Edge struct {
	TargetID        string   `json:"target_id"`
	RefKey          *string  `json:"ref_key"`
	S2PaperID       *string  `json:"s2_paper_id"`
	CorpusID        *int64   `json:"corpus_id,omitempty"`
	ArxivID         *string  `json:"arxiv_id"`
	DOI             *string  `json:"doi"`
	Title           *string  `json:"title"`
	Abstract        *string  `json:"abstract"`
	Year            *int     `json:"year"`
	Venue           *string  `json:"venue"`
	Authors         []string `json:"authors,omitempty"`
	PublicationDate *string  `json:"publication_date"`
	OpenAccessPDF   *string  `json:"open_access_pdf"`
	Intents         []string `json:"intents"`
	IsInfluential   bool     `json:"is_influential"`
	Contexts        []string `json:"contexts"`
	// MentionSections lists the section ids of the target's HTML mentions of
	// this reference, in document order, de-duplicated.
	MentionSections []string `json:"mention_sections,omitempty"`
	Link            string   `json:"link"`
}

// Link values of an Edge: how the S2 edge met the bibliography.
const (
	LinkArxivID = "arxiv_id"
	LinkDOI     = "doi"
	LinkTitle   = "title"
	LinkNone    = "none"
)

// Roles and labels of a Selection.
const (
	RoleSource = "source"
	RoleOther  = "other"

	LabelMotivates  = "motivates"
	LabelExposesGap = "exposes_gap"
	LabelFoundation = "foundation"
	LabelExtends    = "extends"
)

// Labels lists the source labels in their canonical order.
var Labels = []string{LabelMotivates, LabelExposesGap, LabelFoundation, LabelExtends}

// Selection is the classifier's verdict on one reference of a target.
type Selection struct {
	TargetID      string   `json:"target_id"`
	RefKey        string   `json:"ref_key"`
	Role          string   `json:"role"`
	Labels        []string `json:"labels,omitempty"`
	Rationale     string   `json:"rationale,omitempty"`
	Quotes        []string `json:"quotes,omitempty"`
	Model         string   `json:"model"`
	PromptVersion string   `json:"prompt_version"`
}

// Card is the idea card of one paper. Results and Takeaways are set on
// source cards only.
type Card struct {
	ProblemGap    string `json:"problem_gap" parquet:"problem_gap"`
	CoreClaim     string `json:"core_claim" parquet:"core_claim"`
	Method        string `json:"method" parquet:"method"`
	Inspiration   string `json:"inspiration" parquet:"inspiration"`
	Results       string `json:"results,omitempty" parquet:"results,optional"`
	Takeaways     string `json:"takeaways,omitempty" parquet:"takeaways,optional"`
	Opportunity   string `json:"opportunity" parquet:"opportunity"`
	Paradigm      string `json:"paradigm" parquet:"paradigm"`
	Model         string `json:"model" parquet:"model"`
	PromptVersion string `json:"prompt_version" parquet:"prompt_version"`
}
