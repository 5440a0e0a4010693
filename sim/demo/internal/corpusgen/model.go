// Package corpusgen writes the demo corpus: the synthetic papers of the
// demo package rendered as the services would serve them (LaTeXML pages,
// Semantic Scholar JSON, arXiv Atom entries) plus a manifest of what the
// corpus intends. Every paper, author, venue and DOI in it is invented;
// DOIs use the 10.5555 prefix, which is reserved for examples.
//
// The content lives in Go literals (papers.go, targets.go, sources.go) and
// the renderers are deterministic, so running the generator twice gives the
// same bytes.
package corpusgen

// Paper is one paper of the corpus: a target, a source with its own page, a
// cited paper known only to Semantic Scholar, or a background reference.
type Paper struct {
	Key string // internal name, used in citations: {{key}}

	// arXiv metadata; Arxiv is empty for papers not on arXiv.
	Arxiv      string   // versionless id
	Versions   []string // RFC 3339 submission time of v1, v2, ...
	Primary    string
	Cats       []string // all categories, primary first
	Comment    string
	JournalRef string

	Title    string
	S2Title  string // Semantic Scholar's spelling when it differs from Title
	Authors  []string
	Abstract string

	// Publication metadata as Semantic Scholar knows it.
	DOI        string // publisher DOI; arXiv-only papers get 10.48550/arXiv.ID
	Venue      string // "" for arXiv-only papers, which S2 lists as "arXiv.org"
	VenueType  string // "journal", "conference" or "" (no publicationVenue)
	Journal    string // journal name for the bibliography when Venue is a journal
	Volume     string
	Pages      string
	Publisher  string // books
	Year       int    // S2 year (the venue's year when published)
	PubDate    string // S2 publicationDate; "" means null
	PubTypes   []string
	Fields     []string // fieldsOfStudy
	Citations  int
	NoAbstract bool // S2 serves no abstract for it at all (publisher elided)

	Page *Page // its own LaTeXML page, if arXiv (or ar5iv) has one
	// PageVersions are the versions arXiv has the page for (html/IDvN),
	// each rendered with its own version; nil: the latest only. The
	// versionless html/ID serves the latest.
	PageVersions []int
}

// Page is a paper's LaTeXML page.
type Page struct {
	Ar5ivOnly    bool     // served by ar5iv only (older style, ar5iv footer)
	Affiliations []string // one per author, same order
	AbstractPara bool     // abstract as an "Abstract." paragraph, no abstract block
	FullURLCites bool     // cite links as https://arxiv.org/html/IDvN#bib.bibN
	Generated    string   // footer date, e.g. "Mon Mar 10 17:02:11 2025"
	Sections     []Section
	Bib          []BibItem
}

// Section is a section or subsection.
type Section struct {
	Title  string
	Blocks []Block
	Subs   []Section
}

// Block is a paragraph (sentences, optionally a display equation and
// sentences after it) or a table float.
type Block struct {
	Sentences []string
	Equation  string // TeX of a numbered display equation after Sentences
	After     []string
	Table     *Table
}

// Table is a data table float.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// BibItem is one bibliography entry of a page.
type BibItem struct {
	Key   string // a paper key, or a key of a bibliography-only entry
	Title string // the title as this bibliography spells it; "" = paper's
	NoDOI bool   // the entry omits the paper's DOI
	Raw   []string
	// Raw is the blocks of an entry for a work the corpus has no record
	// of (a talk); Key is then only a local name.
}

// Target is what a target paper intends: its sources and the quirks of its
// Semantic Scholar reference list.
type Target struct {
	Key     string
	Sources []Source
	S2      S2Quirks
	Domain  string
}

// Source is an intended source of a target.
type Source struct {
	Key    string
	Labels []string // motivates, exposes_gap, foundation, extends
	Cue    string   // the phrase in the text that marks it
}

// S2Quirks make a target's S2 reference list imperfect like the real one.
type S2Quirks struct {
	PageCap      int      // the server returns at most this many edges per page
	Missing      []string // bibliography entries S2 has no edge for
	Extra        []string // papers S2 lists that the bibliography lacks
	Unresolved   map[string]Unresolved
	NullAbstract []string // edges whose citedPaper.abstract is null
	Influential  []string // edges with isInfluential true
	Intents      map[string][]string
	NoContexts   []string // edges S2 found no citation context for
}

// Unresolved is an S2 edge whose cited paper S2 could not resolve.
type Unresolved struct {
	Title string // a raw fragment of the bibliography entry
	Venue string
	Year  int
}
