package archive_test

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/groundwork/curate/internal/archive"
	"github.com/groundwork/curate/parse/arxiv"
)

// BenchmarkOpen indexes a zip in the ar5iv layout with 200,000 entries
// (the real bulk zips hold about 2.1 million across three files) and
// reports the heap the index keeps: all entries, or only the 5,000 papers
// a run wants.
//
//	go test ./internal/archive -run '^$' -bench Open -benchtime 3x
func BenchmarkOpen(b *testing.B) {
	const entries, wanted = 200_000, 5_000
	p := filepath.Join(b.TempDir(), "ar5iv-04-2024-warnings.zip")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := range entries {
		id := fmt.Sprintf("%02d%02d.%05d", 15+i/(12*99999), 1+i/99999%12, 1+i%99999)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "202404/" + id[:4] + "/" + id + ".html", Method: zip.Store})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(w, "<html>%s</html>", id)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()

	for _, tc := range []struct {
		name string
		want func(arxiv.ID) bool
	}{
		{"all", nil},
		{"wanted", func(id arxiv.ID) bool { return id.Number < fmt.Sprintf("%05d", wanted/2+1) && id.YYMM <= "1502" }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var kept uint64
			for range b.N {
				x, err := archive.Open(archive.Options{Want: tc.want}, p)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				kept = ms.HeapAlloc
				if tc.want != nil && x.Len() != wanted {
					b.Fatalf("kept %d papers, want %d", x.Len(), wanted)
				}
				x.Close()
			}
			b.ReportMetric(float64(kept)/(1<<20), "MiB-heap-after-open")
		})
	}
}
