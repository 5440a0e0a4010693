package injection_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/parse/latexml"
)

// BenchmarkScanDocument scans the three largest recorded pages (3.1, 2.7
// and 0.7 MB): the classify and summarize stages scan a target's text
// before every prompt that carries it.
func BenchmarkScanDocument(b *testing.B) {
	dir := fixtures.Dir(b, "arxiv-html")
	for _, f := range []string{"ar5iv-2403.08275.html", "arxiv-2507.09057v1.html", "arxiv-2501.11120v1.html"} {
		page, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		doc, err := latexml.Parse(page, latexml.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f, func(b *testing.B) {
			b.SetBytes(int64(len(doc.FullText)))
			for b.Loop() {
				injection.ScanDocument(doc, nil)
			}
		})
	}
}
