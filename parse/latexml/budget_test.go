package latexml

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/groundwork/curate/internal/hostile"
)

func prepared(b []byte) []byte {
	out, _ := prepare(b)
	return out
}

// treeSize counts the nodes and attributes of the tree the parser builds
// of b, as Parse builds it.
func treeSize(t testing.TB, b []byte) (nodes, attrs int) {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(prepared(b)))
	if err != nil {
		return 0, 0 // refused (nested too deep): no tree
	}
	restoreFormatting(root)
	for n := range root.Descendants() {
		nodes++
		attrs += len(n.Attr)
	}
	return nodes + 1, attrs // and the document node
}

// checkBound checks that the tree of b stays within the parts of the
// budget's estimate: nodes by the '<' count, attributes by the separators.
func checkBound(t testing.TB, name string, b []byte) {
	t.Helper()
	nodes, attrs := treeSize(t, b)
	maxNodes := nodesPerTag*bytes.Count(b, []byte{'<'}) + baseNodes
	maxAttrs := 0
	for _, c := range separators {
		maxAttrs += bytes.Count(b, []byte{c})
	}
	if nodes > maxNodes || attrs > maxAttrs {
		t.Errorf("%s (%d bytes): %d nodes and %d attributes, past the estimate's %d and %d", name, len(b), nodes, attrs, maxNodes, maxAttrs)
	}
}

// TestTreeCostBound checks the estimate the budget rests on against the
// trees of hostile pages, of the markup that makes the HTML parser imply
// elements, and of misnested formatting tags (which, cloned, made a 200 KB
// page a tree of 2.4 GB).
func TestTreeCostBound(t *testing.T) {
	for _, kind := range hostile.Pages {
		page, err := hostile.Bytes(kind, 200_000)
		if err != nil {
			t.Fatal(err)
		}
		checkBound(t, kind, page)
	}
	for _, s := range []string{
		"", "a", "<", "<td>a", strings.Repeat("<col><td>a", 500), strings.Repeat("<td>a</tbody>", 500),
		strings.Repeat("<table><td>a</table>", 500), strings.Repeat("</p></br>", 500), strings.Repeat("<tr>", 500),
		strings.Repeat("<select><option>a", 300), "<svg>" + strings.Repeat("<b>a<p>", 300),
		strings.Repeat("<a href=x>a<p>", 500), strings.Repeat(`<b x="1"y='2'z/w>`, 300) + strings.Repeat("<p>a", 500),
		"<html a b><body c d>" + strings.Repeat("<html e f g><body h i>", 200),
		strings.Repeat("<frameset><frame>", 300), strings.Repeat("<template><td>a</template>", 300),
	} {
		checkBound(t, s[:min(len(s), 40)], []byte(s))
	}
}

// FuzzTreeCost checks the estimate on any input: the tree never holds
// more nodes or attributes than the counts allow.
func FuzzTreeCost(f *testing.F) {
	for _, s := range []string{"<p>a<b>c</p>d", "<table><col><td>x</table>", "<a x=y z>q</a><p>", "<svg><b><p>t"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkBound(t, "input", b)
	})
}

// TestFormattingRenamed checks that the renaming is invisible on the pages
// LaTeXML writes (every element closed): the tree renders as it does
// without it, atoms included.
func TestFormattingRenamed(t *testing.T) {
	page := `<p>See <a href="#bib.bib1" class="ltx_ref">[1]</a>, <em>emphasis <b>bold</b></em>, <STRONG>loud</STRONG>` +
		`<code>x&lt;y</code>, <i>i</i><s>s</s><u>u</u><tt>tt</tt><big>b</big><small>s</small><strike>s</strike><nobr>n</nobr>` +
		`<font color="red">f</font>, <abbr>abbr</abbr> <span>a<b</span><svg><a href="#x"><text>t</text></a></svg></p>`
	direct, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := html.Parse(bytes.NewReader(prepared([]byte(page))))
	if err != nil {
		t.Fatal(err)
	}
	restoreFormatting(renamed)
	// The HTML parser sorts a formatting element's attributes (to compare
	// it with others); their order means nothing.
	for _, root := range []*html.Node{direct, renamed} {
		for n := range root.Descendants() {
			slices.SortFunc(n.Attr, func(a, b html.Attribute) int { return strings.Compare(a.Key, b.Key) })
		}
	}
	var want, got bytes.Buffer
	html.Render(&want, direct)
	html.Render(&got, renamed)
	if got.String() != want.String() {
		t.Errorf("renamed tree renders\n%s\nwant\n%s", got.String(), want.String())
	}
	var atomsWant, atomsGot []string
	for n := range direct.Descendants() {
		atomsWant = append(atomsWant, n.DataAtom.String()+"/"+n.Namespace)
	}
	for n := range renamed.Descendants() {
		atomsGot = append(atomsGot, n.DataAtom.String()+"/"+n.Namespace)
	}
	if strings.Join(atomsGot, " ") != strings.Join(atomsWant, " ") {
		t.Errorf("atoms %v, want %v", atomsGot, atomsWant)
	}
	if b := []byte("<p>no formatting <span>here</span></p>"); &prepared(b)[0] != &b[0] {
		t.Error("a page without formatting tags was copied")
	}
}

// TestParseBudget checks the budget's own accounting: a page whose tree
// would pass the bound is parsed as far as it stays within it, ends before
// a tag, and says so; the same page within the bound is parsed whole.
func TestParseBudget(t *testing.T) {
	page, err := hostile.Bytes(hostile.TinyTags, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Parse(page, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Conversion.Truncated || strings.Contains(strings.Join(whole.Conversion.Notes, ";"), "budget") {
		t.Fatalf("a 100 KB page was cut by the default budget: %v", whole.Conversion.Notes)
	}
	limit := treeCost(page) / 4
	d, err := Parse(page, Options{MaxTree: limit})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Conversion.Truncated {
		t.Error("a page past the budget is not marked truncated")
	}
	var note string
	for _, n := range d.Conversion.Notes {
		if strings.Contains(n, "parse budget") {
			note = n
		}
	}
	if note == "" {
		t.Fatalf("no budget note in %q", d.Conversion.Notes)
	}
	kept, cut := cutToBudget(page, limit)
	if !cut || treeCost(kept) > limit || treeCost(page[:len(kept)+2*len("a<br>")]) <= limit {
		t.Errorf("cut at %d of %d bytes: cost %d against the limit %d", len(kept), len(page), treeCost(kept), limit)
	}
	if kept[len(kept)-1] == '<' || page[len(kept)] != '<' {
		t.Errorf("the cut is not before a tag: ...%q|%q", kept[len(kept)-10:], page[len(kept):len(kept)+10])
	}
	if !strings.Contains(note, "parse budget") || !strings.Contains(note, " of ") {
		t.Errorf("note %q", note)
	}
	got, all := strings.Count(d.FullText, "a"), strings.Count(whole.FullText, "a")
	if got == 0 || got >= all/2 {
		t.Errorf("budgeted page kept %d of %d letters; want a part, about a quarter", got, all)
	}
	free, err := Parse(page, Options{MaxTree: -1})
	if err != nil {
		t.Fatal(err)
	}
	if free.Conversion.Truncated || free.FullText != whole.FullText {
		t.Errorf("no bound: truncated %v, %d of %d bytes of text", free.Conversion.Truncated, len(free.FullText), len(whole.FullText))
	}
}
