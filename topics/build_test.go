package topics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// ref is one reference of a hand-made Graph.
type ref struct {
	n           int // S2 paper ID "P<n>", arXiv ID 2301.<n>, title "Paper <n> ..."
	influential bool
}

func handGraph(id, title, venue, category string, year, cites int, rs ...ref) *record.Graph {
	g := &record.Graph{
		TargetID: id, S2Status: record.S2OK,
		Meta: record.TargetMeta{ArxivID: id, Title: title, Venue: venue, Year: year, CitationCount: &cites,
			PrimaryCategory: category, Published: fmt.Sprintf("%d-03-01", year)},
	}
	for _, r := range rs {
		s2, ax := fmt.Sprintf("P%03d", r.n), fmt.Sprintf("2301.%05d", r.n)
		title := fmt.Sprintf("Paper %d on %s", r.n, category)
		abstract := fmt.Sprintf("The abstract of paper %d.", r.n)
		y := 2023
		g.Edges = append(g.Edges, record.Edge{
			TargetID: id, S2PaperID: &s2, ArxivID: &ax, Title: &title, Abstract: &abstract, Year: &y,
			IsInfluential: r.influential, Link: record.LinkNone,
		})
	}
	return g
}

func infl(ns ...int) []ref {
	var out []ref
	for _, n := range ns {
		out = append(out, ref{n, true})
	}
	return out
}

// handGraphs: two groups of three (backgrounds of 5 and 6, one with
// every pair at IoU exactly 0.5) and one paper alone.
func handGraphs() []*record.Graph {
	noise := []ref{{900, false}, {901, false}}
	return []*record.Graph{
		handGraph("2401.00001", "Abstention for Question Answering", "ACL", "cs.CL", 2024, 10, append(infl(1, 2, 3), noise...)...),
		handGraph("2401.00002", "Attribution for Question Answering", "EMNLP", "cs.CL", 2024, 7, append(infl(1, 2, 4), noise...)...),
		handGraph("2401.00003", "Calibration for Question Answering", "NAACL", "cs.CL", 2024, 3, infl(1, 2, 5)...),
		handGraph("2402.00004", "Epidemic Thresholds on Networks", "Phys. Rev. E", "physics.soc-ph", 2024, 5, infl(11, 12, 13, 14)...),
		handGraph("2402.00005", "Epidemic Cascades on Networks", "PNAS", "physics.soc-ph", 2024, 2, infl(11, 12, 13, 15)...),
		handGraph("2402.00006", "Bursty Epidemic Networks", "Nature Physics", "physics.soc-ph", 2025, 1, infl(11, 12, 13, 16)...),
		handGraph("2403.00007", "A Paper Alone", "arXiv.org", "math.CO", 2025, 0, infl(30, 31)...),
	}
}

func testStore(t *testing.T, graphs []*record.Graph) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	for _, g := range graphs {
		if _, err := record.Graphs.Put(ctx, st, g.TargetID, g, nil); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func testCard(model, version string) record.Card {
	return record.Card{
		ProblemGap: "[Evidence Gap] Gap of the paper.", CoreClaim: "We claim that it works.",
		Method: "[Empirical Mapping] Measure it.", Inspiration: "Earlier work.",
		Opportunity: "Evidence Gap", Paradigm: "Empirical Mapping", Model: model, PromptVersion: version,
	}
}

func putCard(t *testing.T, st *store.Store, item, cardKind string, c record.Card) string {
	t.Helper()
	ctx := context.Background()
	kind := record.CardKind(cardKind, c.Model, c.PromptVersion)
	if _, err := kind.Put(ctx, st, item, &c, map[string]string{"text_level": "full_text", "card_kind": cardKind}); err != nil {
		t.Fatal(err)
	}
	if _, err := record.CardIndex.Put(ctx, st, item, &map[string]string{"paper": item}, nil); err != nil {
		t.Fatal(err)
	}
	return kind.Name()
}

func testOptions() Options {
	opt := DefaultOptions()
	opt.PublishedOnly = true
	return opt
}

// build loads the store's graphs and builds and writes the topics into
// a new directory, which it returns.
func build(t *testing.T, st *store.Store, opt Options, reverse bool) (string, *Result) {
	t.Helper()
	ctx := context.Background()
	graphs, excluded, err := LoadGraphs(ctx, st, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reverse {
		slices.Reverse(graphs)
	}
	res, err := (&Builder{Store: st}).Build(ctx, graphs, excluded, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "topics")
	if err := Write(ctx, out, res, WriteOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return out, res
}

func readTopicsJSONL(t *testing.T, path string) []Topic {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Topic
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var tp Topic
		if err := json.Unmarshal(sc.Bytes(), &tp); err != nil {
			t.Fatal(err)
		}
		out = append(out, tp)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRederive re-derives every claim of the written topics from the
// store: each supporting paper's influential set from its Graph, then the
// support count, every pairwise IoU, the background set and its size, the
// stats, and each background paper's card or abstract.
func TestRederive(t *testing.T) {
	graphs := handGraphs()
	st := testStore(t, graphs)
	srcKind := putCard(t, st, "2301.00001", record.CardSource, testCard("heuristic", "heuristic-v1"))
	putCard(t, st, "2301.00001", record.CardGold, testCard("gpt-x", "summarize-gold-v1"))
	s2Kind := putCard(t, st, "s2:P011", record.CardSource, testCard("gpt-x", "summarize-source-v1"))

	opt := testOptions()
	out, res := build(t, st, opt, false)
	topics := readTopicsJSONL(t, filepath.Join(out, TopicsJSONL))
	if len(topics) != 2 {
		t.Fatalf("%d topics, want 2: %+v", len(topics), res.Groups)
	}
	ctx := context.Background()
	for _, tp := range topics {
		if len(tp.Supporting) != tp.Stats.Support || tp.Stats.Support < opt.MinSupport {
			t.Errorf("%s: %d supporting papers, stats say %d, minimum %d", tp.ID, len(tp.Supporting), tp.Stats.Support, opt.MinSupport)
		}
		var sets [][]string
		var members []string
		for _, s := range tp.Supporting {
			g, _, err := record.Graphs.Get(ctx, st, s.ArxivID)
			if err != nil {
				t.Fatal(err)
			}
			var set []string
			for _, e := range g.Edges {
				if e.IsInfluential {
					set = append(set, "s2:"+*e.S2PaperID)
				}
			}
			slices.Sort(set)
			if !reflect.DeepEqual(set, s.Influential) {
				t.Errorf("%s: %s's influential set %v, the store says %v", tp.ID, s.ArxivID, s.Influential, set)
			}
			if ok, _ := Published(g.Meta.Venue); !ok {
				t.Errorf("%s: %s is not published (%q)", tp.ID, s.ArxivID, g.Meta.Venue)
			}
			sets = append(sets, set)
			members = append(members, s.ArxivID)
		}
		if tp.ID != GroupID(members) {
			t.Errorf("topic ID %s, members give %s", tp.ID, GroupID(members))
		}
		// Every pair, recomputed.
		k := 0
		for i := range sets {
			for j := i + 1; j < len(sets); j++ {
				inter, union := 0, map[string]bool{}
				for _, x := range sets[i] {
					union[x] = true
					if slices.Contains(sets[j], x) {
						inter++
					}
				}
				for _, x := range sets[j] {
					union[x] = true
				}
				p := tp.Pairs[k]
				k++
				if p.A != members[i] || p.B != members[j] || p.Intersection != inter || p.Union != len(union) || p.IoU != float64(inter)/float64(len(union)) {
					t.Errorf("%s: pair %+v, recomputed %s %s %d/%d", tp.ID, p, members[i], members[j], inter, len(union))
				}
				if p.IoU < opt.IoU {
					t.Errorf("%s: pair %s %s below the threshold", tp.ID, p.A, p.B)
				}
			}
		}
		if k != len(tp.Pairs) {
			t.Errorf("%s: %d pairs, want %d", tp.ID, len(tp.Pairs), k)
		}
		// The background is the union; its size within the bounds.
		var all []string
		for _, s := range sets {
			all = append(all, s...)
		}
		slices.Sort(all)
		all = slices.Compact(all)
		var bg []string
		cards, abstracts, core := 0, 0, 0
		for _, b := range tp.Background {
			bg = append(bg, b.ID)
			n := 0
			for _, s := range sets {
				if slices.Contains(s, b.ID) {
					n++
				}
			}
			if b.CitedBy != n {
				t.Errorf("%s: %s cited by %d, recomputed %d", tp.ID, b.ID, b.CitedBy, n)
			}
			if n == len(sets) {
				core++
			}
			switch b.TextLevel {
			case TextCard:
				cards++
				var c record.Card
				if _, err := st.GetJSON(ctx, b.CardPaper, b.CardKind, &c); err != nil || !reflect.DeepEqual(&c, b.Card) {
					t.Errorf("%s: %s's card differs from the store's %s %s: %v", tp.ID, b.ID, b.CardPaper, b.CardKind, err)
				}
			case TextAbstract:
				abstracts++
				num := strings.TrimPrefix(b.ID, "s2:P")
				if want := fmt.Sprintf("The abstract of paper %d.", atoi(t, num)); b.Abstract != want {
					t.Errorf("%s: %s's abstract %q, want %q", tp.ID, b.ID, b.Abstract, want)
				}
			default:
				t.Errorf("%s: %s has text level %q", tp.ID, b.ID, b.TextLevel)
			}
		}
		if !reflect.DeepEqual(bg, all) || tp.Stats.BackgroundSize != len(all) || len(all) < opt.MinBackground || len(all) > opt.MaxBackground {
			t.Errorf("%s: background %v (size %d), union %v, bounds %d..%d", tp.ID, bg, tp.Stats.BackgroundSize, all, opt.MinBackground, opt.MaxBackground)
		}
		if tp.Stats.Core != core || tp.Stats.Cards != cards || tp.Stats.Abstracts != abstracts {
			t.Errorf("%s: stats %+v; recomputed core %d, cards %d, abstracts %d", tp.ID, tp.Stats, core, cards, abstracts)
		}
	}
	// Which card: the source card before the gold card even though the
	// gold card is a model's; a paper without an arXiv ID by its S2 item.
	want := map[string]string{"s2:P001": srcKind, "s2:P011": s2Kind}
	for _, tp := range topics {
		for _, b := range tp.Background {
			if k, ok := want[b.ID]; ok && b.CardKind != k {
				t.Errorf("%s: card kind %q, want %q", b.ID, b.CardKind, k)
			}
		}
	}

	// The selection: the best-supported group first (both have 3; the
	// smaller ID), then the other at distance 1 from it.
	if topics[0].Selection.Nearest != "" || topics[1].Selection.Nearest != topics[0].ID || topics[1].Selection.Distance != 1 {
		t.Errorf("selection evidence %+v, %+v", topics[0].Selection, topics[1].Selection)
	}
	// The paper alone is a preprint: not published.
	for _, s := range res.Seeds {
		if s.ID == "2403.00007" && s.Status != ReasonNotPublished {
			t.Errorf("2403.00007: status %s", s.Status)
		}
	}

	// The Parquet rows are the JSON lines.
	rows, err := ReadParquet(filepath.Join(out, TopicsParquet))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, rows), mustJSON(t, topics); a != b {
		t.Errorf("topics.parquet and topics.jsonl differ:\n%s\n%s", a, b)
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeterministic: the same store and options write the same bytes,
// whatever the order of the graphs, and a rewrite replaces the directory
// leaving nothing behind.
func TestDeterministic(t *testing.T) {
	st := testStore(t, handGraphs())
	putCard(t, st, "2301.00001", record.CardSource, testCard("heuristic", "heuristic-v1"))
	opt := testOptions()
	a, _ := build(t, st, opt, false)
	b, res := build(t, st, opt, true)
	files := []string{TopicsParquet, TopicsJSONL, GroupsJSONL, SeedsJSONL, ReportFile}
	for _, f := range files {
		x, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds", f)
		}
	}
	// Rewrite over a: same bytes, no temporary directory left.
	before, _ := os.ReadFile(filepath.Join(a, TopicsParquet))
	if err := Write(context.Background(), a, res, WriteOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(a, TopicsParquet))
	if !bytes.Equal(before, after) {
		t.Errorf("rewrite changed topics.parquet")
	}
	entries, _ := os.ReadDir(filepath.Dir(a))
	var names []string
	for _, e := range entries {
		if e.Name() != "."+filepath.Base(a)+".lock" { // the publishing lock stays beside it
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 {
		t.Errorf("beside the output: %v", names)
	}
}

func TestWriteRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(context.Background(), dir, &Result{Options: DefaultOptions()}, WriteOptions{Version: "test"})
	if err == nil || !strings.Contains(err.Error(), "not a topics directory") {
		t.Errorf("Write over a foreign directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Errorf("the foreign directory was touched")
	}
}

// TestLoadGraphs: listed IDs are normalized and de-duplicated, a target
// without a stored Graph goes through the citegraph Runner (here without
// Semantic Scholar, so from its stored Document alone), and only once:
// the second load finds the Graph the first stored.
func TestLoadGraphs(t *testing.T) {
	st := testStore(t, handGraphs())
	ctx := context.Background()
	title := "A Target Not Yet Linked"
	doc := record.Document{ID: "2404.00008", Source: record.SourceArxiv, Title: &title}
	if _, err := record.Documents.Put(ctx, st, "2404.00008", &doc, nil); err != nil {
		t.Fatal(err)
	}
	ids := []string{"2401.00001v2", "arXiv:2401.00001", "not-an-id", "2404.00008", "2405.00009"}

	graphs, excluded, err := LoadGraphs(ctx, st, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := graphIDs(graphs); !reflect.DeepEqual(got, []string{"2401.00001"}) {
		t.Errorf("without a runner: graphs %v", got)
	}
	if got := statuses(excluded); !reflect.DeepEqual(got, map[string]string{"not-an-id": ReasonInvalidID, "2404.00008": ReasonNoGraph, "2405.00009": ReasonNoGraph}) {
		t.Errorf("without a runner: excluded %v", got)
	}

	runner := &citegraph.Runner{Store: st}
	build := func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error) {
		built, failed := map[string]*record.Graph{}, map[string]error{}
		for _, r := range runner.All(ctx, keys, 2, nil) {
			if r.Err != nil {
				failed[r.Key] = r.Err
			} else {
				built[r.Key] = r.Graph
			}
		}
		return built, failed
	}
	graphs, excluded, err = LoadGraphs(ctx, st, ids, build)
	if err != nil {
		t.Fatal(err)
	}
	if got := graphIDs(graphs); !reflect.DeepEqual(got, []string{"2401.00001", "2404.00008"}) {
		t.Errorf("with a runner: graphs %v", got)
	}
	if got := statuses(excluded); !reflect.DeepEqual(got, map[string]string{"not-an-id": ReasonInvalidID, "2405.00009": ReasonCitegraph}) {
		t.Errorf("with a runner: excluded %v", got)
	}
	if _, _, err := record.Graphs.Get(ctx, st, "2404.00008"); err != nil {
		t.Errorf("the runner stored no Graph: %v", err)
	}
	// The new Graph has no influential edges (no Semantic Scholar): the
	// seed is reported, not grouped.
	res, err := (&Builder{}).Build(ctx, graphs, excluded, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res.Seeds); got["2404.00008"] != ReasonNoInfluential || got["2401.00001"] != ReasonKept {
		t.Errorf("seed statuses %v", got)
	}
	// Every target in the store, now eight.
	graphs, _, err = LoadGraphs(ctx, st, nil, nil)
	if err != nil || len(graphs) != 8 {
		t.Errorf("all graphs: %d, %v", len(graphs), err)
	}
}

func graphIDs(gs []*record.Graph) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.TargetID)
	}
	return out
}

func statuses(ss []SeedStatus) map[string]string {
	out := map[string]string{}
	for _, s := range ss {
		out[s.ID] = s.Status
	}
	return out
}

func TestOptionsCheck(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		ok   bool
	}{
		{"defaults", func(*Options) {}, true},
		{"iou 1", func(o *Options) { o.IoU = 1 }, true},
		{"iou 0", func(o *Options) { o.IoU = 0 }, false},
		{"iou above 1", func(o *Options) { o.IoU = 1.5 }, false},
		{"min support 0", func(o *Options) { o.MinSupport = 0 }, false},
		{"bounds crossed", func(o *Options) { o.MinBackground, o.MaxBackground = 8, 5 }, false},
		{"budget 0", func(o *Options) { o.Budget = 0 }, false},
		{"top percent 101", func(o *Options) { o.TopPercent = 101 }, false},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		tt.edit(&o)
		if err := o.Check(); (err == nil) != tt.ok {
			t.Errorf("%s: Check() = %v", tt.name, err)
		}
	}
}

// TestParquetArrow reads topics.parquet with Apache Arrow's reader (an
// implementation independent of parquet-go, following pyarrow's schema
// conversion): lists are lists, the card a nullable struct, and the rows
// carry the same values as topics.jsonl.
func TestParquetArrow(t *testing.T) {
	st := testStore(t, handGraphs())
	putCard(t, st, "2301.00001", record.CardSource, testCard("heuristic", "heuristic-v1"))
	out, res := build(t, st, testOptions(), false)
	tbl, err := readback.Arrow(filepath.Join(out, TopicsParquet))
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != len(res.Topics) {
		t.Fatalf("%d rows, want %d", len(tbl.Rows), len(res.Topics))
	}
	schema := tbl.Schema
	for _, name := range []string{"background", "supporting", "pairs"} {
		f, ok := schema.FieldsByName(name)
		if !ok || f[0].Type.ID() != arrow.LIST {
			t.Fatalf("%s: %v, want a list", name, f)
		}
	}
	sup, _ := schema.FieldsByName("supporting")
	elem := sup[0].Type.(*arrow.ListType).Elem().(*arrow.StructType)
	if f, ok := elem.FieldByName("influential"); !ok || f.Type.ID() != arrow.LIST {
		t.Errorf("supporting.influential: %v, want a list", f)
	}
	bg, _ := schema.FieldsByName("background")
	belem := bg[0].Type.(*arrow.ListType).Elem().(*arrow.StructType)
	if f, ok := belem.FieldByName("card"); !ok || f.Type.ID() != arrow.STRUCT || !f.Nullable {
		t.Errorf("background.card: %v, want a nullable struct", f)
	}
	rows := tbl.Rows
	for i, row := range rows {
		tp := res.Topics[i]
		if row["id"] != tp.ID || row["tag"] != tp.Tag {
			t.Errorf("row %d: id %v tag %v, want %s %s", i, row["id"], row["tag"], tp.ID, tp.Tag)
		}
		sups := row["supporting"].([]any)
		first := sups[0].(map[string]any)["influential"].([]any)
		if len(sups) != len(tp.Supporting) || len(first) != len(tp.Supporting[0].Influential) {
			t.Errorf("row %d: supporting %v", i, sups)
		}
	}
}

// TestReadersReadTopics reads topics.parquet, written with the default
// codec (Snappy) and with ZSTD, with Arrow's Go reader, hyparquet and
// DuckDB: each must read the topics written.
func TestReadersReadTopics(t *testing.T) {
	st := testStore(t, handGraphs())
	putCard(t, st, "2301.00001", record.CardSource, testCard("heuristic", "heuristic-v1"))
	_, res := build(t, st, testOptions(), false)
	if len(res.Topics) == 0 {
		t.Fatal("no topics to read")
	}
	var files []readback.File
	for _, c := range []parquetcodec.Codec{"", parquetcodec.Zstd} {
		out := filepath.Join(t.TempDir(), "topics")
		if err := Write(context.Background(), out, res, WriteOptions{Version: "test", Compression: c}); err != nil {
			t.Fatal(err)
		}
		files = append(files, readback.File{Path: filepath.Join(out, TopicsParquet), Rows: res.Topics, Codec: strings.ToUpper(c.String())})
	}
	readback.Check(t, files...)
}
