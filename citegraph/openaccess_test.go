package citegraph

import (
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// TestBatchOpenAccessField: the batch fill (stage or feed) asks for openAccessPdf only
// for the pdfs stage (Runner.OpenAccess); reference edges ask for it
// either way.
func TestBatchOpenAccessField(t *testing.T) {
	for _, open := range []bool{false, true} {
		e := newStageEnv(t)
		const key = "1706.03762"
		e.putDoc(key, "ar5iv-1706.03762.html")
		e.addPaper(map[string]any{"paperId": strings.Repeat("20", 20), "title": "Attention is All you Need",
			"externalIds": map[string]any{"ArXiv": key}})
		simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+key, 40, simtest.Synth{NullAbstract: 3})
		r := e.runner(testKey, false)
		r.OpenAccess = open
		if res := e.run(r, key)[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		batches, refs := 0, 0
		for _, c := range e.s2.Calls() {
			fields := c.Query().Get("fields")
			switch {
			case c.Path == sim.S2BatchPath && !strings.HasPrefix(strings.Join(c.IDs, ","), "ARXIV:"):
				// A fill of what edges lack (the targets' own records
				// come in batches of ARXIV: IDs).
				batches++
				if has := strings.Contains(","+fields+",", ",openAccessPdf,"); has != open {
					t.Errorf("OpenAccess %v: batch fields %q", open, fields)
				}
			case strings.HasSuffix(c.Path, "/references"):
				refs++
				if !strings.Contains(fields, "openAccessPdf") {
					t.Errorf("reference fields %q lack openAccessPdf", fields)
				}
			}
		}
		if batches == 0 || refs == 0 {
			t.Fatalf("%d batch and %d reference requests: the fields go unchecked", batches, refs)
		}
	}
}
