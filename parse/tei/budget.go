package tei

import (
	"bytes"
	"fmt"
)

// The parse budget, as the HTML parser's (package latexml): before the
// tree is read, an upper bound of its cost is counted, and a TEI that
// would pass MaxTreeBytes is read only up to where it stays within it, as
// a TEI cut short (Conversion.Truncated, and a note naming the budget).
// Every element or text node needs a '<' before it (an element; the text
// after it), and every attribute an '=' (XML has no attribute without a
// value). Real GROBID TEI costs 8 to 11 bytes of estimate per byte, so
// the bound leaves TEI of 35 MB whole: a long thesis is a few MB.
const (
	// MaxTreeBytes is the bound on a TEI's tree, as estimated.
	MaxTreeBytes = 384 << 20

	nodeCost    = 80 + 16 // a node, and its place in its parent's children
	nodesPerTag = 2       // an element and the text after it
	attrCost    = 2 * 64  // an attribute, its slice's slack, and the decoder's copy while reading it
	byteCost    = 2       // the text and names copied out of the input
	costBlock   = 1 << 16 // bytes counted at once when looking for the cut
)

// treeCost returns the upper bound on the cost of data's tree.
func treeCost(data []byte) int64 {
	return int64(len(data))*byteCost + nodeCost*(nodesPerTag+1) +
		int64(bytes.Count(data, []byte{'<'}))*nodeCost*nodesPerTag +
		int64(bytes.Count(data, []byte{'='}))*attrCost
}

func byteTreeCost(c byte) int64 {
	switch c {
	case '<':
		return byteCost + nodeCost*nodesPerTag
	case '=':
		return byteCost + attrCost
	}
	return byteCost
}

// Cost returns what parsing data may hold in memory, as the parse budget
// estimates it: the weight a caller that bounds the parses of several
// goroutines at once gives this one.
func Cost(data []byte) int64 {
	return min(treeCost(data), MaxTreeBytes) + int64(len(data))
}

// cutToBudget returns the longest prefix of data whose tree stays within
// limit, ending before a tag when it can, and whether it is shorter.
func cutToBudget(data []byte, limit int64) ([]byte, bool) {
	if limit < 0 || treeCost(data) <= limit {
		return data, false
	}
	cost := treeCost(nil)
	off := 0
	for off < len(data) {
		blk := data[off:min(off+costBlock, len(data))]
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
		return data[:off+end], true
	}
	return data, false
}

func budgetNote(parsed, total int, limit int64) string {
	return fmt.Sprintf("tei over the parse budget: its tree could cost more than %d MB, so it was read only up to byte %d of %d",
		limit>>20, parsed, total)
}
