package dataset

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
)

// knowledge applies the knowledge cut to one target's instance: the
// versions its text and its sources' were read at (the cards say which),
// dated by the versions stage's histories (record.KnowledgeCut), and what
// knowledgecut decides of each source under the mode. Every decision is
// knowledgecut's.
type knowledge struct {
	mode   knowledgecut.Mode
	rec    *record.KnowledgeCut // nil when the versions stage made none
	cutoff time.Time            // zero when unknown
	gold   int                  // the target's version read (0 unknown)
	// late says the target was read at a version dated after its cutoff
	// (its v1 had no HTML): its text may cite what came later.
	late bool
	cut  []record.CutSource
}

func newKnowledge(t *TargetInputs, mode knowledgecut.Mode) *knowledge {
	k := &knowledge{mode: cmp.Or(mode, knowledgecut.DefaultMode), rec: t.Cut, gold: t.GoldVersion}
	if k.rec != nil {
		k.cutoff = k.rec.Cutoff
	}
	return k
}

// cutoffDay is the instance's knowledge_cutoff: empty when the cut is off
// or the target's history unknown.
func (k *knowledge) cutoffDay() string {
	if k.mode == knowledgecut.Off || k.cutoff.IsZero() {
		return ""
	}
	return k.cutoff.UTC().Format(dateLayout)
}

// target records the version of the target's text that was read: the
// gold card's, else (a page that does not say, as ar5iv's) the version
// served now.
func (k *knowledge) target(t *record.InstanceTarget) {
	if k.gold == 0 && k.rec != nil && k.rec.TargetPin.Pin != nil {
		k.gold = k.rec.TargetPin.Pin.Latest
	}
	if k.gold == 0 {
		return
	}
	t.Version = fmt.Sprintf("v%d", k.gold)
	if k.rec == nil {
		return
	}
	h := k.rec.TargetPin.History()
	if x, ok := h.Version(k.gold); ok {
		t.VersionDate = x.Date.UTC().Format(dateLayout)
		k.late = !k.cutoff.IsZero() && x.Date.After(k.cutoff)
	}
}

// pin returns the versions stage's pin of the source refKey names, and
// its history.
func (k *knowledge) pin(refKey string) (*record.Pin, record.PaperVersions) {
	if k.rec == nil {
		return nil, record.PaperVersions{}
	}
	sp, ok := k.rec.Source(refKey)
	if !ok {
		return nil, record.PaperVersions{}
	}
	return sp.Pin, sp.History()
}

// firstAfter reports whether the source refKey names, which has no card,
// is one the cut left out as first published after the cutoff (the
// summarize stage does not card it), recording it so.
func (k *knowledge) firstAfter(refKey string, e record.Edge) bool {
	pin, _ := k.pin(refKey)
	if !knowledgecut.Skip(k.mode, pin) {
		return false
	}
	d := knowledgecut.Decide(k.mode, *pin, knowledgecut.Read{})
	k.cut = append(k.cut, record.CutSource{RefKey: refKey, ArxivID: cmp.Or(InstanceID(deref(e.ArxivID)), strings.TrimSpace(deref(e.ArxivID))),
		S2PaperID: deref(e.S2PaperID), DOI: deref(e.DOI), Title: deref(e.Title), Dropped: d.Dropped, Known: k.late})
	return true
}

// source applies the cut to a source with a card: it records the version
// read and its date, and reports whether the source is kept. A source
// without an arXiv ID has no versions to cut by and is kept as it is.
func (k *knowledge) source(src *record.InstanceSource, in SourceInput) bool {
	if src.ArxivID == "" || InstanceID(src.ArxivID) == "" {
		return true
	}
	pin, hist := k.pin(src.RefKey)
	v := in.Version
	if pin != nil && (v == 0 || in.TextLevel == record.TextAbstract) {
		// A page that does not say its version, or an abstract: of the
		// version served now, as far as anything shows.
		v = pin.Latest
	}
	var read knowledgecut.Read
	if v > 0 {
		read.Version = v
		if x, ok := hist.Version(v); ok {
			read.VersionDate = x.Date
			read.RevisedAfterCutoff = !k.cutoff.IsZero() && x.Date.After(k.cutoff)
		}
	}
	var d knowledgecut.Decision
	switch {
	case k.mode == knowledgecut.Strict && (pin == nil || k.cutoff.IsZero()):
		// No cutoff, or no history: nothing shows it to be of the time.
		d = knowledgecut.Decision{Dropped: knowledgecut.DroppedUnknown, Read: read}
	case pin == nil:
		d = knowledgecut.Decide(k.mode, record.Pin{}, read)
	default:
		d = knowledgecut.Decide(k.mode, *pin, read)
	}
	if !d.Keep {
		k.cut = append(k.cut, record.CutSource{RefKey: src.RefKey, ArxivID: src.ArxivID, S2PaperID: src.S2PaperID, DOI: src.DOI,
			Title: src.Title, Dropped: d.Dropped, Known: k.late && d.Dropped == knowledgecut.DroppedFirstAfter})
		return false
	}
	if d.Read.Version > 0 {
		src.Version = fmt.Sprintf("v%d", d.Read.Version)
	}
	if !d.Read.VersionDate.IsZero() {
		src.VersionDate = d.Read.VersionDate.UTC().Format(dateLayout)
	}
	src.RevisedAfterCutoff = k.mode != knowledgecut.Off && d.Read.RevisedAfterCutoff
	return true
}

// knowledgeCounts are what the dataset card says of the cut, over the
// published instances.
type knowledgeCounts struct {
	knowledgecut.Counts
	// Instances counts those with a knowledge cutoff; TargetsLate those
	// whose target was read at a later version than v1.
	Instances, TargetsLate int
}

func (c *knowledgeCounts) add(in *record.Instance) {
	if in.KnowledgeCutoff != "" {
		c.Instances++
	}
	if in.Target.Version != "" && in.Target.Version != "v1" {
		c.TargetsLate++
	}
	for _, s := range in.Sources {
		switch {
		case s.ArxivID == "":
		case s.VersionDate == "":
			c.Undated++
		case s.RevisedAfterCutoff:
			c.RevisedAfter++
		default:
			c.Pinned++
		}
	}
	for _, s := range in.CutSources {
		switch s.Dropped {
		case knowledgecut.DroppedFirstAfter:
			c.DroppedFirstAfter++
		case knowledgecut.DroppedAfterCutoff:
			c.DroppedAfterCutoff++
		case knowledgecut.DroppedUnknown:
			c.DroppedUnknown++
		}
	}
}

// text is the card's account of the cut.
func (c knowledgeCounts) text(mode knowledgecut.Mode) string {
	var b strings.Builder
	b.WriteString("## Knowledge cut\n\n")
	fmt.Fprintf(&b, "Knowledge cut: `%s`. ", mode)
	switch mode {
	case knowledgecut.Off:
		b.WriteString("Sources are read as arXiv serves them now; the versions read are recorded where known.\n\n")
	case knowledgecut.Strict:
		b.WriteString("Each instance's `knowledge_cutoff` is its target's arXiv v1 date; the target is read at v1 and each source at its last version dated on or before the cutoff. Only sources whose version read is dated on or before the cutoff are kept; a source first published after it (a later revision of the target cited it) is never a source.\n\n")
	default:
		b.WriteString("Each instance's `knowledge_cutoff` is its target's arXiv v1 date; the target is read at v1 and each source at its last version dated on or before the cutoff. A source whose pinned version could not be read is read as served now and kept, marked `revised_after_cutoff`; a source first published after the cutoff (a later revision of the target cited it) is never a source.\n\n")
	}
	fmt.Fprintf(&b, "Instances with a knowledge cutoff: %d; targets read at a later version than v1 (v1 has no HTML): %d. ", c.Instances, c.TargetsLate)
	fmt.Fprintf(&b, "Sources on arXiv kept: %d read at the version of their cutoff (pinned), %d read at a version dated after it (`revised_after_cutoff`), %d of unknown date. ",
		c.Pinned, c.RevisedAfter, c.Undated)
	fmt.Fprintf(&b, "Sources dropped: %d (first published after the cutoff %d, read after it %d, of unknown date %d).\n\n",
		c.Dropped(), c.DroppedFirstAfter, c.DroppedAfterCutoff, c.DroppedUnknown)
	b.WriteString("Fields: `knowledge_cutoff` (YYYY-MM-DD), `target.version` and `target.version_date` (the version of the target's text read), and per source `version`, `version_date` and `revised_after_cutoff`.")
	if mode == knowledgecut.Strict {
		b.WriteString(" `curate dataset --check DIR` verifies that no kept source's `version_date` is after its instance's `knowledge_cutoff`.")
	}
	b.WriteString("\n\n")
	return b.String()
}
