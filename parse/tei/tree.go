package tei

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// Namespaces of GROBID's output.
const (
	nsTEI = "http://www.tei-c.org/ns/1.0"
	nsXML = "http://www.w3.org/XML/1998/namespace"
)

// Bounds on the input, so that hostile or broken XML costs bounded time
// and memory. The largest real GROBID TEI (a long thesis) is a few MB and
// a few hundred thousand elements, and no real element nests deeper than
// about 20.
const (
	// MaxSize is the largest TEI document Parse accepts, in bytes.
	MaxSize = 64 << 20
	// MaxDepth is the deepest element nesting Parse accepts.
	MaxDepth = 256
	// MaxElements is the most elements Parse reads.
	MaxElements = 2_000_000
)

// keptAttrs are the attributes the parser reads; GROBID's bulky coords
// and the rest are dropped while reading, which keeps the tree small.
var keptAttrs = map[string]bool{
	"type": true, "target": true, "n": true, "id": true, "when": true, "version": true,
	"ident": true, "place": true, "cols": true, "rows": true, "level": true, "unit": true,
	"from": true, "to": true, "status": true,
}

type attr struct{ key, val string }

// node is an element or, with an empty name, a text node. Elements of the
// TEI namespace (or of none) are named by their local name; elements of
// other namespaces by "{namespace}local", so they never match a TEI name.
type node struct {
	name     string
	text     string // text node only
	attrs    []attr
	children []*node
}

func (n *node) attr(key string) string {
	for _, a := range n.attrs {
		if a.key == key {
			return a.val
		}
	}
	return ""
}

// child returns the first child element named name.
func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// all returns the child elements named name.
func (n *node) all(name string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// path follows child elements by name; nil when one is missing.
func (n *node) path(names ...string) *node {
	for _, name := range names {
		if n == nil {
			return nil
		}
		n = n.child(name)
	}
	return n
}

// descendants returns the elements named name below n, in document order,
// not descending into a match.
func (n *node) descendants(name string) []*node {
	var out []*node
	var rec func(*node)
	rec = func(x *node) {
		for _, c := range x.children {
			if c.name == name {
				out = append(out, c)
				continue
			}
			rec(c)
		}
	}
	rec(n)
	return out
}

// readTree reads a TEI document into a tree. A document cut short
// (unexpected end of input) yields the tree read so far and truncated.
func readTree(data []byte) (root *node, truncated bool, err error) {
	if len(data) > MaxSize {
		return nil, false, fmt.Errorf("%w: %d bytes exceed the limit of %d", ErrTooLarge, len(data), MaxSize)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.Entity = xml.HTMLEntity // harmless for GROBID, kind to hand-written TEI
	d.CharsetReader = charset.NewReaderLabel
	var stack []*node
	elements := 0
	// Text that comments or processing instructions cut is one node: its
	// pieces are gathered here and set when the next tag comes (adding
	// them one by one to a string made a TEI of "a<!---->" quadratic).
	var open *node
	var pieces []byte // open's text once a second piece came
	flush := func() {
		if open != nil && len(pieces) > 0 {
			open.text = string(pieces)
		}
		open, pieces = nil, pieces[:0]
	}
	defer flush()
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if len(stack) > 0 {
				return root, true, nil
			}
			break
		}
		if err != nil {
			if root != nil && unexpectedEOF(err) {
				return root, true, nil
			}
			if root == nil {
				return nil, false, fmt.Errorf("%w: %w", ErrNotTEI, err)
			}
			return nil, false, fmt.Errorf("malformed xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			flush()
			elements++
			if elements > MaxElements {
				return nil, false, fmt.Errorf("%w: more than %d elements", ErrTooLarge, MaxElements)
			}
			if len(stack) >= MaxDepth {
				return nil, false, fmt.Errorf("%w: elements nest deeper than %d levels (at byte %d)", ErrTooDeep, MaxDepth, d.InputOffset())
			}
			n := &node{name: elemName(t.Name)}
			for _, a := range t.Attr {
				if (a.Name.Space == "" || a.Name.Space == nsXML) && keptAttrs[a.Name.Local] {
					n.attrs = append(n.attrs, attr{a.Name.Local, a.Value})
				}
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, false, errors.New("malformed xml: a second root element")
				}
				if n.name != "TEI" {
					return nil, false, fmt.Errorf("%w: the root element is <%s>", ErrNotTEI, t.Name.Local)
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			flush()
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			p := stack[len(stack)-1]
			if k := len(p.children); k > 0 && p.children[k-1] == open {
				// Text after a comment, CDATA next to text.
				if len(pieces) == 0 {
					pieces = append(pieces, open.text...)
				}
				pieces = append(pieces, t...)
			} else {
				flush()
				open = &node{text: string(t)}
				p.children = append(p.children, open)
			}
		}
	}
	if root == nil {
		return nil, false, fmt.Errorf("%w: no root element", ErrNotTEI)
	}
	return root, false, nil
}

func elemName(n xml.Name) string {
	if n.Space == "" || n.Space == nsTEI {
		return n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

func unexpectedEOF(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var se *xml.SyntaxError
	return errors.As(err, &se) && strings.Contains(se.Msg, "unexpected EOF")
}
