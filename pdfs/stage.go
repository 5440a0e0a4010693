package pdfs

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Missing is a source whose PDF full text a run asked for and did not
// get: its card is written from the abstract.
type Missing struct {
	Target string `json:"target"`
	Source string `json:"source"` // the reference's key in the target
	Paper  string `json:"paper"`  // its store item
	// Outcome is Failed (asked again by the next run) or None (not asked
	// again within the retry interval).
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// Row is the pdfs stage as a row of the stage table: the Stage over the
// sources of each target, with what a run needs of it.
type Row struct {
	*Stage
	// IncludeSuspect works on a target whose selections are suspect.
	IncludeSuspect bool
	// Alive, when set, checks the GROBID service before the run asks
	// anything.
	Alive func(ctx context.Context) error
	// Off says why the stage is off (no GROBID service configured); ""
	// when it is on.
	Off string
	// Mode is the knowledge cut: unless off, a source whose pinned
	// version arXiv has no page for (the sources stage recorded it so
	// under the version's own item) gets that version's PDF, and a source
	// first published after the cutoff none.
	Mode knowledgecut.Mode

	mu      sync.Mutex
	missing []Missing
}

func (r *Row) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: Name, About: "open-access PDFs of the sources without an arXiv page, converted by GROBID (with --grobid only)", Workers: 2,
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name(), record.S2References.Name()},
		Optional: []string{record.S2Batches.Name(), record.Documents.Name(), record.NoHTMLs.Name(), record.KnowledgeCuts.Name()},
		Writes:   []string{record.PDFFiles.Name(), record.TEIFiles.Name(), record.PDFDocuments.Name(), record.PDFOutcomes.Name()},
		Before:   []string{"sources"},
		Requests: []pipeline.Request{{Service: grobid.ServiceName, Count: pipeline.PerSource}},
		Off:      r.Off,
	}
}

// Check asks the GROBID service whether it is alive (see Row.Alive).
func (r *Row) Check(ctx context.Context) error {
	if r.Alive == nil {
		return nil
	}
	return r.Alive(ctx)
}

// Prepare starts a run: its list of sources without a PDF is empty.
func (r *Row) Prepare(context.Context, []string) (func(context.Context) error, error) {
	r.mu.Lock()
	r.missing = nil
	r.mu.Unlock()
	return nil, nil
}

// Do converts the open-access PDFs of a target's sources that have no
// arXiv page. A source whose PDF cannot be had keeps its abstract and
// does not fail the target; a GROBID service that stays busy or
// unreachable does, and the next run goes on from the stored PDFs.
func (r *Row) Do(ctx context.Context, key string) (string, error) {
	set, err := record.Sources(ctx, r.Store, key)
	if err != nil {
		return "", err
	}
	refs, held := set.Working(r.IncludeSuspect)
	switch {
	case held != nil:
		return "", pipeline.Hold(pipeline.SuspectReason(held))
	case refs == nil:
		return pipeline.Skipped, nil
	}
	cut, _, err := record.KnowledgeCuts.Lookup(ctx, r.Store, key)
	if err != nil {
		return "", err
	}
	var srcs []Source
	for _, ref := range refs {
		src := Source{Key: ref.Key, ArxivID: ref.ArxivID, S2PaperID: ref.S2PaperID, Title: ref.Title}
		var pin *record.Pin
		if cut != nil {
			if sp, ok := cut.Source(ref.Key); ok {
				pin = sp.Pin
			}
		}
		if knowledgecut.Skip(r.Mode, pin) {
			continue // no source: nothing to read
		}
		if v := knowledgecut.Pinned(r.Mode, pin); v > 0 {
			if id, err := arxiv.Parse(ref.ArxivID); err == nil {
				// Read apart when the sources stage looked for the
				// version's page apart (and found none, or found it).
				item := record.VersionItem(record.Key(id), v)
				looked, err := record.NoHTMLs.Has(ctx, r.Store, item)
				if err == nil && !looked {
					looked, err = record.Documents.Has(ctx, r.Store, item)
				}
				if err != nil {
					return "", fmt.Errorf("pdfs of %s: source %s at v%d: %w", key, ref.Key, v, err)
				}
				if looked {
					src.Version = v
				}
			}
		}
		srcs = append(srcs, src)
	}
	res, err := r.ProcessTarget(ctx, key, srcs)
	r.note(key, res)
	if err != nil {
		return "", err
	}
	if res.Requested > 0 || res.Converted > 0 {
		return pipeline.Done, nil
	}
	return pipeline.Reused, nil
}

// note keeps the sources of res that asked for a PDF and did not get one.
func (r *Row) note(key string, res *Result) {
	if res == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range res.Sources {
		if s.Requested && (s.Outcome == None || s.Outcome == Failed) {
			r.missing = append(r.missing, Missing{Target: key, Source: s.Key, Paper: s.Paper, Outcome: s.Outcome, Reason: s.Reason})
		}
	}
}

// Missing lists the sources the run asked a PDF for and did not get, by
// target and source.
func (r *Row) Missing() []Missing {
	r.mu.Lock()
	out := slices.Clone(r.missing)
	r.mu.Unlock()
	slices.SortFunc(out, func(x, y Missing) int {
		return cmp.Or(strings.Compare(x.Target, y.Target), strings.Compare(x.Source, y.Source))
	})
	return out
}
