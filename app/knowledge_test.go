package app

import (
	"testing"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/knowledgecut"
)

// TestDigestKnowledgeCut: the mode of the knowledge cut is one of the
// dataset's inputs: changing it changes the inputs digest, so the
// dataset is built again.
func TestDigestKnowledgeCut(t *testing.T) {
	st, err := OpenStore(t.Context(), t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	digests := map[string]knowledgecut.Mode{}
	for _, m := range []knowledgecut.Mode{knowledgecut.Flag, knowledgecut.Strict, knowledgecut.Off} {
		d, err := builtin().inputsDigest(t.Context(), st, "test", nil, dataset.Options{CreatedAt: time.Unix(1e9, 0), KnowledgeCut: m}, "")
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := digests[d]; ok {
			t.Errorf("modes %s and %s give the same inputs digest", other, m)
		}
		digests[d] = m
	}
}
