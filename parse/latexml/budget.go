package latexml

import (
	"bytes"
	"fmt"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The parse budget. Memory is the HTML node tree, and a page can make its
// tree cost far more per byte than a paper does: a page of "a<br>" makes
// two nodes of 112 bytes every five bytes, a page of short attributes one
// 48-byte attribute every three. So before the tree is built the page's
// cost is bounded from above, from counts that take a fraction of a
// millisecond per megabyte, and a page that would pass MaxTreeBytes is
// parsed only up to where it stays within it: the Document says so
// (Conversion.Truncated and a note). The recorded pages cost 20 to 28
// bytes of estimate per byte of markup (math bodies are cut before): the
// bound leaves pages of 14 MB of markup whole, 24 times the largest of
// them.
//
// The estimate is an upper bound because every node needs a '<' (an
// element, a text node after it, and at most one element the HTML rules
// imply for it, amortized: tbody and tr around a td), and every attribute
// needs a separator before it (a space, a '/' or the quote closing the
// value before). The HTML parser can otherwise clone open formatting
// elements into every new paragraph (hundreds of nodes per "<p>a"), so
// those tags reach it renamed and are named back after (see prepare).
const (
	// MaxTreeBytes is the default bound on a page's tree, as estimated.
	MaxTreeBytes = 384 << 20

	nodeCost    = 112     // an html.Node (104 bytes) in its size class
	nodesPerTag = 3       // see above
	baseNodes   = 5       // the document, html, head and body, and a text node
	attrCost    = 2 * 48  // an html.Attribute, with the slack of its slice
	byteCost    = 2       // the page's text copied into nodes, and the token buffer
	costBlock   = 1 << 16 // bytes counted at once when looking for the cut
)

// separators are the bytes one of which stands before each attribute.
var separators = []byte(" \n\t\r\f/\"'")

// treeCost returns the upper bound on the cost of b's node tree.
func treeCost(b []byte) int64 {
	cost := int64(len(b))*byteCost + nodeCost*baseNodes
	cost += int64(bytes.Count(b, []byte{'<'})) * nodeCost * nodesPerTag
	for _, c := range separators {
		cost += int64(bytes.Count(b, []byte{c})) * attrCost
	}
	return cost
}

// byteTreeCost is what one byte adds to treeCost.
func byteTreeCost(c byte) int64 {
	switch {
	case c == '<':
		return byteCost + nodeCost*nodesPerTag
	case bytes.IndexByte(separators, c) >= 0:
		return byteCost + attrCost
	}
	return byteCost
}

// Cost returns what parsing page may hold in memory, as the parse budget
// estimates it, up to the default bound: the weight a caller that bounds
// the parses of several goroutines at once gives this one.
func Cost(page []byte) int64 {
	return min(treeCost(page), MaxTreeBytes) + int64(len(page))
}

// cutToBudget returns the longest prefix of b whose tree stays within
// limit, ending before a tag when it can, and whether it is shorter than
// b. The counts run over blocks, so the cut costs no more than the count.
func cutToBudget(b []byte, limit int64) ([]byte, bool) {
	if limit < 0 || treeCost(b) <= limit {
		return b, false
	}
	cost := treeCost(nil)
	off := 0
	for off < len(b) {
		blk := b[off:min(off+costBlock, len(b))]
		c := treeCost(blk) - treeCost(nil)
		if cost+c <= limit {
			cost += c
			off += len(blk)
			continue
		}
		end := 0
		for end < len(blk) && cost+byteTreeCost(blk[end]) <= limit {
			cost += byteTreeCost(blk[end])
			end++
		}
		if i := bytes.LastIndexByte(blk[:end], '<'); i > 0 {
			end = i
		}
		return b[:off+end], true
	}
	return b, false
}

// budgetNote says what the budget cut.
func budgetNote(parsed, total int, limit int64) string {
	return fmt.Sprintf("page over the parse budget: its node tree could cost more than %d MB, so it was parsed only up to byte %d of its %d bytes of markup (math bodies aside)",
		limit>>20, parsed, total)
}

// renamedMark is appended to the name of every formatting tag before the
// tree is built ("<b class=x>" reaches the HTML parser as "<b- class=x>";
// see prepare).
const renamedMark = '-'

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isTagNameEnd reports whether c ends a tag name for the HTML tokenizer.
func isTagNameEnd(c byte) bool { return c == '>' || c == '/' || isSpace(c) }

// isFormatting reports whether name (ASCII letters, any case) is a
// formatting element's.
func isFormatting(name []byte) bool {
	var low [6]byte
	if len(name) > len(low) {
		return false
	}
	for i, c := range name {
		low[i] = c | 0x20
	}
	switch string(low[:len(name)]) {
	case "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u":
		return true
	}
	return false
}

// restoreFormatting names back the elements prepare renamed.
func restoreFormatting(root *html.Node) {
	for n := range root.Descendants() {
		if n.Type != html.ElementNode || n.DataAtom != 0 || len(n.Data) < 2 || n.Data[len(n.Data)-1] != renamedMark {
			continue
		}
		name := n.Data[:len(n.Data)-1]
		if !isFormatting([]byte(name)) {
			continue
		}
		if a := atom.Lookup([]byte(name)); a != 0 {
			n.DataAtom, n.Data = a, a.String()
		}
	}
}
