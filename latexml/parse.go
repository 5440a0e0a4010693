// Package latexml parses the LaTeXML HTML that arXiv (arxiv.org/html) and
// ar5iv serve into a record.Document.
package latexml

import (
	"github.com/groundwork/curate/record"
)

// Options tell the parser what it cannot read from the page itself.
type Options struct {
	ID     string // arXiv ID as fetched; read from the page when empty
	Source string // record.SourceArxiv or record.SourceAr5iv; detected when empty
	URL    string // where the page was fetched from
}

// Parse parses one LaTeXML page. It never panics; a page without content
// or with a fatal conversion yields a Document whose Conversion says so.
func Parse(page []byte, opt Options) (*record.Document, error) {
	panic("not yet")
}
