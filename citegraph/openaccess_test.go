package citegraph

import (
	"strings"
	"testing"

	"github.com/groundwork/curate/s2/s2test"
)

// TestBatchOpenAccessField: the batch fill asks for openAccessPdf only
// for the pdfs stage (Runner.OpenAccess); reference edges ask for it
// either way.
func TestBatchOpenAccessField(t *testing.T) {
	for _, open := range []bool{false, true} {
		e := newStageEnv(t)
		const key = "1706.03762"
		e.putDoc(key, "ar5iv-1706.03762.html")
		e.s2.AddPaper(map[string]any{"paperId": strings.Repeat("20", 20), "title": "Attention is All you Need",
			"externalIds": map[string]any{"ArXiv": key}})
		e.s2.AddSyntheticReferences("ARXIV:"+key, 40, s2test.Synth{NullAbstract: 3})
		r := e.runner(testKey, false)
		r.OpenAccess = open
		if res := e.run(r, key)[0]; res.Err != nil {
			t.Fatal(res.Err)
		}
		batches := e.s2.RequestsTo(s2test.BatchPath)
		if len(batches) == 0 {
			t.Fatal("no batch request: the field goes unchecked")
		}
		for _, b := range batches {
			fields := strings.Split(b.Query.Get("fields"), ",")
			if has := strings.Contains(","+b.Query.Get("fields")+",", ",openAccessPdf,"); has != open {
				t.Errorf("OpenAccess %v: batch fields %v", open, fields)
			}
		}
		for _, q := range e.s2.RequestsTo(s2test.ReferencesPath("ARXIV:" + key)) {
			if !strings.Contains(q.Query.Get("fields"), "openAccessPdf") {
				t.Errorf("reference fields %q lack openAccessPdf", q.Query.Get("fields"))
			}
		}
	}
}
