package record

import "time"

// The pdfs stage's kinds, stored under the paper's own item (the first of
// PaperItems), like its cards: a source shared by several targets has
// one PDF, one TEI and one Document whichever target asked first.
var (
	// PDFFiles are the open-access PDFs as downloaded: bytes, with meta
	// url, final_url, origin, license, oa_status and content_type. The
	// store keeps blobs by their SHA-256, so a PDF is stored once however
	// many papers or runs name it.
	PDFFiles = BytesKindOf("pdf")
	// TEIFiles are the TEI XML a GROBID service made of the PDF, as it
	// came: bytes, with meta pdf_sha256 and converter. A better parser
	// reads it again without asking GROBID; a better converter needs only
	// the stored PDF.
	TEIFiles = BytesKindOf("tei")

	// PDFDocuments are the Documents parsed from the TEI (Source
	// SourcePDF, ServedBy the converter). They are a kind of their own,
	// never "document": fetch reads a stored Document as the paper's
	// HTML, and a PDF is no reason to stop looking for that.
	PDFDocuments = KindOf[Document]("pdf-document")
	// PDFOutcomes say how the last attempt at a paper's PDF full text
	// went, so a later run neither asks again for what cannot be had
	// (within the retry interval) nor forgets why.
	PDFOutcomes = KindOf[PDFOutcome]("pdf-outcome")
)

// Outcomes of the pdfs stage for a paper (PDFOutcome.Status).
const (
	// PDFConverted: a PDF was downloaded, converted and parsed; the
	// paper has a PDFDocuments record.
	PDFConverted = "converted"
	// PDFNone: no PDF full text can be had for now: no candidate URL,
	// every candidate refused (policy, robots.txt, not a PDF, too
	// large, a 4xx) or GROBID could extract nothing. Asked again only
	// after the retry interval, or when the candidates change.
	PDFNone = "none"
	// PDFFailed: the last attempt failed in a way that may pass (a
	// network error, a host's 5xx after retries); the next run tries
	// again.
	PDFFailed = "failed"
)

// PDFCandidate is one URL a paper's PDF may be downloaded from, with
// what Semantic Scholar says of its licence, and how asking it went.
type PDFCandidate struct {
	URL    string `json:"url"`
	Origin string `json:"origin"` // "acl_anthology" or "s2_open_access"
	// Status and License are S2's openAccessPdf status ("GOLD", "GREEN",
	// ...) and licence ("CCBY", ...), empty when S2 gives none.
	Status  string `json:"status,omitempty"`
	License string `json:"license,omitempty"`
	// Error is why this candidate gave no PDF, empty for the one used
	// and for those not tried.
	Error string `json:"error,omitempty"`
}

// PDFOutcome is the pdfs stage's record of a paper (kind "pdf-outcome").
type PDFOutcome struct {
	Paper      string         `json:"paper"`
	Status     string         `json:"status"` // PDFConverted, PDFNone or PDFFailed
	Reason     string         `json:"reason,omitempty"`
	Candidates []PDFCandidate `json:"candidates"`
	// The PDF used: where it was asked for and served from, its SHA-256
	// (the blob of the PDF record) and the licence of its candidate.
	URL      string `json:"url,omitempty"`
	FinalURL string `json:"final_url,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	License  string `json:"license,omitempty"`
	// Converter and ConverterVersion are what the TEI says made it.
	Converter        string    `json:"converter,omitempty"`
	ConverterVersion string    `json:"converter_version,omitempty"`
	Attempts         int       `json:"attempts"` // failed attempts in a row
	CheckedAt        time.Time `json:"checked_at"`
}
