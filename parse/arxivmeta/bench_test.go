package arxivmeta_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/groundwork/curate/parse/arxivmeta"
)

// writeSynthetic writes a snapshot of n papers with the full snapshot's
// fields (an abstract of about 1 KB, as the real file's average), one to
// three versions each.
func writeSynthetic(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	abstract := ""
	for range 20 {
		abstract += "We study a fictional problem with a fictional method. "
	}
	base := time.Date(2015, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range n {
		d := base.Add(time.Duration(i) * time.Hour)
		id := fmt.Sprintf("%02d%02d.%05d", d.Year()%100, int(d.Month()), i%100000)
		vs := fmt.Sprintf(`{"version":"v1","created":%q}`, d.Format(time.RFC1123))
		for v := 2; v <= 1+i%3; v++ {
			vs += fmt.Sprintf(`,{"version":"v%d","created":%q}`, v, d.AddDate(0, v, 0).Format(time.RFC1123))
		}
		fmt.Fprintf(w, `{"id":%q,"submitter":"A. Person","authors":"A. Person and B. Person","title":"Paper %d","comments":null,"journal-ref":null,"doi":null,"report-no":null,"categories":"cs.CL","license":null,"abstract":%q,"versions":[%s],"update_date":"2024-01-01","authors_parsed":[["Person","A.",""]]}`+"\n",
			id, i, abstract, vs)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// BenchmarkIndex builds the index of a 100,000-paper snapshot (about 120
// MB): papers/s and the index's bytes a paper.
func BenchmarkIndex(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "snap.json")
	const n = 100000
	writeSynthetic(b, path, n)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := range b.N {
		s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: filepath.Join(dir, fmt.Sprint("idx", i))})
		if err != nil {
			b.Fatal(err)
		}
		ist, _ := os.Stat(s.Info().Index)
		b.ReportMetric(float64(ist.Size())/float64(s.Info().Papers), "index-B/paper")
		s.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "papers/s")
}

// BenchmarkVersions looks papers up in the index of a 100,000-paper
// snapshot.
func BenchmarkVersions(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "snap.json")
	writeSynthetic(b, path, 100000)
	s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := range b.N {
		d := time.Date(2015, 1, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(i%100000) * time.Hour)
		if _, err := s.Versions(fmt.Sprintf("%02d%02d.%05d", d.Year()%100, int(d.Month()), i%100000)); err != nil {
			b.Fatal(err)
		}
	}
}
