package knowledge

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

// TestE2ECutOnAnOldStore: a store built without the knowledge cut (as
// every store was before it became the default) takes it at its next
// run: every instance gets its target's v1 date as its cutoff, and the
// versions stage, whose targets then arrive at once (nothing before it
// has work), asks the arXiv API at most once a target, the lookups of
// the targets in flight sharing requests. The requests are logged: how
// many targets share one depends on what is in flight, so only the bound
// is held here (the batcher's own tests hold the sharing).
func TestE2ECutOnAnOldStore(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := clitest.Sim(t, defaultWorld(), sim.Options{})
	w := s.World
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	store, ds := filepath.Join(dir, "store"), filepath.Join(dir, "ds")
	fast := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn"}
	if code, _, stderr := clitest.Run(t, env, clitest.RunArgs(t, s, store, ds, append(fast, "--knowledge-cut", "off")...)...); code != 0 {
		t.Fatalf("the run without the cut: exit %d\n%s", code, stderr)
	}
	for _, in := range knowledgeRows(t, ds) {
		if in.KnowledgeCutoff != "" {
			t.Fatalf("--knowledge-cut off published a cutoff %q", in.KnowledgeCutoff)
		}
	}
	s.Reset()
	if code, _, stderr := clitest.Run(t, env, clitest.RunArgs(t, s, store, ds, fast...)...); code != 0 {
		t.Fatalf("the default run on the old store: exit %d\n%s", code, stderr)
	}
	got := perService(s)
	n := w.NumTargets()
	t.Logf("the default run on a store built without the cut: requests %v (%d targets)", got, n)
	if got[sim.ArxivAPI] == 0 || got[sim.ArxivAPI] > n {
		t.Errorf("arXiv API: %d requests for %d targets; want some, at most one a target", got[sim.ArxivAPI], n)
	}
	if got[sim.S2] != 0 {
		t.Errorf("S2 asked %d times: the citation graph was stored", got[sim.S2])
	}
	rows := knowledgeRows(t, ds)
	if len(rows) == 0 {
		t.Fatal("no instance published")
	}
	for id, in := range rows {
		tgt, _ := w.ByArxiv(id)
		if want := tgt.Published.Truncate(time.Second).Format(time.DateOnly); in.KnowledgeCutoff != want {
			t.Errorf("%s: cutoff %q, want its v1 date %s", id, in.KnowledgeCutoff, want)
		}
	}
}
