// Package record defines the record shapes every stage of the pipeline shares:
// the parsed Document, the reference Edge, the Selection of a reference as a
// source, the idea Card and the dataset Instance. The JSON that curate prints
// and stores uses exactly these shapes (see schema.md); keep one definition of
// each here and add fields rather than renaming them.
package record

import "encoding/json"

// Source names which service served a Document's HTML, or SourcePDF for
// a Document converted from a PDF (ServedBy then names the converter).
const (
	SourceArxiv   = "arxiv"
	SourceAr5iv   = "ar5iv"
	SourcePDF     = "pdf"
	SourceUnknown = "unknown"
	// SourceArchive: the page came from a local HTML archive (saved
	// pages or the ar5iv bulk zips), not from a request; the Document's
	// Archive and ArchiveEntry say which archive and entry.
	SourceArchive = "archive"
)

// ServedByGrobid is the ServedBy of a Document a GROBID service made from a
// PDF.
const ServedByGrobid = "grobid"

// Severity values of a Document's conversion status.
const (
	SeverityOK      = "ok"
	SeverityWarning = "warning"
	SeverityError   = "error"
	SeverityFatal   = "fatal"
	SeverityUnknown = "unknown"
)

// Document is a paper parsed from its arXiv or ar5iv LaTeXML HTML, or from
// the TEI XML a GROBID service made of its PDF.
type Document struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	// ServedBy names the converter that made the Document from a PDF
	// (ServedByGrobid) and ConverterVersion its version as its output
	// states it ("0.8.1"); both are empty for LaTeXML HTML, whose Source
	// says which site served it.
	ServedBy         string   `json:"served_by,omitempty"`
	ConverterVersion string   `json:"converter_version,omitempty"`
	URL              string   `json:"url,omitempty"`
	Title            *string  `json:"title"`
	Authors          []string `json:"authors"`
	Abstract         string   `json:"abstract"`
	// Preamble holds paragraphs outside every section (licence notes,
	// front matter, the whole text of a paper without sections).
	Preamble []string  `json:"preamble,omitempty"`
	Sections []Section `json:"sections"`
	Tables   []Table   `json:"tables"`
	// Figures are the captions of figures; only the TEI parser fills them
	// (the HTML parser reads figure captions for their mentions only).
	Figures    []Figure    `json:"figures,omitempty"`
	References []Reference `json:"references"`
	Mentions   []Mention   `json:"mentions"`
	FullText   string      `json:"full_text"`
	Conversion Conversion  `json:"conversion"`

	// Archive and ArchiveEntry name the local archive (its path as given
	// to --html-archive) and the entry in it (a file path or zip entry)
	// of a Document whose Source is SourceArchive; empty otherwise.
	Archive      string `json:"archive,omitempty"`
	ArchiveEntry string `json:"archive_entry,omitempty"`
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

// Figure is a figure of the paper: its caption, not its image.
type Figure struct {
	ID      string `json:"id"`
	Number  string `json:"number,omitempty"`
	Caption string `json:"caption"`
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
	Severity         string `json:"severity"`
	Errors           int    `json:"errors"`
	MissingCitations int    `json:"missing_citations"`
	Truncated        bool   `json:"truncated"`
	Empty            bool   `json:"empty,omitempty"`
	// RepairedSections counts sections the parser found inside another
	// element (a float or paragraph the conversion left open) and moved
	// back to their place in the section tree.
	RepairedSections int `json:"repaired_sections,omitempty"`
	// TruncatedTables counts tables whose spanning cells were expanded
	// only up to the parser's limit (see latexml.MaxTableCells).
	TruncatedTables int      `json:"truncated_tables,omitempty"`
	Notes           []string `json:"notes,omitempty"`
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

// Labels returns the source labels in their canonical order (a new slice
// each time: callers may keep or change it).
func Labels() []string {
	return []string{LabelMotivates, LabelExposesGap, LabelFoundation, LabelExtends}
}

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

// Splits of the dataset.
const (
	SplitTrain = "train"
	SplitTest  = "test"
)

// Text levels of a source card: what the summarizer read. TextFull is
// the paper's arXiv (or ar5iv) HTML, TextPDF the TEI a GROBID service made
// of its open-access PDF, TextAbstract Semantic Scholar's abstract alone.
const (
	TextFull     = "full_text"
	TextPDF      = "pdf_full_text"
	TextAbstract = "abstract"
)

// TextLevels returns the text levels from the most text to the least (a
// new slice each time).
func TextLevels() []string { return []string{TextFull, TextPDF, TextAbstract} }

// TextRank orders text levels by how much of the paper they give: 3 for
// TextFull (LaTeXML keeps the paper's own structure), 2 for TextPDF (a
// PDF converter's reading of the layout), 1 for TextAbstract, 0 for
// anything else. A card written at a lower rank than the text now
// available is written again.
func TextRank(level string) int {
	switch level {
	case TextFull:
		return 3
	case TextPDF:
		return 2
	case TextAbstract:
		return 1
	}
	return 0
}

// IsFullText reports whether a text level is a whole paper (HTML or PDF)
// rather than its abstract.
func IsFullText(level string) bool { return level == TextFull || level == TextPDF }

// Instance is one row of the dataset's train or test split: a target with
// its numbered source cards (the model's input) and its gold card (held
// out: never part of Prompt). Slices carry the Parquet "list" tag so that
// they become standard 3-level LISTs that every reader maps to a list
// type; optional strings are written as null when empty.
type Instance struct {
	// InstanceID is derived from the target's versionless arXiv ID, so
	// it stays the same across runs and versions of the paper.
	InstanceID string           `json:"instance_id" parquet:"instance_id"`
	Split      string           `json:"split" parquet:"split"`
	Target     InstanceTarget   `json:"target" parquet:"target"`
	Sources    []InstanceSource `json:"sources" parquet:"sources,list"`
	Gold       Card             `json:"gold" parquet:"gold"`
	// KnowledgeCutoff is the knowledge cut's date (YYYY-MM-DD): the
	// target's v1 date, as of which its sources are read (see
	// knowledgecut); empty when the cut is off or the target's versions
	// are unknown.
	KnowledgeCutoff string `json:"knowledge_cutoff,omitempty" parquet:"knowledge_cutoff,optional"`
	// Prompt is the model input rendered from the versioned template
	// (Provenance.PromptVersions.Dataset) with NumIdeas.
	Prompt     string     `json:"prompt" parquet:"prompt"`
	NumIdeas   int        `json:"num_ideas" parquet:"num_ideas"`
	Provenance Provenance `json:"provenance" parquet:"provenance"`
	// Fields are what stages add to each instance (their declared
	// pipeline.Field), by field name, as their records are stored: the
	// dataset writes each as a column of its own after the ones above.
	Fields map[string]json.RawMessage `json:"fields,omitempty" parquet:"-"`
	// CutSources are the sources the knowledge cut left out, each with
	// why: the dataset card counts them, and the contamination rules
	// compare those the target's text as read cites (Known). They are
	// not published (no column, no JSONL key).
	CutSources []CutSource `json:"cut_sources,omitempty" parquet:"-"`
}

// CutSource is a source the knowledge cut left out of an instance.
type CutSource struct {
	RefKey    string `json:"ref_key"`
	ArxivID   string `json:"arxiv_id,omitempty"`
	S2PaperID string `json:"s2_paper_id,omitempty"`
	DOI       string `json:"doi,omitempty"`
	Title     string `json:"title,omitempty"`
	// Dropped says why (knowledgecut.Dropped...).
	Dropped string `json:"dropped"`
	// Known says the target's text as read cites it: the target was read
	// at a version after its cutoff (its v1 had no HTML), which may know
	// what came later, and so may its gold card.
	Known bool `json:"known,omitempty"`
}

// InstanceTarget is the target paper's metadata in an Instance.
type InstanceTarget struct {
	ArxivID         string   `json:"arxiv_id" parquet:"arxiv_id"`
	Title           string   `json:"title" parquet:"title"`
	Published       string   `json:"published" parquet:"published"` // arXiv v1 date, YYYY-MM-DD
	PrimaryCategory string   `json:"primary_category" parquet:"primary_category"`
	Categories      []string `json:"categories" parquet:"categories,list"`
	Domain          string   `json:"domain" parquet:"domain"`
	// DOI and S2PaperID are identities the contamination check compares.
	DOI       string `json:"doi,omitempty" parquet:"doi,optional"`
	S2PaperID string `json:"s2_paper_id,omitempty" parquet:"s2_paper_id,optional"`
	// NumReferences counts the target's references (edges), of which
	// Sources were kept.
	NumReferences int `json:"num_references" parquet:"num_references"`
	// Version is the version of the target whose text was read ("v1"
	// under the knowledge cut, else the one arXiv served), VersionDate
	// its date (YYYY-MM-DD); empty when unknown.
	Version     string `json:"version,omitempty" parquet:"version,optional"`
	VersionDate string `json:"version_date,omitempty" parquet:"version_date,optional"`
}

// InstanceSource is one numbered source of an Instance: "Document N" of
// the model input, with the classifier's verdict and the source card.
type InstanceSource struct {
	DocNumber int    `json:"doc_number" parquet:"doc_number"`
	RefKey    string `json:"ref_key,omitempty" parquet:"ref_key,optional"`
	ArxivID   string `json:"arxiv_id,omitempty" parquet:"arxiv_id,optional"`
	S2PaperID string `json:"s2_paper_id,omitempty" parquet:"s2_paper_id,optional"`
	DOI       string `json:"doi,omitempty" parquet:"doi,optional"`
	Title     string `json:"title,omitempty" parquet:"title,optional"`
	Year      int    `json:"year,omitempty" parquet:"year,optional"`
	// Labels are the Selection's labels (motivates, exposes_gap,
	// foundation, extends).
	Labels    []string `json:"labels" parquet:"labels,list"`
	Rationale string   `json:"rationale" parquet:"rationale"`
	Quotes    []string `json:"quotes" parquet:"quotes,list"`
	TextLevel string   `json:"text_level" parquet:"text_level"` // TextFull, TextPDF or TextAbstract
	Card      Card     `json:"card" parquet:"card"`
	// Version is the version of the source whose text was carded ("v2"),
	// VersionDate its date (YYYY-MM-DD): under the knowledge cut the last
	// version dated on or before the instance's KnowledgeCutoff when it
	// could be read; RevisedAfterCutoff says the version read is dated
	// after the cutoff (kept and marked under --knowledge-cut flag).
	Version            string `json:"version,omitempty" parquet:"version,optional"`
	VersionDate        string `json:"version_date,omitempty" parquet:"version_date,optional"`
	RevisedAfterCutoff bool   `json:"revised_after_cutoff,omitempty" parquet:"revised_after_cutoff,optional"`
}

// Provenance says what produced an Instance. Models and prompt versions
// are per stage; a stage whose records came from several models or prompt
// versions lists them sorted, joined by ", ".
type Provenance struct {
	PipelineVersion string      `json:"pipeline_version" parquet:"pipeline_version"`
	Models          StageValues `json:"models" parquet:"models"`
	PromptVersions  StageValues `json:"prompt_versions" parquet:"prompt_versions"`
	CreatedAt       string      `json:"created_at" parquet:"created_at"` // RFC 3339, UTC
}

// StageValues holds one value per pipeline stage. It is a struct rather
// than a map because a Parquet STRUCT reads the same in every reader
// (Hugging Face datasets has no MAP feature).
type StageValues struct {
	Classify  string `json:"classify,omitempty" parquet:"classify,optional"`
	Summarize string `json:"summarize,omitempty" parquet:"summarize,optional"`
	Dataset   string `json:"dataset,omitempty" parquet:"dataset,optional"`
}
