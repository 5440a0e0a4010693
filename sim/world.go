package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kinds of paper in a World.
const (
	kindTarget     = 1
	kindBackground = 2
)

// Where a paper's HTML is served from.
const (
	HTMLArxiv = "arxiv" // arxiv.org/html serves it
	HTMLAr5iv = "ar5iv" // only ar5iv serves it (arXiv answers 404)
	HTMLNone  = ""      // neither: arXiv 404, ar5iv 307 to arxiv.org/abs
)

// Sequence numbers of arXiv IDs: targets take 00001..49999, other papers
// 50001..99999, so an ID tells which paper it is without a table.
const (
	targetSeq     = 1
	backgroundSeq = 50001
	maxPerKind    = 49999
	// maxPaperTokens bounds WorldConfig.PaperTokens: pages are made when
	// asked for, so a page stays a page.
	maxPaperTokens = 100000
)

// WorldConfig describes a World. Zero fields take the documented defaults.
type WorldConfig struct {
	// Seed makes the world: the same seed and sizes give the same papers,
	// pages and answers, byte for byte.
	Seed uint64
	// Targets is the number of target papers (at most 49,999).
	Targets int
	// Papers is the pool of other papers the targets cite (default twice
	// Targets, at least 60; at most 49,999). They are older than every
	// target, so no target cites a later paper.
	Papers int
	// RefsMin and RefsMax bound each target's references (default 8 and
	// 12); SourcesMin and SourcesMax bound the sources among them (default
	// 3 and 5).
	RefsMin, RefsMax       int
	SourcesMin, SourcesMax int
	// From and To bound the targets' arXiv v1 dates (default 2024-01-01
	// and 2026-12-31): targets are dated in index order, so the test split
	// (2026 on) holds the last third.
	From, To time.Time
	// NoHTML lists target indices with no HTML anywhere: arXiv answers
	// 404 and ar5iv a 307 to arxiv.org/abs.
	NoHTML []int
	// Withheld lists target indices whose Semantic Scholar reference list
	// the publisher withheld: the references endpoint answers "data": null.
	Withheld []int
	// OpenAccess, when set, gives the cited papers without an arXiv page
	// open-access PDFs on the PDF host (see OpenAccess).
	OpenAccess *OpenAccess
	// Planted puts instructions in targets' pages (see Plant); the
	// simulated LLM obeys them.
	Planted []Plant

	// Revisions gives the cited papers on arXiv version histories of
	// their own (four in ten have two or three versions, months apart,
	// some after the targets that cite them). Without it every cited
	// paper has one version, as before.
	Revisions bool
	// RevisedSource lists target indices one of whose sources (the first
	// cited paper on arXiv among them) is revised after the target's v1:
	// its new version, two weeks after, cites the target, as a revision
	// describing concurrent work would.
	RevisedSource []int
	// LateSource lists target indices whose last version (a revision,
	// a week after the later paper appeared) cites as a source a paper
	// first published after the target's v1: the next target dated a
	// day or more later.
	LateSource []int
	// NoV1HTML lists target indices arXiv has HTML for from v2 on only
	// (each gets a v2 a month after v1 when it has none): html/IDv1
	// answers 404.
	NoV1HTML []int
	// PaperTokens, when set, lengthens every page's text to about this
	// many tokens (four bytes a token) with an Experiments section of
	// plain prose that cites nothing, so that prompts have a real paper's
	// length (the recipe's papers send about 6,000 tokens a call); 0 keeps
	// the short pages of a few hundred tokens.
	PaperTokens int
}

// versioned reports whether arXiv serves the HTML of every version of a
// paper (html/IDvN), not only the latest's: in a world of version
// histories.
func (c *WorldConfig) versioned() bool {
	return c.Revisions || len(c.RevisedSource)+len(c.LateSource)+len(c.NoV1HTML) > 0
}

// World is a deterministic synthetic literature: targets, the papers they
// cite, and everything the services know about them. Nothing is stored:
// every page and record is generated from the seed when asked for, so a
// world of any size costs a few bytes of memory.
type World struct {
	cfg      WorldConfig
	noHTML   map[int]bool
	withheld map[int]bool
	planted  map[int]Plant
	oa       *openAccess // set by Start
	// revised maps a cited paper revised after a target to that target;
	// late maps a LateSource target to the later target it cites;
	// noV1HTML are the NoV1HTML targets.
	revised  map[int]int
	late     map[int]int
	noV1HTML map[int]bool
	// citedBy is who cites each paper (kind, index -> citing kind,
	// index, reference position), built once when citations are asked.
	citedOnce sync.Once
	citedBy   map[[2]int][][3]int
}

// NewWorld returns the world cfg describes.
func NewWorld(cfg WorldConfig) (*World, error) {
	if cfg.Targets < 1 || cfg.Targets > maxPerKind {
		return nil, fmt.Errorf("sim: %d targets: want 1 to %d", cfg.Targets, maxPerKind)
	}
	if cfg.Papers == 0 {
		cfg.Papers = max(60, 2*cfg.Targets)
	}
	if cfg.Papers < 1 || cfg.Papers > maxPerKind {
		return nil, fmt.Errorf("sim: %d papers: want 1 to %d", cfg.Papers, maxPerKind)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.RefsMin, 8)
	def(&cfg.RefsMax, max(12, cfg.RefsMin))
	def(&cfg.SourcesMin, 3)
	def(&cfg.SourcesMax, max(5, cfg.SourcesMin))
	switch {
	case cfg.RefsMin > cfg.RefsMax || cfg.SourcesMin > cfg.SourcesMax:
		return nil, fmt.Errorf("sim: reference or source bounds reversed")
	case cfg.SourcesMax > cfg.RefsMin:
		return nil, fmt.Errorf("sim: up to %d sources among as few as %d references", cfg.SourcesMax, cfg.RefsMin)
	case cfg.RefsMax > cfg.Papers:
		return nil, fmt.Errorf("sim: %d references from a pool of %d papers", cfg.RefsMax, cfg.Papers)
	}
	if cfg.From.IsZero() {
		cfg.From = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.To.IsZero() {
		cfg.To = time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	if cfg.PaperTokens < 0 || cfg.PaperTokens > maxPaperTokens {
		return nil, fmt.Errorf("sim: paper length of %d tokens: want 0 to %d", cfg.PaperTokens, maxPaperTokens)
	}
	if !cfg.To.After(cfg.From) || cfg.From.Year() < 2016 {
		return nil, fmt.Errorf("sim: target dates %s to %s: want a range from 2016 on", cfg.From, cfg.To)
	}
	w := &World{cfg: cfg, noHTML: map[int]bool{}, withheld: map[int]bool{}, planted: map[int]Plant{}}
	for _, pl := range cfg.Planted {
		switch {
		case pl.Target < 0 || pl.Target >= cfg.Targets:
			return nil, fmt.Errorf("sim: planted instruction in target %d out of range", pl.Target)
		case pl.Kind != PlantShare && pl.Kind != PlantAll && pl.Kind != PlantGold:
			return nil, fmt.Errorf("sim: planted instruction of kind %q (want %s, %s or %s)", pl.Kind, PlantShare, PlantAll, PlantGold)
		case pl.Form != FormAddressed && pl.Form != FormQuiet:
			return nil, fmt.Errorf("sim: planted instruction in form %q (want %s or %s)", pl.Form, FormAddressed, FormQuiet)
		}
		w.planted[pl.Target] = pl
	}
	for _, i := range cfg.NoHTML {
		if i < 0 || i >= cfg.Targets {
			return nil, fmt.Errorf("sim: NoHTML target %d out of range", i)
		}
		w.noHTML[i] = true
	}
	for _, i := range cfg.Withheld {
		if i < 0 || i >= cfg.Targets {
			return nil, fmt.Errorf("sim: Withheld target %d out of range", i)
		}
		w.withheld[i] = true
	}
	if err := w.initVersions(); err != nil {
		return nil, err
	}
	if err := w.initOpenAccess(); err != nil {
		return nil, err
	}
	return w, nil
}

// initVersions picks the papers of RevisedSource, LateSource and
// NoV1HTML.
func (w *World) initVersions() error {
	w.revised, w.late, w.noV1HTML = map[int]int{}, map[int]int{}, map[int]bool{}
	for _, i := range w.cfg.NoV1HTML {
		if i < 0 || i >= w.cfg.Targets || w.noHTML[i] {
			return fmt.Errorf("sim: NoV1HTML target %d out of range or without HTML (NoHTML)", i)
		}
		w.noV1HTML[i] = true
	}
	for _, i := range w.cfg.LateSource {
		if i < 0 || i >= w.cfg.Targets {
			return fmt.Errorf("sim: LateSource target %d out of range", i)
		}
		v1 := w.Target(i).Published
		j := i + 1
		for j < w.cfg.Targets && w.Target(j).Published.Before(v1.Add(24*time.Hour)) {
			j++
		}
		if j >= w.cfg.Targets {
			return fmt.Errorf("sim: LateSource target %d: no target is dated a day after it", i)
		}
		w.late[i] = j
	}
	for _, i := range w.cfg.RevisedSource {
		if i < 0 || i >= w.cfg.Targets {
			return fmt.Errorf("sim: RevisedSource target %d out of range", i)
		}
		t := w.Target(i)
		found := false
		for _, ref := range w.References(&t) {
			if ref.Role == RoleSource && ref.Paper.Kind == kindBackground && ref.Paper.ArxivID != "" {
				if _, taken := w.revised[ref.Paper.Index]; !taken {
					w.revised[ref.Paper.Index] = i
				}
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("sim: RevisedSource target %d has no source on arXiv among the cited papers", i)
		}
	}
	return nil
}

// Config returns the world's configuration with defaults applied.
func (w *World) Config() WorldConfig { return w.cfg }

// Paper is one paper of a World.
type Paper struct {
	Kind    int    // target or background (cited only)
	Index   int    // within its kind
	Name    string // coined name, unique in the world
	ArxivID string // versionless; "" when the paper is not on arXiv
	Version int    // latest version (0 without arXiv)
	DOI     string // "" for arXiv papers (S2 then gives arXiv's DOI)
	// Published is the arXiv v1 date (the publication date otherwise);
	// Updated is the latest version's; Versions are the dates of v1 to
	// the latest (nil without arXiv).
	Published, Updated time.Time
	Versions           []time.Time
	Title              string
	Abstract           string
	Authors            []string
	Primary            string
	Categories         []string
	HTML               string // HTMLArxiv, HTMLAr5iv or HTMLNone
	Venue              string
	topic, method, obj string
}

// IsTarget reports whether p is a target.
func (p *Paper) IsTarget() bool { return p.Kind == kindTarget }

// Year is the year of the paper's v1.
func (p *Paper) Year() int { return p.Published.Year() }

// IDv returns the arXiv ID with its latest version, e.g. "2401.00001v2".
func (p *Paper) IDv() string { return p.ArxivID + "v" + strconv.Itoa(p.Version) }

// AsOf returns the paper as it stood at version v (1 to Version): its
// history cut there, its page and references those of that version.
func (p Paper) AsOf(v int) (Paper, bool) {
	if v < 1 || v > p.Version || v > len(p.Versions) {
		return Paper{}, false
	}
	p.Version, p.Versions, p.Updated = v, p.Versions[:v:v], p.Versions[v-1]
	return p, true
}

// setVersions gives p the history of dates.
func (p *Paper) setVersions(dates []time.Time) {
	p.Versions, p.Version = dates, len(dates)
	p.Published, p.Updated = dates[0], dates[len(dates)-1]
}

// Ref is one reference of a target, in bibliography order.
type Ref struct {
	Paper Paper
	// Role is "source" or "other": what the target's text says of it.
	Role string
	// Label is the source's role label (motivates, exposes_gap,
	// foundation, extends): the cue phrase its citing sentence carries.
	Label string
	// NoEdgeAbstract leaves the abstract out of the S2 edge, so the
	// pipeline must ask the batch endpoint for it.
	NoEdgeAbstract bool
}

// Roles of a reference.
const (
	RoleSource = "source"
	RoleOther  = "other"
)

// Source labels, the classify stage's.
var sourceLabels = []string{"motivates", "exposes_gap", "foundation", "extends"}

// rng returns a generator seeded by the world's seed and parts: the same
// parts always give the same stream.
func (w *World) rng(parts ...any) *rand.Rand {
	h := sha256.New()
	fmt.Fprint(h, w.cfg.Seed)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum), binary.LittleEndian.Uint64(sum[8:])))
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// NumTargets returns the number of targets.
func (w *World) NumTargets() int { return w.cfg.Targets }

// TargetIDs returns the versionless arXiv IDs of the targets, in index
// (and date) order.
func (w *World) TargetIDs() []string {
	ids := make([]string, w.cfg.Targets)
	for i := range ids {
		ids[i] = w.Target(i).ArxivID
	}
	return ids
}

// TargetsFile returns a targets file for curate: one ID a line.
func (w *World) TargetsFile() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %d synthetic targets (sim seed %d)\n", w.cfg.Targets, w.cfg.Seed)
	for _, id := range w.TargetIDs() {
		b.WriteString(id)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// NoHTMLTargets and WithheldTargets return the IDs of the targets
// configured so.
func (w *World) NoHTMLTargets() []string   { return w.ids(w.cfg.NoHTML) }
func (w *World) WithheldTargets() []string { return w.ids(w.cfg.Withheld) }

func (w *World) ids(idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, w.Target(i).ArxivID)
	}
	return out
}

// Target returns target i (0 ≤ i < Targets).
func (w *World) Target(i int) Paper {
	span := w.cfg.To.Sub(w.cfg.From)
	day := w.cfg.From.Add(time.Duration(int64(span) / int64(w.cfg.Targets) * int64(i))).Truncate(24 * time.Hour)
	p := w.paper(kindTarget, i, day)
	if w.noV1HTML[i] && p.Version == 1 {
		p.setVersions([]time.Time{p.Published, p.Published.AddDate(0, 1, 0)})
	}
	if j, ok := w.late[i]; ok {
		// The revision that cites the later paper.
		at := w.Target(j).Published
		if p.Updated.After(at) {
			at = p.Updated
		}
		p.setVersions(append(slices.Clip(p.Versions), at.AddDate(0, 0, 7)))
	}
	switch {
	case w.noV1HTML[i]:
		p.HTML = HTMLArxiv
	case w.noHTML[i]:
		p.HTML = HTMLNone
	case w.rng("html", kindTarget, i).IntN(10) == 0:
		p.HTML = HTMLAr5iv
	default:
		p.HTML = HTMLArxiv
	}
	return p
}

// Background returns cited paper j (0 ≤ j < Papers).
func (w *World) Background(j int) Paper {
	from := time.Date(2015, 1, 5, 0, 0, 0, 0, time.UTC)
	to := time.Date(2023, 12, 20, 0, 0, 0, 0, time.UTC)
	day := from.Add(time.Duration(int64(to.Sub(from)) / int64(w.cfg.Papers) * int64(j))).Truncate(24 * time.Hour)
	p := w.paper(kindBackground, j, day)
	r := w.rng("html", kindBackground, j)
	switch n := r.IntN(100); {
	case n < 20: // not on arXiv: a journal paper with a DOI
		p.ArxivID, p.Version, p.HTML, p.Versions = "", 0, HTMLNone, nil
		p.DOI = fmt.Sprintf("10.5555/sim.b%d", j)
	case n < 35:
		p.HTML = HTMLAr5iv
	case n < 39:
		p.HTML = HTMLNone
	default:
		p.HTML = HTMLArxiv
	}
	if p.ArxivID == "" {
		return p
	}
	if w.cfg.Revisions {
		// A stream of its own, so that the papers stay as they were.
		rv := w.rng("versions", kindBackground, j)
		if rv.IntN(10) < 4 {
			dates := []time.Time{p.Published}
			for range 1 + rv.IntN(2) {
				dates = append(dates, dates[len(dates)-1].Add(time.Duration(30+rv.IntN(370))*24*time.Hour+time.Duration(rv.IntN(600))*time.Minute))
			}
			p.setVersions(dates)
		}
	}
	if i, ok := w.revised[j]; ok {
		// Revised two weeks after target i's v1, whatever came before.
		after := w.Target(i).Published.AddDate(0, 0, 14)
		dates := []time.Time{p.Published}
		for _, d := range p.Versions[1:] {
			if d.Before(after) {
				dates = append(dates, d)
			}
		}
		p.setVersions(append(dates, after))
	}
	return p
}

// paper generates what a paper of either kind has in common.
func (w *World) paper(kind, i int, v1 time.Time) Paper {
	r := w.rng("paper", kind, i)
	seq := targetSeq + i
	if kind == kindBackground {
		seq = backgroundSeq + i
	}
	v1 = v1.Add(time.Duration(9+r.IntN(10))*time.Hour + time.Duration(r.IntN(60))*time.Minute)
	p := Paper{
		Kind:      kind,
		Index:     i,
		Name:      coinedName(kind, i),
		ArxivID:   fmt.Sprintf("%02d%02d.%05d", v1.Year()%100, int(v1.Month()), seq),
		Version:   1,
		Published: v1,
		Updated:   v1,
		Versions:  []time.Time{v1},
	}
	if kind == kindTarget && r.IntN(4) == 0 {
		p.setVersions([]time.Time{v1, v1.Add(time.Duration(20+r.IntN(40)) * 24 * time.Hour)})
	}
	c := categories[r.IntN(len(categories))]
	p.Primary = c.primary
	p.Categories = []string{c.primary}
	if r.IntN(2) == 0 {
		p.Categories = append(p.Categories, pick(r, c.cross))
	}
	p.topic = pick(r, topics[c.primary])
	p.method = pick(r, methodWords)
	p.obj = pick(r, objectWords)
	p.Title = p.Name + ": " + p.method + " " + p.obj + " for " + p.topic
	for range 2 + r.IntN(3) {
		a := pick(r, firstNames) + " " + pick(r, lastNames)
		if !slices.Contains(p.Authors, a) {
			p.Authors = append(p.Authors, a)
		}
	}
	p.Venue = "arXiv.org"
	if kind == kindBackground && r.IntN(2) == 0 {
		p.Venue = pick(r, venues)
	}
	aspect, cond := pick(r, aspects), pick(r, conditions)
	p.Abstract = fmt.Sprintf("Methods for %s lose %s when %s. "+
		"We introduce %s, which applies %s %s to keep that %s intact. "+
		"On %d benchmarks %s improves %s by %d.%d points over the strongest baseline. "+
		"The approach needs no extra annotation and runs within the original budget.",
		lower(p.topic), aspect, cond, p.Name, lower(p.method), lower(p.obj), firstWord(aspect),
		3+r.IntN(5), p.Name, pick(r, metrics), 1+r.IntN(9), r.IntN(10))
	return p
}

func lower(s string) string { return strings.ToLower(s) }

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// References returns the references of p in bibliography order: a
// target's sources and other references, or the few older papers a cited
// paper's own page lists.
func (w *World) References(p *Paper) []Ref {
	if p.Kind == kindBackground {
		r := w.rng("brefs", p.Index)
		var refs []Ref
		if p.Index > 0 {
			for range r.IntN(3) {
				j := r.IntN(p.Index)
				if !slices.ContainsFunc(refs, func(x Ref) bool { return x.Paper.Index == j }) {
					refs = append(refs, Ref{Paper: w.Background(j), Role: RoleOther})
				}
			}
		}
		if i, ok := w.revised[p.Index]; ok && len(p.Versions) > 1 && p.Updated.After(w.Target(i).Published) {
			// The revision after target i describes it.
			refs = append(refs, Ref{Paper: w.Target(i), Role: RoleOther})
		}
		return refs
	}
	r := w.rng("refs", p.Index)
	n := w.cfg.RefsMin + r.IntN(w.cfg.RefsMax-w.cfg.RefsMin+1)
	ns := w.cfg.SourcesMin + r.IntN(w.cfg.SourcesMax-w.cfg.SourcesMin+1)
	seen := map[[2]int]bool{}
	var refs []Ref
	for len(refs) < n {
		var q Paper
		if p.Index > 0 && r.IntN(100) < 15 {
			q = w.Target(r.IntN(p.Index))
		} else {
			q = w.Background(r.IntN(w.cfg.Papers))
		}
		if k := [2]int{q.Kind, q.Index}; !seen[k] {
			seen[k] = true
			ref := Ref{Paper: q, Role: RoleOther, NoEdgeAbstract: r.IntN(10) < 3}
			if len(refs) < ns {
				ref.Role, ref.Label = RoleSource, pick(r, sourceLabels)
			}
			refs = append(refs, ref)
		}
	}
	r.Shuffle(len(refs), func(a, b int) { refs[a], refs[b] = refs[b], refs[a] })
	if j, ok := w.late[p.Index]; ok && p.Version == w.Target(p.Index).Version {
		// The last revision cites a paper that came after v1.
		refs = append(refs, Ref{Paper: w.Target(j), Role: RoleSource, Label: pick(w.rng("late", p.Index), sourceLabels)})
	}
	return refs
}

// S2ID returns the 40-hex Semantic Scholar paper ID of p: a digest that
// ends in the paper's kind and index, so the ID finds the paper again.
func (w *World) S2ID(p *Paper) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00s2\x00%d\x00%d", w.cfg.Seed, p.Kind, p.Index)))
	return hex.EncodeToString(sum[:14]) + fmt.Sprintf("%02x%010x", p.Kind, p.Index)
}

// CorpusID returns p's S2 corpus ID.
func (w *World) CorpusID(p *Paper) int64 {
	if p.Kind == kindTarget {
		return 300000000 + int64(p.Index)
	}
	return 200000000 + int64(p.Index)
}

// ByArxiv returns the paper with the (versionless or versioned) arXiv ID.
func (w *World) ByArxiv(id string) (Paper, bool) {
	base, _, _ := strings.Cut(id, "v")
	yymm, seqs, ok := strings.Cut(base, ".")
	if !ok || len(yymm) != 4 || len(seqs) != 5 {
		return Paper{}, false
	}
	seq, err := strconv.Atoi(seqs)
	if err != nil {
		return Paper{}, false
	}
	var p Paper
	switch {
	case seq >= backgroundSeq && seq-backgroundSeq < w.cfg.Papers:
		p = w.Background(seq - backgroundSeq)
	case seq >= targetSeq && seq-targetSeq < w.cfg.Targets:
		p = w.Target(seq - targetSeq)
	default:
		return Paper{}, false
	}
	if p.ArxivID != base {
		return Paper{}, false
	}
	if v := strings.TrimPrefix(id, base); v != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "v"))
		if err != nil || n < 1 || n > p.Version {
			return Paper{}, false
		}
	}
	return p, true
}

// ByS2 resolves a Semantic Scholar paper ID in the forms the API takes:
// the 40-hex ID, ARXIV:ID, CorpusId:N, DOI:… or a bare DOI.
func (w *World) ByS2(id string) (Paper, bool) {
	id = strings.TrimSpace(id)
	if len(id) == 40 {
		kind, err1 := strconv.ParseInt(id[28:30], 16, 64)
		idx, err2 := strconv.ParseInt(id[30:], 16, 64)
		if err1 != nil || err2 != nil {
			return Paper{}, false
		}
		p, ok := w.byKind(int(kind), int(idx))
		if !ok || w.S2ID(&p) != strings.ToLower(id) {
			return Paper{}, false
		}
		return p, true
	}
	if strings.HasPrefix(id, "10.") {
		return w.byDOI(id)
	}
	prefix, rest, ok := strings.Cut(id, ":")
	if !ok {
		return Paper{}, false
	}
	switch strings.ToUpper(prefix) {
	case "ARXIV":
		return w.ByArxiv(rest)
	case "DOI":
		return w.byDOI(rest)
	case "CORPUSID":
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Paper{}, false
		}
		switch {
		case n >= 300000000:
			return w.byKind(kindTarget, int(n-300000000))
		case n >= 200000000:
			return w.byKind(kindBackground, int(n-200000000))
		}
	}
	return Paper{}, false
}

func (w *World) byKind(kind, i int) (Paper, bool) {
	switch {
	case kind == kindTarget && i >= 0 && i < w.cfg.Targets:
		return w.Target(i), true
	case kind == kindBackground && i >= 0 && i < w.cfg.Papers:
		return w.Background(i), true
	}
	return Paper{}, false
}

func (w *World) byDOI(doi string) (Paper, bool) {
	doi = strings.ToLower(doi)
	if rest, ok := strings.CutPrefix(doi, "10.48550/arxiv."); ok {
		return w.ByArxiv(rest)
	}
	if rest, ok := strings.CutPrefix(doi, "10.5555/sim.b"); ok {
		j, err := strconv.Atoi(rest)
		if err != nil {
			return Paper{}, false
		}
		p, ok := w.byKind(kindBackground, j)
		if !ok || p.DOI == "" {
			return Paper{}, false
		}
		return p, true
	}
	return Paper{}, false
}
