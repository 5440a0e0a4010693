package latexml

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/hostile"
	"github.com/groundwork/curate/internal/testneeds"
)

// BenchmarkParse measures parse throughput over every fixture page
// (MB/s is bytes of HTML per second on one goroutine).
func BenchmarkParse(b *testing.B) {
	pages := fixturePages(b)
	var total int64
	for _, p := range pages {
		total += int64(len(p.html))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range pages {
			if _, err := Parse(p.html, Options{}); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
		}
	}
}

type fixturePage struct {
	name string
	html []byte
}

func fixturePages(tb testing.TB) []fixturePage {
	tb.Helper()
	dir := fixtures.Dir(tb, "arxiv-html")
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(files) == 0 {
		testneeds.Skip(tb, testneeds.Fixtures, "no fixture pages in %s", dir)
	}
	var pages []fixturePage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, fixturePage{name: filepath.Base(f), html: data})
	}
	return pages
}

// BenchmarkGoqueryText is the reference point from the issue: goquery's bare
// parse of the same pages plus Text() of the whole document, without any
// extraction.
func BenchmarkGoqueryText(b *testing.B) {
	pages := fixturePages(b)
	var total int64
	for _, p := range pages {
		total += int64(len(p.html))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range pages {
			d, err := goquery.NewDocumentFromReader(bytes.NewReader(p.html))
			if err != nil {
				b.Fatal(err)
			}
			_ = d.Text()
		}
	}
}

// BenchmarkHostileSpans parses a 317 KB page whose every cell spans 100
// columns and 100 rows (the page that took 30 s and 2 GB before spans were
// bounded by the cells present).
func BenchmarkHostileSpans(b *testing.B) {
	cols := 90
	rows := 317 * 1024 / (cols * len(`<td colspan="100" rowspan="100">r00c00</td>`))
	page := hostilePage(spanTable(rows, cols, 100))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(page, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCitingSentence parses one sentence citing N references (and
// the N entries): time per byte must not grow with N.
func BenchmarkCitingSentence(b *testing.B) {
	for _, n := range []int{10_000, 40_000} {
		page := citingSentence(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(page, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHostilePages parses each hostile page of package hostile at
// 16 MB (tiny tags, tiny cells, deep spans, attributes, formatting tags
// the HTML parser would clone): every one is past the parse budget, so
// its time and memory (B/op) are the budget's, not the page's. curate-bench
// hostile measures the peak RSS of curate itself at 62.9 MB.
func BenchmarkHostilePages(b *testing.B) {
	for _, kind := range hostile.Pages {
		page, err := hostile.Bytes(kind, 16<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(page, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
