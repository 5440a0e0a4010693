package dataset

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// Defaults of Options.
const (
	DefaultNumIdeas = 3
	DefaultTestFrom = "2026-01-01" // the first day of the test split
	// MinSources is the fewest sources an instance may have: targets with
	// two or fewer are dropped.
	MinSources = 3
)

// dateLayout is the layout of arXiv v1 dates and of Options.TestFrom.
const dateLayout = "2006-01-02"

// MetaFromArxivAPI is the source (citegraph's TargetMeta.Sources) of a v1
// date and categories read from the arXiv API.
const MetaFromArxivAPI = "arxiv-api"

// Reasons a target is dropped.
const (
	DropInvalidID    = "invalid_id"      // the target ID is not an arXiv ID
	DropNoGold       = "no_gold"         // no gold card, or one with an empty field
	DropFewSources   = "too_few_sources" // two or fewer sources with a card
	DropNoDate       = "no_date"         // no arXiv v1 date to split by
	DropCategory     = "category_filter" // the split's category filter rejects it
	DropContaminated = "contamination"   // resolved by the contamination policy
	// DropSuspect: the classification looks implausible (an instruction
	// planted in the paper obeyed, say); Options.IncludeSuspect keeps it.
	DropSuspect = "suspect_classification"
	// DropNoMetadata: the target's arXiv metadata (v1 date, categories)
	// could not be read, so neither its split nor its domain is known.
	DropNoMetadata = "no_arxiv_metadata"
	// DropPending: a stage's LLM answers for the target wait in a
	// provider's batch; a later run collects them and adds the target.
	DropPending = "llm_pending"
	// DropInstructions: the target's text addresses a model (an
	// instruction planted in the paper); Options.IncludeSuspect keeps it.
	DropInstructions = "instruction_like_text"
	// DropUngrounded: the target's gold card is not grounded in the
	// paper's abstract and introduction, or addresses a model itself;
	// Options.IncludeSuspect keeps it.
	DropUngrounded = "ungrounded_gold"
)

// TargetInputs is what the dataset stage reads for one target: the
// citegraph Graph (edges and metadata), the classifier's Selections, the
// gold card and the cards of the selected sources.
type TargetInputs struct {
	Graph      record.Graph
	Selections []record.Selection
	Gold       *record.Card // nil when the target has no gold card
	Sources    []SourceInput
	// MentionOrder lists reference keys in the order the target first
	// cites them. Optional: without it sources are numbered in
	// bibliography order.
	MentionOrder []string
	// Suspect lists why the classification looks implausible, if it does.
	Suspect []string
	// Instructions counts the sentences of the target's text that address
	// a model; NotClassified says no model was asked because of them.
	Instructions  int
	NotClassified bool
	// GoldSuspect lists why the gold card is not grounded in the paper.
	GoldSuspect []string
	// QuotesNotCiting and QuotesNotInPaper count the classification's
	// dropped quotes (record.Selections).
	QuotesNotCiting, QuotesNotInPaper int
	// Fields are the records of the fields stages add to the instance
	// (Inputs.Fields), by field name, as stored.
	Fields map[string]json.RawMessage
	// Cut is the versions stage's knowledge cut of the target (nil
	// without one), and GoldVersion the version of the target's text its
	// gold card was written from (0 unknown).
	Cut         *record.KnowledgeCut
	GoldVersion int
	// MissingField says which field's record a target held back by a
	// guard lacks (the stage that makes it never ran for it): it is
	// dropped for what held it, or as incomplete when suspects are kept.
	MissingField string
	// FewSources is set for a target classify kept fewer than MinSources
	// sources for (Selected counts them): summarize, and the stages after
	// it, skip it, so it has no summary; it is dropped as too_few_sources,
	// not as incomplete.
	FewSources bool
	Selected   int
}

// SourceInput is the summarize stage's output for one selected source.
type SourceInput struct {
	RefKey    string       // the Selection's RefKey (record.RefKeys)
	Card      *record.Card // nil when the source could not be summarized
	TextLevel string       // record.TextFull, record.TextPDF or record.TextAbstract
	// Version is the arXiv version of the text the card was written from
	// (0 unknown: an abstract, a page that does not say).
	Version int
}

// Options configure the dataset stage. The zero value is usable: K = 3,
// test from 2026-01-01, every category, policy drop-train.
type Options struct {
	// NumIdeas is the K the model input asks for (0: DefaultNumIdeas).
	NumIdeas int
	// TestFrom is the first arXiv v1 date of the test split; the day
	// itself is test (zero: DefaultTestFrom).
	TestFrom time.Time
	// TrainCategories and TestCategories filter each split by the
	// target's primary category; empty keeps every category. An entry is
	// a category ("cs.CL") or an archive ("cs", "cs.*", "physics").
	TrainCategories, TestCategories []string
	// Policy resolves contamination (zero: PolicyDropTrain).
	Policy Policy
	// PipelineVersion is recorded in each instance's provenance.
	PipelineVersion string
	// CreatedAt is recorded in each instance's provenance. Zero means
	// now; set it (e.g. from SOURCE_DATE_EPOCH) to make two runs over the
	// same store write identical rows.
	CreatedAt time.Time
	// IncludeSuspect keeps targets whose classification looks
	// implausible; by default they are dropped (DropSuspect).
	IncludeSuspect bool `json:",omitempty"`
	// Fields are the fields stages add to each instance (Inputs.Fields),
	// written after the Instance's own columns in this order.
	Fields []*pipeline.Field `json:"-"`
	// KnowledgeCut is how the knowledge cut is applied to the sources
	// (zero: knowledgecut.DefaultMode); it is one of the dataset's
	// inputs, so changing it rebuilds the dataset.
	KnowledgeCut knowledgecut.Mode
}

func (o Options) withDefaults() Options {
	if o.NumIdeas <= 0 {
		o.NumIdeas = DefaultNumIdeas
	}
	if o.TestFrom.IsZero() {
		o.TestFrom, _ = time.Parse(dateLayout, DefaultTestFrom)
	}
	if o.Policy == "" {
		o.Policy = PolicyDropTrain
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	if o.KnowledgeCut == "" {
		o.KnowledgeCut = knowledgecut.DefaultMode
	}
	return o
}

// Dropped is a target left out of the dataset, and why.
type Dropped struct {
	TargetID string `json:"target_id"`
	Reason   string `json:"reason"` // one of the Drop constants
	Detail   string `json:"detail,omitempty"`
}

// Consolidate builds one instance per target, in instance ID order, and
// lists the targets it leaves out, in target ID order.
//
// Sources are the references the classifier selected that have a card
// and an edge; a source naming the target itself (same arXiv ID, DOI, S2
// ID or title) and a second copy of the same paper are left out. They are
// numbered from 1 in a stable order: by the target's first mention of each
// (MentionOrder), then by bibliography (edge) order, then by key. A target
// with fewer than MinSources sources, no gold card, no v1 date, or whose
// primary category its split's filter rejects is dropped. Instances are
// assigned a split (test on or after TestFrom) but not checked for
// contamination: see Decontaminate.
func Consolidate(targets []TargetInputs, opts Options) ([]record.Instance, []Dropped, error) {
	opts = opts.withDefaults()
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, nil, err
	}
	createdAt := opts.CreatedAt.UTC().Format(time.RFC3339)
	var (
		out     []record.Instance
		dropped []Dropped
	)
	for i := range targets {
		inst, d, err := consolidate(&targets[i], opts, tmpl, createdAt)
		if err != nil {
			return nil, nil, err
		}
		if d != nil {
			dropped = append(dropped, *d)
			continue
		}
		out = append(out, inst)
	}
	slices.SortStableFunc(out, func(a, b record.Instance) int {
		return cmp.Or(cmp.Compare(a.InstanceID, b.InstanceID), cmp.Compare(a.Target.ArxivID, b.Target.ArxivID))
	})
	slices.SortStableFunc(dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	return out, dropped, nil
}

func consolidate(t *TargetInputs, opts Options, tmpl *modelinput.Template, createdAt string) (record.Instance, *Dropped, error) {
	meta := t.Graph.Meta
	targetID := cmp.Or(meta.ArxivID, t.Graph.TargetID)
	drop := func(reason, format string, args ...any) (record.Instance, *Dropped, error) {
		return record.Instance{}, &Dropped{TargetID: targetID, Reason: reason, Detail: fmt.Sprintf(format, args...)}, nil
	}
	id := InstanceID(targetID)
	if id == "" {
		return drop(DropInvalidID, "%q is not an arXiv ID", targetID)
	}
	switch {
	case (t.Instructions > 0 || t.NotClassified) && !opts.IncludeSuspect:
		return drop(DropInstructions, "%s (include it with --include-suspect)", strings.Join(t.Suspect, "; "))
	case t.NotClassified:
		return drop(DropIncomplete, "not classified: its text addresses a model and no model was asked (classify it with --include-suspect)")
	case len(t.Suspect) > 0 && !opts.IncludeSuspect:
		return drop(DropSuspect, "%s (include it with --include-suspect)", strings.Join(t.Suspect, "; "))
	case len(t.GoldSuspect) > 0 && !opts.IncludeSuspect:
		return drop(DropUngrounded, "%s (include it with --include-suspect)", strings.Join(t.GoldSuspect, "; "))
	}
	if t.FewSources {
		return drop(DropFewSources, "%d %s selected by classify, want at least %d: nothing is summarized for it", t.Selected, plural(t.Selected, "source", "sources"), MinSources)
	}
	if t.MissingField != "" {
		return drop(DropIncomplete, "%s", t.MissingField)
	}
	if t.Gold == nil {
		return drop(DropNoGold, "no gold card")
	}
	if f := emptyCardField(t.Gold); f != "" {
		return drop(DropNoGold, "gold card has an empty %s", f)
	}
	published, err := time.Parse(dateLayout, meta.Published)
	if err != nil {
		return drop(DropNoDate, "arXiv v1 date %q is not YYYY-MM-DD", meta.Published)
	}
	if src := meta.Sources["published"]; src != "" && src != MetaFromArxivAPI {
		// A date from the ID's month and no categories: the split and the
		// domain would be guesses, and the record would publish empty
		// fields. The next run that reads the metadata brings it back.
		return drop(DropNoMetadata, "the arXiv API gave no metadata for it (its date %s comes from the %s, its categories are unknown)", meta.Published, src)
	}

	target := record.InstanceTarget{
		ArxivID:         targetID,
		Title:           meta.Title,
		Published:       meta.Published,
		PrimaryCategory: meta.PrimaryCategory,
		Categories:      slices.Clone(meta.Categories),
		Domain:          Domain(meta.PrimaryCategory),
		DOI:             meta.DOI,
		S2PaperID:       meta.S2PaperID,
		NumReferences:   len(t.Graph.Edges),
	}
	if target.Categories == nil {
		target.Categories = []string{}
	}
	k := newKnowledge(t, opts.KnowledgeCut)
	k.target(&target)
	sources, skipped := selectSources(t, targetIdentities(target), k)
	if len(sources) < MinSources {
		return drop(DropFewSources, "%d sources with a card, want at least %d%s", len(sources), MinSources, skipped)
	}

	split := record.SplitTrain
	if !published.Before(opts.TestFrom) {
		split = record.SplitTest
	}
	filter := opts.TrainCategories
	if split == record.SplitTest {
		filter = opts.TestCategories
	}
	if !categoryMatch(filter, meta.PrimaryCategory) {
		return drop(DropCategory, "%s target in %q, %s split keeps %s", split, meta.PrimaryCategory, split, strings.Join(filter, ", "))
	}

	prompt, err := tmpl.Render(sources, opts.NumIdeas)
	if err != nil {
		return record.Instance{}, nil, fmt.Errorf("consolidate %s: %w", targetID, err)
	}
	return record.Instance{
		InstanceID:      id,
		Split:           split,
		Target:          target,
		Sources:         sources,
		Gold:            *t.Gold,
		KnowledgeCutoff: k.cutoffDay(),
		Prompt:          prompt,
		NumIdeas:        opts.NumIdeas,
		Provenance:      provenance(t, sources, opts.PipelineVersion, tmpl.Version(), createdAt),
		Fields:          t.Fields,
		CutSources:      k.cut,
	}, nil, nil
}

// selectSources returns the numbered sources of t and a note on the
// selected references it left out (empty when none).
func selectSources(t *TargetInputs, target []identity, k *knowledge) ([]record.InstanceSource, string) {
	// Selections name edges by the classify stage's keys.
	edges := make(map[string]int, len(t.Graph.Edges))
	for i, k := range record.RefKeys(t.Graph.Edges) {
		edges[k] = i
	}
	cards := make(map[string]SourceInput, len(t.Sources))
	for _, s := range t.Sources {
		cards[s.RefKey] = s
	}
	mention := make(map[string]int, len(t.MentionOrder))
	for i, k := range t.MentionOrder {
		if _, dup := mention[k]; !dup {
			mention[k] = i
		}
	}

	type candidate struct {
		src          record.InstanceSource
		mention, bib int
	}
	var (
		cands                                    []candidate
		noEdge, noCard, self, dup, selected, cut int
	)
	seen := map[string]bool{}
	for _, sel := range t.Selections {
		if sel.Role != record.RoleSource || seen[sel.RefKey] {
			continue
		}
		seen[sel.RefKey] = true
		selected++
		ei, ok := edges[sel.RefKey]
		if !ok {
			noEdge++
			continue
		}
		in, ok := cards[sel.RefKey]
		e := t.Graph.Edges[ei]
		if (!ok || in.Card == nil) && k.firstAfter(sel.RefKey, e) {
			cut++
			continue
		}
		if !ok || in.Card == nil {
			noCard++
			continue
		}
		src := record.InstanceSource{
			RefKey:    sel.RefKey,
			ArxivID:   cmp.Or(InstanceID(deref(e.ArxivID)), strings.TrimSpace(deref(e.ArxivID))),
			S2PaperID: deref(e.S2PaperID),
			DOI:       deref(e.DOI),
			Title:     deref(e.Title),
			Labels:    nonNil(slices.Clone(sel.Labels)),
			Rationale: sel.Rationale,
			Quotes:    nonNil(slices.Clone(sel.Quotes)),
			TextLevel: in.TextLevel,
			Card:      *in.Card,
		}
		if e.Year != nil {
			src.Year = *e.Year
		}
		if src.TextLevel == "" {
			// The summarize stage reads full text exactly when the
			// source has an arXiv ID.
			src.TextLevel = record.TextAbstract
			if src.ArxivID != "" {
				src.TextLevel = record.TextFull
			}
		}
		if _, same := sharedIdentity(sourceIdentities(src), target); same {
			self++
			continue
		}
		if !k.source(&src, in) {
			cut++
			continue
		}
		m, ok := mention[sel.RefKey]
		if !ok {
			m = len(t.MentionOrder)
		}
		cands = append(cands, candidate{src: src, mention: m, bib: ei})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.mention, b.mention), cmp.Compare(a.bib, b.bib), cmp.Compare(a.src.RefKey, b.src.RefKey))
	})

	var (
		out  []record.InstanceSource
		have [][]identity
	)
	for _, c := range cands {
		ids := sourceIdentities(c.src)
		if slices.ContainsFunc(have, func(h []identity) bool { _, ok := sharedIdentity(ids, h); return ok }) {
			dup++
			continue
		}
		have = append(have, ids)
		c.src.DocNumber = len(out) + 1
		out = append(out, c.src)
	}

	var notes []string
	for _, n := range []struct {
		n    int
		what string
	}{{noCard, "without a card"}, {noEdge, "not among the edges"}, {self, "the target itself"}, {dup, "duplicates"}, {cut, "by the knowledge cut"}} {
		if n.n > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	if len(notes) == 0 {
		return out, ""
	}
	return out, fmt.Sprintf(" (%d selected; left out: %s)", selected, strings.Join(notes, ", "))
}

// categoryMatch reports whether filter keeps a target of primary category
// cat: an empty filter keeps all; "cs.CL" keeps exactly cs.CL; "cs" and
// "cs.*" keep every cs category.
func categoryMatch(filter []string, cat string) bool {
	if len(filter) == 0 {
		return true
	}
	archive, _, _ := strings.Cut(cat, ".")
	for _, f := range filter {
		f = strings.TrimSpace(f)
		if f == cat || strings.TrimSuffix(f, ".*") == archive && !strings.Contains(strings.TrimSuffix(f, ".*"), ".") {
			return true
		}
	}
	return false
}

// provenance collects the models and prompt versions of the records an
// instance was built from.
func provenance(t *TargetInputs, sources []record.InstanceSource, version, templateVersion, createdAt string) record.Provenance {
	var cm, cp, sm, sp []string
	for _, s := range t.Selections {
		cm, cp = append(cm, s.Model), append(cp, s.PromptVersion)
	}
	sm, sp = append(sm, t.Gold.Model), append(sp, t.Gold.PromptVersion)
	for _, s := range sources {
		sm, sp = append(sm, s.Card.Model), append(sp, s.Card.PromptVersion)
	}
	return record.Provenance{
		PipelineVersion: version,
		Models:          record.StageValues{Classify: joinSet(cm), Summarize: joinSet(sm)},
		PromptVersions:  record.StageValues{Classify: joinSet(cp), Summarize: joinSet(sp), Dataset: templateVersion},
		CreatedAt:       createdAt,
	}
}

// joinSet returns the distinct non-empty values of vs, sorted, joined by ", ".
func joinSet(vs []string) string {
	vs = slices.DeleteFunc(vs, func(s string) bool { return s == "" })
	slices.Sort(vs)
	return strings.Join(slices.Compact(vs), ", ")
}

// emptyCardField names the first of the four idea-card fields that is
// empty, or returns "".
func emptyCardField(c *record.Card) string {
	for f, v := range c.IdeaFields() {
		if strings.TrimSpace(*v) == "" {
			return f.Name
		}
	}
	return ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// nonNil returns s, or an empty slice for nil: a Parquet LIST cannot be
// null, and reading back gives empty, so rows compare equal either way.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
