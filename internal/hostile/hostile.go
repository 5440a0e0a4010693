// Package hostile writes pages and TEI documents made to cost a parser the
// most memory or time per byte: tiny tags, tiny table cells, deep spans,
// attributes without end, formatting tags the HTML parser clones, and TEI
// of tiny elements or of text cut by comments. The benchmarks generate them
// at the size they need (they are never stored); the tests use small ones.
package hostile

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Kinds of hostile input, by name.
const (
	TinyTags    = "tiny-tags"    // "a<br>" repeated: two nodes every five bytes
	TinyCells   = "tiny-cells"   // one table of one-letter cells, 100 to a row
	DeepSpans   = "deep-spans"   // spans nested 400 deep, again and again
	Attributes  = "attributes"   // spans of 400 two-letter attributes each, all different
	Formatting  = "formatting"   // 300 open formatting tags cloned into every paragraph
	TEITiny     = "tei-tiny"     // a TEI body of one-word references
	TEIComments = "tei-comments" // a TEI paragraph whose text is cut by a comment every letter
)

// Pages are the kinds that are LaTeXML pages; TEIs the TEI documents.
var (
	Pages = []string{TinyTags, TinyCells, DeepSpans, Attributes, Formatting}
	TEIs  = []string{TEITiny, TEIComments}
)

// The LaTeXML page around a hostile body.
const (
	pageHead = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Hostile</title></head><body>` +
		`<div class="ltx_page_main"><article class="ltx_document"><h1 class="ltx_title ltx_title_document">Hostile</h1>` +
		`<section class="ltx_section" id="S1"><h2 class="ltx_title ltx_title_section">1 Body</h2>`
	pageTail = `</section></article></div></body></html>` + "\n"
	teiHead  = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title level="a" type="main">Hostile</title></titleStmt>` +
		`<sourceDesc><biblStruct><analytic></analytic></biblStruct></sourceDesc></fileDesc></teiHeader><text><body><div><head n="1">Body</head>`
	teiTail = `</div></body><back><div type="references"><listBibl/></div></back></text></TEI>` + "\n"
)

// Write writes a hostile input of the given kind, about size bytes long
// (never longer), to w.
func Write(w io.Writer, kind string, size int) error {
	var head, open, unit, closing, tail string
	switch kind {
	case TinyTags:
		head, open, unit, closing, tail = pageHead, `<div class="ltx_para"><p class="ltx_p">`, "a<br>", `</p></div>`, pageTail
	case TinyCells:
		var row strings.Builder
		row.WriteString("<tr>")
		for range 100 {
			row.WriteString("<td>a")
		}
		head, open, unit, closing, tail = pageHead,
			`<figure class="ltx_table" id="S1.T1"><figcaption class="ltx_caption">Table 1: cells</figcaption><table class="ltx_tabular">`,
			row.String(), `</table></figure>`, pageTail
	case DeepSpans:
		const depth = 400
		unit = strings.Repeat(`<span class="ltx_text">`, depth) + "a" + strings.Repeat("</span>", depth)
		head, open, closing, tail = pageHead, `<div class="ltx_para"><p class="ltx_p">`, `</p></div>`, pageTail
	case Attributes:
		// The tokenizer keeps the first of attributes of one name.
		var b strings.Builder
		b.WriteString("<span")
		for i := range 400 {
			b.WriteString(" " + string(rune('a'+i/26%26)) + string(rune('a'+i%26)))
		}
		b.WriteString(">a</span>")
		unit = b.String()
		head, open, closing, tail = pageHead, `<div class="ltx_para"><p class="ltx_p">`, `</p></div>`, pageTail
	case Formatting:
		var b strings.Builder
		b.WriteString(`<div class="ltx_para"><p class="ltx_p">`)
		for i := range 300 {
			fmt.Fprintf(&b, `<b class="c%d">`, i)
		}
		head, open, unit, closing, tail = pageHead, b.String(), "<p>a", "", pageTail
	case TEITiny:
		head, open, unit, closing, tail = teiHead, "<p>", `<ref type="bibr" target="#b0">a</ref>`, "</p>", teiTail
	case TEIComments:
		head, open, unit, closing, tail = teiHead, "<p>", "a<!---->", "</p>", teiTail
	default:
		return fmt.Errorf("hostile input %q: want one of %s", kind, strings.Join(append(append([]string(nil), Pages...), TEIs...), ", "))
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	fixed := len(head) + len(open) + len(closing) + len(tail)
	n := 0
	if size > fixed {
		n = (size - fixed) / len(unit)
	}
	bw.WriteString(head)
	bw.WriteString(open)
	for range n {
		bw.WriteString(unit)
	}
	bw.WriteString(closing)
	bw.WriteString(tail)
	return bw.Flush()
}

// Bytes returns a hostile input of the given kind, about size bytes long.
func Bytes(kind string, size int) ([]byte, error) {
	var b strings.Builder
	b.Grow(size)
	if err := Write(&b, kind, size); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
