package tei

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/hostile"
)

// treeSize counts the nodes (elements and text) and kept attributes of the
// tree readTree builds of data.
func treeSize(t *testing.T, data []byte) (nodes, attrs int) {
	t.Helper()
	root, _, err := readTree(data)
	if err != nil {
		t.Fatal(err)
	}
	var rec func(*node)
	rec = func(n *node) {
		nodes++
		attrs += len(n.attrs)
		for _, c := range n.children {
			rec(c)
		}
	}
	rec(root)
	return nodes, attrs
}

// TestTreeCostBound checks the estimate the budget rests on: every node
// needs a '<' (two per '<' at most: an element and the text after it) and
// every attribute an '='.
func TestTreeCostBound(t *testing.T) {
	inputs := map[string][]byte{}
	for _, name := range []string{"edge-structure.tei.xml", "edge-ieee.tei.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "tei", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	for _, kind := range hostile.TEIs {
		b, err := hostile.Bytes(kind, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		inputs[kind] = b
	}
	inputs["attributes"] = []byte(`<TEI xmlns="http://www.tei-c.org/ns/1.0">` + strings.Repeat(`<p n="1" type="x" id="y">a</p>`, 1000) + `</TEI>`)
	for name, b := range inputs {
		nodes, attrs := treeSize(t, b)
		maxNodes := nodesPerTag*bytes.Count(b, []byte{'<'}) + nodesPerTag + 1
		if eq := bytes.Count(b, []byte{'='}); nodes > maxNodes || attrs > eq {
			t.Errorf("%s: %d nodes and %d attributes, past the estimate's %d and %d", name, nodes, attrs, maxNodes, eq)
		}
	}
}

// TestTextAcrossComments checks that text cut by comments is one node
// whose making costs memory in proportion to the text: a TEI of
// "a<!---->" repeated made each piece copy all the text before it.
func TestTextAcrossComments(t *testing.T) {
	const n = 20_000
	data, err := hostile.Bytes(hostile.TEIComments, n*len("a<!---->")+1000)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Parse(data, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 100*uint64(len(data)) {
		t.Errorf("parsing %d bytes allocated %d bytes: the text is copied again with each piece", len(data), got)
	}
	if len(d.Sections) != 1 || len(d.Sections[0].Paragraphs) != 1 || strings.Count(d.Sections[0].Paragraphs[0], "a") < n-200 {
		t.Errorf("sections %+v: want one paragraph of the letters", d.Sections)
	}
}

// TestParseBudget checks the budget's own accounting: a TEI whose tree
// would pass the bound is read as far as it stays within it, before a
// tag, and says so; within the bound it is read whole.
func TestParseBudget(t *testing.T) {
	data, err := hostile.Bytes(hostile.TEITiny, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Parse(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Conversion.Truncated {
		t.Fatalf("a 200 KB TEI was cut: %v", whole.Conversion.Notes)
	}
	limit := treeCost(data) / 3
	d, err := Parse(data, Options{MaxTree: limit})
	if err != nil {
		t.Fatal(err)
	}
	kept, cut := cutToBudget(data, limit)
	if !cut || treeCost(kept) > limit || treeCost(data[:len(kept)+80]) <= limit || data[len(kept)] != '<' {
		t.Errorf("cut at %d of %d bytes (cost %d, limit %d): ...%q", len(kept), len(data), treeCost(kept), limit, kept[len(kept)-20:])
	}
	notes := strings.Join(d.Conversion.Notes, "; ")
	if !d.Conversion.Truncated || !strings.Contains(notes, "parse budget") || strings.Contains(notes, "ends inside an element") {
		t.Errorf("truncated %v, notes %q: want the budget's note alone", d.Conversion.Truncated, notes)
	}
	got, all := strings.Count(d.FullText, "a"), strings.Count(whole.FullText, "a")
	if got == 0 || got >= all/2 {
		t.Errorf("budgeted TEI kept %d of %d letters; want about a third", got, all)
	}
}
