package topics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Defaults of Options (the IDEAgent recipe's values).
const (
	DefaultIoU           = 0.5
	DefaultMinSupport    = 3
	DefaultMinBackground = 5
	DefaultMaxBackground = 8
	DefaultBudget        = 6
)

// Options configure a build.
type Options struct {
	// PublishedOnly keeps seeds whose Semantic Scholar venue is a
	// publication venue (see Published).
	PublishedOnly bool `json:"published_only"`
	// TopPercent keeps the top k% of seeds by citation count within their
	// year (see Filter); 0 keeps all.
	TopPercent float64 `json:"top_percent"`
	// IoU is the similarity threshold: two seeds are similar when their
	// influential sets have IoU ≥ IoU.
	IoU           float64 `json:"iou"`
	MinSupport    int     `json:"min_support"`
	MinBackground int     `json:"min_background"`
	MaxBackground int     `json:"max_background"`
	Budget        int     `json:"budget"`
	// Seed chooses the first topic of the selection (see Select).
	Seed uint64 `json:"seed"`
	// TestFrom is the dataset's cutoff (YYYY-MM-DD) and Splits the splits
	// whose papers the topics may hold, as supporting or background papers
	// (default train only: a test target is for evaluation, and a topic
	// holding one leaks it into training).
	TestFrom string   `json:"test_from"`
	Splits   []string `json:"splits"`
}

// DefaultOptions returns the recipe's settings.
func DefaultOptions() Options {
	return Options{IoU: DefaultIoU, MinSupport: DefaultMinSupport, MinBackground: DefaultMinBackground,
		MaxBackground: DefaultMaxBackground, Budget: DefaultBudget, TestFrom: DefaultTestFrom, Splits: []string{record.SplitTrain}}
}

// Check reports the first setting out of range.
func (o Options) Check() error {
	switch {
	case !(o.IoU > 0 && o.IoU <= 1):
		return fmt.Errorf("iou %g: want 0 < iou ≤ 1", o.IoU)
	case o.MinSupport < 1:
		return fmt.Errorf("min support %d: want at least 1", o.MinSupport)
	case o.MinBackground < 1 || o.MaxBackground < o.MinBackground:
		return fmt.Errorf("background size %d..%d: want 1 ≤ min ≤ max", o.MinBackground, o.MaxBackground)
	case o.Budget < 1:
		return fmt.Errorf("budget %d: want at least 1", o.Budget)
	case !(o.TopPercent >= 0 && o.TopPercent <= 100):
		return fmt.Errorf("top percent %g: want 0 (all) to 100", o.TopPercent)
	}
	return o.checkSplits()
}

// Topic is one selected topic: a row of topics.parquet and a line of
// topics.jsonl. Everything it claims is derivable from what it carries:
// Supporting holds each paper's influential set, from which Pairs,
// Background and Stats follow.
type Topic struct {
	ID   string `json:"id" parquet:"id"`
	Rank int    `json:"rank" parquet:"rank"` // 1-based place in the selection
	Tag  string `json:"tag" parquet:"tag"`
	// TagModel and TagPromptVersion say what wrote the tag; TagFallback
	// why a heuristic tag stands in for the model's.
	TagModel         string `json:"tag_model" parquet:"tag_model"`
	TagPromptVersion string `json:"tag_prompt_version" parquet:"tag_prompt_version"`
	TagFallback      string `json:"tag_fallback,omitempty" parquet:"tag_fallback,optional"`
	// Category is the most frequent primary category of the supporting
	// papers (ties: the alphabetically first).
	Category   string       `json:"category" parquet:"category"`
	Background []Background `json:"background" parquet:"background,list"`
	Supporting []Supporting `json:"supporting" parquet:"supporting,list"`
	// Pairs are the overlaps of every two supporting papers' influential
	// sets: the IoU evidence.
	Pairs []Pair     `json:"pairs" parquet:"pairs,list"`
	Stats GroupStats `json:"stats" parquet:"stats"`
	// Selection says where the topic stood when it was picked.
	Selection Selection `json:"selection" parquet:"selection"`
}

// Background is one background paper of a topic.
type Background struct {
	ID        string `json:"id" parquet:"id"` // identity key ("s2:…", "arxiv:…", "doi:…")
	S2PaperID string `json:"s2_paper_id,omitempty" parquet:"s2_paper_id,optional"`
	ArxivID   string `json:"arxiv_id,omitempty" parquet:"arxiv_id,optional"`
	DOI       string `json:"doi,omitempty" parquet:"doi,optional"`
	Title     string `json:"title" parquet:"title"`
	Year      int    `json:"year,omitempty" parquet:"year,optional"`
	// CitedBy counts the supporting papers whose influential set holds it.
	CitedBy int `json:"cited_by" parquet:"cited_by"`
	// TextLevel is TextCard when Card is its stored idea card, TextAbstract
	// when only Abstract is known, "" when neither is.
	TextLevel string `json:"text_level" parquet:"text_level"`
	// CardPaper and CardKind locate the card in the store (item, kind).
	CardPaper string       `json:"card_paper,omitempty" parquet:"card_paper,optional"`
	CardKind  string       `json:"card_kind,omitempty" parquet:"card_kind,optional"`
	Card      *record.Card `json:"card,omitempty" parquet:"card,optional"`
	Abstract  string       `json:"abstract,omitempty" parquet:"abstract,optional"`
	Split     string       `json:"split" parquet:"split"` // the paper's dataset split (see splitOfRef)
}

// Text levels of a Background paper.
const (
	TextCard     = "card"
	TextAbstract = "abstract"
)

// Supporting is one supporting paper of a topic, with its influential set:
// the input every figure of the topic is computed from.
type Supporting struct {
	ArxivID         string   `json:"arxiv_id" parquet:"arxiv_id"`
	Title           string   `json:"title" parquet:"title"`
	Venue           string   `json:"venue,omitempty" parquet:"venue,optional"`
	Year            int      `json:"year,omitempty" parquet:"year,optional"`
	Published       string   `json:"published,omitempty" parquet:"published,optional"`
	PrimaryCategory string   `json:"primary_category,omitempty" parquet:"primary_category,optional"`
	CitationCount   *int     `json:"citation_count,omitempty" parquet:"citation_count,optional"`
	Influential     []string `json:"influential" parquet:"influential,list"`
	Split           string   `json:"split" parquet:"split"` // the paper's dataset split
}

// Pair is the overlap of two supporting papers' influential sets.
type Pair struct {
	A            string  `json:"a" parquet:"a"`
	B            string  `json:"b" parquet:"b"`
	Intersection int     `json:"intersection" parquet:"intersection"`
	Union        int     `json:"union" parquet:"union"`
	IoU          float64 `json:"iou" parquet:"iou"`
}

// GroupStats summarize a topic's group.
type GroupStats struct {
	Support        int     `json:"support" parquet:"support"`
	BackgroundSize int     `json:"background_size" parquet:"background_size"`
	MinIoU         float64 `json:"min_iou" parquet:"min_iou"`
	MeanIoU        float64 `json:"mean_iou" parquet:"mean_iou"`
	MaxIoU         float64 `json:"max_iou" parquet:"max_iou"`
	// Core counts the background papers every supporting paper cites
	// influentially.
	Core int `json:"core" parquet:"core"`
	// Cards and Abstracts count the background papers given by their idea
	// card and by their abstract alone.
	Cards     int `json:"cards" parquet:"cards"`
	Abstracts int `json:"abstracts" parquet:"abstracts"`
}

// Selection is a topic's place in the diverse selection.
type Selection struct {
	// Nearest is the earlier-selected topic closest to this one ("" for
	// the first) and Intersection and Union their backgrounds' overlap.
	Nearest      string  `json:"nearest,omitempty" parquet:"nearest,optional"`
	Intersection int     `json:"intersection" parquet:"intersection"`
	Union        int     `json:"union" parquet:"union"`
	Distance     float64 `json:"distance" parquet:"distance"` // 1 − Jaccard; 1 for the first
}

// GroupSummary is one group in groups.jsonl: every group of two papers
// or more, and every group that was kept, with its verdict.
type GroupSummary struct {
	ID             string   `json:"id"`
	Members        []string `json:"members"`
	Support        int      `json:"support"`
	BackgroundSize int      `json:"background_size"`
	Category       string   `json:"category"`
	Verdict        string   `json:"verdict"`
	Selected       int      `json:"selected,omitempty"` // the topic's rank when selected
}

// Result is a build's outcome.
type Result struct {
	Options Options
	Seeds   []SeedStatus   // every seed considered, sorted by ID
	Groups  []GroupSummary // see GroupSummary, sorted by members
	// Singletons counts seeds similar to no other seed (groups of one),
	// which Groups lists only when MinSupport is 1.
	Singletons int
	// Candidates counts the kept groups the selection chose from.
	Candidates int
	Topics     []Topic // the selection, in order
	// Pending lists the selected topics whose LLM tag waits in a
	// provider's batch (batch mode); their Tag is empty until a later
	// build collects it.
	Pending []string
}

// Builder builds topics from citation graphs. Its zero value builds with
// heuristic tags and abstracts only.
type Builder struct {
	// Store holds the idea cards of background papers (summarize's
	// cards); nil gives abstracts only.
	Store *store.Store
	// LLM writes the tags; nil (or Model llm.HeuristicModel) selects the
	// heuristic tag.
	LLM   llm.Completer
	Model string
	// Meter counts the heuristic tags (an LLM client meters its own
	// calls); nil counts nothing.
	Meter *llm.Meter
	Log   *slog.Logger
}

func (b *Builder) log() *slog.Logger {
	if b.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Log
}

// Build turns the seeds' citation graphs into topics: seeds filtered,
// grouped, groups checked against the support and background bounds, a
// diverse selection of opt.Budget of them tagged and filled with their
// background papers' cards. excluded are seeds that never got a graph
// (from LoadGraphs); they are reported with the rest. The same graphs,
// store contents and options give the same Result.
func (b *Builder) Build(ctx context.Context, graphs []*record.Graph, excluded []SeedStatus, opt Options) (*Result, error) {
	if err := opt.Check(); err != nil {
		return nil, fmt.Errorf("build topics: %w", err)
	}
	graphs = slices.Clone(graphs)
	slices.SortFunc(graphs, func(a, c *record.Graph) int { return cmp.Compare(a.TargetID, c.TargetID) })
	graphs = slices.CompactFunc(graphs, func(a, c *record.Graph) bool { return a.TargetID == c.TargetID })
	ids := NewIdentities(graphs)
	refs := map[string]*Ref{}
	seeds := make([]Seed, 0, len(graphs))
	for _, g := range graphs {
		seeds = append(seeds, NewSeed(g, ids, refs))
	}
	seeds, status := applySplits(seeds, refs, opt)
	kept, more := Filter(seeds, opt)
	status = append(append(status, more...), excluded...)
	slices.SortStableFunc(status, func(a, c SeedStatus) int { return cmp.Compare(a.ID, c.ID) })

	groups, err := Groups(ctx, kept, opt)
	if err != nil {
		return nil, fmt.Errorf("build topics: %w", err)
	}
	byID := map[string]Seed{}
	for _, s := range kept {
		byID[s.ID] = s
	}
	res := &Result{Options: opt, Seeds: status}
	var cands []Candidate
	var candGroups []Group
	for _, g := range groups {
		if len(g.Members) == 1 {
			res.Singletons++
			if opt.MinSupport > 1 {
				continue
			}
		}
		res.Groups = append(res.Groups, GroupSummary{
			ID: g.ID, Members: g.Members, Support: len(g.Members), BackgroundSize: len(g.Background),
			Category: category(g.Members, byID), Verdict: g.Verdict,
		})
		if g.Verdict == VerdictKept {
			cands = append(cands, Candidate{ID: g.ID, Background: g.Background, Support: len(g.Members), Category: category(g.Members, byID)})
			candGroups = append(candGroups, g)
		}
	}
	res.Candidates = len(cands)
	picks := Select(cands, opt.Budget, opt.Seed)
	var cards map[string][]record.StoredCard
	if len(picks) > 0 && b.Store != nil {
		if cards, err = cardsByPaper(ctx, b.Store); err != nil {
			return nil, fmt.Errorf("build topics: %w", err)
		}
	}
	for rank, p := range picks {
		g := candGroups[p.Index]
		t, err := b.topic(ctx, g, byID, refs, cards)
		if errors.Is(err, llm.ErrPending) {
			res.Pending = append(res.Pending, g.ID)
			err = nil
		}
		if err != nil {
			return nil, fmt.Errorf("build topics: %s: %w", g.ID, err)
		}
		t.Rank = rank + 1
		t.Selection = Selection{Nearest: p.Nearest, Intersection: p.Overlap.Intersection, Union: p.Overlap.Union, Distance: p.Distance()}
		res.Topics = append(res.Topics, t)
		for i := range res.Groups {
			if res.Groups[i].ID == g.ID {
				res.Groups[i].Selected = t.Rank
			}
		}
	}
	return res, nil
}

// category is the most frequent primary category of the members (ties:
// the alphabetically first); "" when none has one.
func category(members []string, seeds map[string]Seed) string {
	count := map[string]int{}
	for _, m := range members {
		if c := seeds[m].PrimaryCategory; c != "" {
			count[c]++
		}
	}
	best := ""
	for _, c := range sortedKeys(count) {
		if count[c] > count[best] {
			best = c
		}
	}
	return best
}

// topic fills a selected group's Topic: its papers, evidence, stats and tag.
func (b *Builder) topic(ctx context.Context, g Group, seeds map[string]Seed, refs map[string]*Ref, cards map[string][]record.StoredCard) (Topic, error) {
	t := Topic{ID: g.ID, Category: category(g.Members, seeds)}
	cited := map[string]int{}
	for _, id := range g.Members {
		s := seeds[id]
		t.Supporting = append(t.Supporting, Supporting{
			ArxivID: s.ID, Title: s.Title, Venue: s.Venue, Year: s.Year, Published: s.Published,
			PrimaryCategory: s.PrimaryCategory, CitationCount: s.CitationCount, Influential: s.Influential, Split: s.Split,
		})
		for _, k := range s.Influential {
			cited[k]++
		}
	}
	t.Stats = GroupStats{Support: len(g.Members), BackgroundSize: len(g.Background)}
	sum := 0.0
	for i, a := range t.Supporting {
		for _, c := range t.Supporting[i+1:] {
			o := Intersect(a.Influential, c.Influential)
			p := Pair{A: a.ArxivID, B: c.ArxivID, Intersection: o.Intersection, Union: o.Union, IoU: o.IoU()}
			if len(t.Pairs) == 0 || p.IoU < t.Stats.MinIoU {
				t.Stats.MinIoU = p.IoU
			}
			t.Stats.MaxIoU = max(t.Stats.MaxIoU, p.IoU)
			sum += p.IoU
			t.Pairs = append(t.Pairs, p)
		}
	}
	if len(t.Pairs) > 0 {
		t.Stats.MeanIoU = sum / float64(len(t.Pairs))
	} else {
		t.Stats.MinIoU, t.Stats.MaxIoU, t.Stats.MeanIoU = 1, 1, 1 // one paper: its set with itself
	}
	in := TagInput{Category: t.Category}
	for _, s := range t.Supporting {
		in.Supporting = append(in.Supporting, s.Title)
	}
	for _, k := range g.Background {
		r := refs[k]
		if r == nil {
			r = &Ref{Key: k}
		}
		bg := Background{ID: k, S2PaperID: r.S2PaperID, ArxivID: r.ArxivID, DOI: r.DOI, Title: r.Title, Year: r.Year, CitedBy: cited[k], Split: r.Split}
		if cited[k] == len(g.Members) {
			t.Stats.Core++
		}
		if sc, ok := pickCard(cards, r); ok {
			c := sc.Card
			bg.TextLevel, bg.CardPaper, bg.CardKind, bg.Card = TextCard, sc.Paper, sc.Kind, &c
			t.Stats.Cards++
		} else if r.Abstract != "" {
			bg.TextLevel, bg.Abstract = TextAbstract, r.Abstract
			t.Stats.Abstracts++
		}
		t.Background = append(t.Background, bg)
		if r.Title != "" {
			in.Background = append(in.Background, r.Title)
		}
	}
	tag, err := WriteTag(ctx, b.LLM, b.Model, in)
	if err != nil {
		return t, err // an answer pending in a batch too: the topic has no tag yet
	}
	if tag.Fallback != "" {
		b.log().Warn("topic tag fell back to the heuristic", "topic", g.ID, "reason", tag.Fallback)
	}
	if llm.IsHeuristic(tag.Model) && b.Meter != nil {
		b.Meter.RecordHeuristic(StageName)
	}
	t.Tag, t.TagModel, t.TagPromptVersion, t.TagFallback = tag.Text, tag.Model, tag.PromptVersion, tag.Fallback
	return t, nil
}

// cardsByPaper indexes the store's idea cards by paper item.
func cardsByPaper(ctx context.Context, st *store.Store) (map[string][]record.StoredCard, error) {
	all, err := record.StoredCards(ctx, st)
	if err != nil {
		return nil, err
	}
	out := map[string][]record.StoredCard{}
	for _, c := range all {
		out[c.Paper] = append(out[c.Paper], c)
	}
	return out, nil
}

// pickCard returns the idea card of a background paper: the cards of its
// summarize item (its versionless arXiv ID, else "s2:"+paperId, else
// "title:"+normalized title: the first of these that has cards), and of
// those a source card before a gold card (a background paper plays the
// part of a source), a model's before the heuristic's, then the kind that
// sorts last (the later prompt version, "…-v2" after "…-v1").
func pickCard(cards map[string][]record.StoredCard, r *Ref) (record.StoredCard, bool) {
	for _, item := range record.PaperItems(r.ArxivID, r.S2PaperID, r.Title) {
		cs := cards[item]
		if len(cs) == 0 {
			continue
		}
		best := cs[0]
		for _, c := range cs[1:] {
			if cardRank(c, best) > 0 {
				best = c
			}
		}
		return best, true
	}
	return record.StoredCard{}, false
}

// cardRank orders two cards of a paper by preference (> 0: a first).
func cardRank(a, b record.StoredCard) int {
	src := func(c record.StoredCard) int {
		if c.CardKind == record.CardSource {
			return 1
		}
		return 0
	}
	model := func(c record.StoredCard) int {
		if llm.IsHeuristic(c.Card.Model) {
			return 0
		}
		return 1
	}
	if c := cmp.Compare(src(a), src(b)); c != 0 {
		return c
	}
	if c := cmp.Compare(model(a), model(b)); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}

// BuildGraphs builds the citation graphs of targets the store lacks (the
// citegraph stage, wired in by the caller; it reuses every stored
// response, so no request is made twice) and returns each target's graph
// or the reason it has none.
type BuildGraphs func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error)

// LoadGraphs returns the citation graphs of the seeds: those of ids (arXiv
// IDs with or without version), or of every target in st with a Graph
// when ids is nil. A target without a stored Graph is built with build;
// with a nil build it is excluded. Excluded seeds come back with the
// reason.
func LoadGraphs(ctx context.Context, st *store.Store, ids []string, build BuildGraphs) ([]*record.Graph, []SeedStatus, error) {
	if ids == nil {
		var err error
		if ids, err = record.Graphs.Items(ctx, st); err != nil {
			return nil, nil, fmt.Errorf("load topic seeds: %w", err)
		}
	}
	var (
		graphs   []*record.Graph
		excluded []SeedStatus
		missing  []string
	)
	seen := map[string]bool{}
	for _, in := range ids {
		id, err := arxiv.Parse(in)
		if err != nil {
			excluded = append(excluded, SeedStatus{ID: in, Status: ReasonInvalidID, Detail: err.Error()})
			continue
		}
		key := record.Key(id)
		if seen[key] {
			continue
		}
		seen[key] = true
		g, _, err := record.Graphs.Get(ctx, st, key)
		switch {
		case err == nil:
			graphs = append(graphs, g)
		case errors.Is(err, store.ErrNotFound) && build != nil:
			missing = append(missing, key)
		case errors.Is(err, store.ErrNotFound):
			excluded = append(excluded, SeedStatus{ID: key, Status: ReasonNoGraph, Detail: "no citation graph in the store: run curate citegraph"})
		default:
			return nil, nil, fmt.Errorf("load topic seed %s: %w", key, err)
		}
	}
	if len(missing) > 0 {
		built, failed := build(ctx, missing)
		for _, k := range missing {
			switch g, err := built[k], failed[k]; {
			case err != nil:
				excluded = append(excluded, SeedStatus{ID: k, Status: ReasonCitegraph, Detail: strings.TrimSpace(err.Error())})
			case g != nil:
				graphs = append(graphs, g)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("load topic seeds: %w", err)
		}
	}
	slices.SortFunc(graphs, func(a, b *record.Graph) int { return cmp.Compare(a.TargetID, b.TargetID) })
	slices.SortFunc(excluded, func(a, b SeedStatus) int { return cmp.Compare(a.ID, b.ID) })
	return graphs, excluded, nil
}
