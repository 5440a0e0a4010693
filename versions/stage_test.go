package versions_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/versions"
)

// classified stores target i's edges and selections as classify leaves
// them (the world's sources chosen), plus extra sources by arXiv ID, and
// returns its key.
func (e *env) classified(t *testing.T, i int, extra ...string) string {
	t.Helper()
	p := e.w.Target(i)
	g := record.Graph{TargetID: p.ArxivID}
	sel := record.Selections{TargetID: p.ArxivID}
	add := func(arxivID, role string) {
		k := fmt.Sprintf("bib.bib%d", len(g.Edges)+1)
		id := arxivID
		g.Edges = append(g.Edges, record.Edge{TargetID: p.ArxivID, RefKey: &k, ArxivID: &id})
		sel.Selections = append(sel.Selections, record.Selection{TargetID: p.ArxivID, RefKey: k, Role: role})
	}
	for _, r := range e.w.References(&p) {
		role := record.RoleOther
		if r.Role == sim.RoleSource {
			role = record.RoleSource
		}
		add(r.Paper.ArxivID, role)
	}
	for _, id := range extra {
		add(id, record.RoleSource)
	}
	ctx := context.Background()
	if _, err := record.Graphs.Put(ctx, e.st, p.ArxivID, &g, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := record.SelectionSets.Put(ctx, e.st, p.ArxivID, &sel, nil); err != nil {
		t.Fatal(err)
	}
	return p.ArxivID
}

func (e *env) cut(t *testing.T, key string) *record.KnowledgeCut {
	t.Helper()
	c, _, err := record.KnowledgeCuts.Get(context.Background(), e.st, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sourcePin(t *testing.T, c *record.KnowledgeCut, arxivID string) record.SourcePin {
	t.Helper()
	for _, s := range c.Sources {
		if s.ArxivID == arxivID {
			return s
		}
	}
	t.Fatalf("no pin of %s in %+v", arxivID, c.Sources)
	return record.SourcePin{}
}

// TestStage: the stage records each target's cutoff (its v1 date) and
// where each source on arXiv stood then, as the world's histories say: a
// source revised after its target pinned to the version before, a source
// first published after it marked so, one arXiv never issued unknown
// without failing the target. Done once, it is reused with no request;
// the estimate counts what is left.
func TestStage(t *testing.T) {
	e := newEnv(t, 50)
	ctx := context.Background()
	revised, late := e.classified(t, 3), e.classified(t, 4, "2401.49999")
	s := &versions.Stage{Store: e.st, OAI: e.repo}
	if d := s.Declare(); d.Name != versions.Name || len(d.Requests) != 1 || d.Requests[0].Service != "oai-pmh" {
		t.Fatalf("declaration %+v", d)
	}
	if n, _, err := s.Count(ctx, []string{revised, late}, pipeline.Request{}); err != nil || n < 10 {
		t.Errorf("estimate before: %v requests, %v", n, err)
	}
	if _, err := s.Prepare(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{revised, late} {
		if out, err := s.Do(ctx, k); err != nil || out != pipeline.Done {
			t.Fatalf("%s: %s %v", k, out, err)
		}
	}
	t3 := e.w.Target(3)
	c := e.cut(t, revised)
	if !c.Cutoff.Equal(t3.Published.Truncate(time.Second)) || c.TargetPin.Pin == nil || c.TargetPin.Pin.Version != 1 {
		t.Errorf("cutoff %s, target pin %+v; want v1 of %s", c.Cutoff, c.TargetPin.Pin, t3.Published)
	}
	var rev sim.Paper
	for _, r := range e.w.References(&t3) {
		if r.Role == sim.RoleSource && r.Paper.ArxivID != "" && !r.Paper.IsTarget() {
			rev = e.w.Background(r.Paper.Index)
			break
		}
	}
	if sp := sourcePin(t, c, rev.ArxivID); sp.Pin == nil || !sp.Pin.Later || sp.Pin.FirstAfter || sp.Pin.Version >= sp.Pin.Latest ||
		sp.Pin.Date.After(c.Cutoff) || sp.Pin.Latest != rev.Version || sp.From != record.VersionsFromGetRecord || len(sp.Versions) != rev.Version {
		t.Errorf("revised source %s (versions %v): %+v", rev.ArxivID, rev.Versions, sp)
	}
	c4 := e.cut(t, late)
	j := -1
	for i := range e.w.NumTargets() {
		if e.w.Target(i).Published.After(e.w.Target(4).Published) && j < 0 {
			j = i
		}
	}
	later := e.w.Target(j).ArxivID
	if sp := sourcePin(t, c4, later); sp.Pin == nil || !sp.Pin.FirstAfter || sp.Pin.Version != 0 {
		t.Errorf("source first published after the cutoff %s: %+v", later, sp)
	}
	if sp := sourcePin(t, c4, "2401.49999"); sp.Pin != nil || !strings.Contains(sp.Unknown, "no record") {
		t.Errorf("a paper arXiv never issued: %+v", sp)
	}

	asked := e.oai.Stats().Requests
	if out, err := s.Do(ctx, revised); err != nil || out != pipeline.Reused {
		t.Errorf("again: %s %v", out, err)
	}
	if n := e.oai.Stats().Requests; n != asked {
		t.Errorf("%d requests for a recorded cut", n-asked)
	}
	if n, _, err := s.Count(ctx, []string{revised}, pipeline.Request{}); err != nil || n != 0 {
		t.Errorf("estimate after: %v requests, %v; want none", n, err)
	}
	// The target's history is stored, for what else reads a cutoff.
	if v, ok, _ := record.PaperVersionSets.Lookup(ctx, e.st, revised); !ok || len(v.Versions) != t3.Version {
		t.Errorf("the target's stored history: %+v", v)
	}
}

// TestStageSnapshot: with a snapshot the stage asks nothing for what it
// holds; a paper it lacks falls back to OAI-PMH and the cut says so; a
// target whose snapshot line lacks v1, with no repository to ask, fails
// with an error naming the file's line: it has no cutoff.
func TestStageSnapshot(t *testing.T) {
	e := newEnv(t, 50)
	ctx := context.Background()
	key := e.classified(t, 3)
	t3 := e.w.Target(3)
	refs := e.w.References(&t3)
	var held []sim.Paper
	var missing string
	for _, p := range papers(e.w) {
		isSource := false
		for _, r := range refs {
			if r.Role == sim.RoleSource && r.Paper.ArxivID == p.ArxivID {
				isSource = true
			}
		}
		if isSource && missing == "" {
			missing = p.ArxivID
			continue
		}
		held = append(held, p)
	}
	_, path := snapshot(t, held)
	s := &versions.Stage{Store: e.st, OAI: e.repo, Snapshot: &versions.SnapshotFile{Path: path, IndexDir: filepath.Join(t.TempDir(), "index")}}
	if _, err := s.Prepare(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Do(ctx, key); err != nil || out != pipeline.Done {
		t.Fatalf("%s %v", out, err)
	}
	c := e.cut(t, key)
	if c.TargetPin.From != record.VersionsFromSnapshot {
		t.Errorf("target read from %q", c.TargetPin.From)
	}
	if sp := sourcePin(t, c, missing); sp.Fallback != "not in the arXiv metadata snapshot" || sp.From != record.VersionsFromGetRecord || sp.Pin == nil {
		t.Errorf("the paper the snapshot lacks: %+v", sp)
	}
	if n := e.oai.Stats().Requests; n != 1 {
		t.Errorf("%d requests, want the one GetRecord", n)
	}

	e2 := newEnv(t, 50)
	key = e2.classified(t, 3)
	noV1 := fmt.Sprintf(`{"id":%q,"versions":[{"version":"v2","created":"Mon, 1 Jan 2024 10:00:00 GMT"}]}`, key)
	_, path = snapshot(t, nil, noV1)
	s = &versions.Stage{Store: e2.st, Snapshot: &versions.SnapshotFile{Path: path, IndexDir: filepath.Join(t.TempDir(), "index")}}
	out, err := s.Do(ctx, key)
	if err == nil || !strings.Contains(err.Error(), "no v1") || !strings.Contains(err.Error(), path+" line 1") || !strings.Contains(err.Error(), key) {
		t.Fatalf("a target without v1: %s %v, want an error naming it and the snapshot's line", out, err)
	}
	if _, ok, _ := record.KnowledgeCuts.Lookup(ctx, e2.st, key); ok {
		t.Error("a cut was recorded for a target without v1")
	}
}

// TestStageArxivAPI: on the default sources (the arXiv API, OAI-PMH for
// what it cannot settle), a target whose entry the citegraph feed stored
// costs one API lookup for all its sources and one GetRecord per source
// whose entry leaves the pin open (v3 or later, the cutoff strictly
// between its v1 and latest dates), none for the others; its pins are
// those of the whole histories. The estimate counts as much before, and
// nothing after. Without OAI-PMH such a source is recorded unpinned, with
// the entry's history and why, and the stage asks again once it may.
func TestStageArxivAPI(t *testing.T) {
	e := newEnv(t, 50)
	ctx := context.Background()
	// A target with a source whose pin the API cannot settle.
	target, open := -1, map[string]bool{}
	for i := range e.w.NumTargets() {
		tg := e.w.Target(i)
		cutoff := tg.Published.Truncate(time.Second)
		for _, r := range e.w.References(&tg) {
			p, _ := e.w.ByArxiv(r.Paper.ArxivID)
			if r.Role == sim.RoleSource && p.Version >= 3 && p.Versions[0].Truncate(time.Second).Before(cutoff) && cutoff.Before(p.Versions[p.Version-1].Truncate(time.Second)) {
				open[p.ArxivID] = true
			}
		}
		if len(open) > 0 {
			target = i
			break
		}
	}
	if target < 0 {
		t.Fatal("no target of the world has a source its entry cannot settle")
	}
	tg := e.w.Target(target)
	key := e.classified(t, target)
	entry := record.ArxivEntry{ID: tg.ArxivID, Version: tg.Version, Published: tg.Published.Truncate(time.Second), Updated: tg.Updated.Truncate(time.Second)}
	if _, err := record.ArxivMetas.Put(ctx, e.st, key, &record.ArxivMeta{Found: true, CheckedAt: time.Now().UTC().Format(time.RFC3339), Entry: &entry}, nil); err != nil {
		t.Fatal(err)
	}

	// Without OAI-PMH first: unpinned, said, the entry's history kept.
	s := &versions.Stage{Store: e.st, API: e.apic}
	if d := s.Declare(); len(d.Requests) != 1 || d.Requests[0].Service != "arxiv-api" {
		t.Fatalf("declaration without OAI-PMH: %+v", d.Requests)
	}
	if out, err := s.Do(ctx, key); err != nil || out != pipeline.Done {
		t.Fatalf("without OAI-PMH: %s %v", out, err)
	}
	c := e.cut(t, key)
	for id := range open {
		sp := sourcePin(t, c, id)
		if sp.Pin != nil || !strings.Contains(sp.Unknown, "does not settle the pin") || !sp.Partial || len(sp.Versions) != 2 || sp.From != record.VersionsFromArxivAPI {
			t.Errorf("source %s without OAI-PMH: %+v", id, sp)
		}
	}
	if api, oai := e.requests(); api != 1 || oai != 0 {
		t.Errorf("without OAI-PMH: %d API and %d OAI-PMH requests, want 1 and 0", api, oai)
	}

	// With OAI-PMH: the stage asks again for what it could not pin, and
	// only that.
	s = &versions.Stage{Store: e.st, API: e.apic, OAI: e.repo}
	if d := s.Declare(); len(d.Requests) != 2 || d.Requests[0].Service != "arxiv-api" || d.Requests[1].Service != "oai-pmh" {
		t.Fatalf("declaration: %+v", d.Requests)
	}
	api, _, err := s.Count(ctx, []string{key}, pipeline.Request{Service: "arxiv-api"})
	oai, notes, err2 := s.Count(ctx, []string{key}, pipeline.Request{Service: "oai-pmh"})
	if err != nil || err2 != nil || api != 0 || oai != float64(len(open)) {
		t.Errorf("estimate: %v API and %v OAI-PMH requests (%v %v), want 0 and %d; notes %v", api, oai, err, err2, len(open), notes)
	}
	if out, err := s.Do(ctx, key); err != nil || out != pipeline.Done {
		t.Fatalf("%s %v", out, err)
	}
	if api, oai := e.requests(); api != 1 || oai != len(open) {
		t.Errorf("%d API and %d OAI-PMH requests in all, want 1 and %d", api, oai, len(open))
	}
	c = e.cut(t, key)
	for _, sp := range c.Sources {
		p, ok := e.w.ByArxiv(sp.ArxivID)
		if !ok {
			continue
		}
		full, _ := knowledgecut.PinAt(record.PaperVersions{ID: p.ArxivID, Versions: want(p)}, c.Cutoff)
		if sp.Pin == nil || *sp.Pin != full {
			t.Errorf("source %s (versions %v): pin %+v, want %+v", sp.ArxivID, p.Versions, sp.Pin, full)
		}
		if wantFrom := record.VersionsFromArxivAPI; open[sp.ArxivID] && sp.From != record.VersionsFromGetRecord || !open[sp.ArxivID] && sp.From != wantFrom {
			t.Errorf("source %s read from %q", sp.ArxivID, sp.From)
		}
	}
	if out, err := s.Do(ctx, key); err != nil || out != pipeline.Reused {
		t.Errorf("again: %s %v", out, err)
	}
	for _, svc := range []string{"arxiv-api", "oai-pmh"} {
		if n, _, err := s.Count(ctx, []string{key}, pipeline.Request{Service: svc}); err != nil || n != 0 {
			t.Errorf("estimate after, %s: %v %v", svc, n, err)
		}
	}
}

// TestStageUnknownPaperAnsweredOnce: arXiv's answer that it has no
// record of a paper, given well after the target's cutoff, stands for
// that cutoff: the paper had no version then, and later runs do not ask
// again (every nightly run asked a GetRecord for each such source, and
// redid its target's cut). An answer given soon after the cutoff does
// not stand (arXiv's metadata lags its announcements): asked again.
func TestStageUnknownPaperAnsweredOnce(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		after time.Duration // the clock, after the target's cutoff
		again string        // the second Do's outcome
	}{
		{"long after the cutoff", 400 * 24 * time.Hour, pipeline.Reused},
		{"a day after the cutoff", 24 * time.Hour, pipeline.Done},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 50)
			key := e.classified(t, 4, "2401.49999")
			now := e.w.Target(4).Published.Add(tt.after)
			s := &versions.Stage{Store: e.st, API: e.apic, OAI: e.repo, Now: func() time.Time { return now }}
			if _, err := s.Prepare(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if out, err := s.Do(ctx, key); err != nil || out != pipeline.Done {
				t.Fatalf("%s %v", out, err)
			}
			if sp := sourcePin(t, e.cut(t, key), "2401.49999"); sp.Pin != nil || !strings.Contains(sp.Unknown, "no record") || !sp.UnknownAsOf.Equal(now.UTC()) {
				t.Errorf("a paper arXiv never issued: %+v", sp)
			}
			api, oai := e.requests()
			s = &versions.Stage{Store: e.st, API: e.apic, OAI: e.repo, Now: func() time.Time { return now }}
			if _, err := s.Prepare(ctx, nil); err != nil {
				t.Fatal(err)
			}
			out, err := s.Do(ctx, key)
			if err != nil || out != tt.again {
				t.Errorf("the next run: %s %v, want %s", out, err, tt.again)
			}
			a2, o2 := e.requests()
			if tt.again == pipeline.Reused && (a2 != api || o2 != oai) {
				t.Errorf("the next run asked %d of the API and %d of OAI-PMH", a2-api, o2-oai)
			}
			var n float64
			for _, svc := range []string{"arxiv-api", "oai-pmh"} {
				c, _, err := s.Count(ctx, []string{key}, pipeline.Request{Service: svc})
				if err != nil {
					t.Fatal(err)
				}
				n += c
			}
			if (tt.again == pipeline.Reused) != (n == 0) {
				t.Errorf("the estimate after: %v requests", n)
			}
		})
	}
}
