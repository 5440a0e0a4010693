package tei

import (
	"testing"

	"github.com/groundwork/curate/internal/hostile"
)

// BenchmarkParse parses every recorded TEI file once per iteration.
func BenchmarkParse(b *testing.B) {
	files := fixtureFiles(b)
	var total int64
	for _, f := range files {
		total += int64(len(f.data))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := Parse(f.data, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkHostileTEI parses each hostile TEI of package hostile at 60 MB
// (one-word references; text cut by a comment every letter, which took
// hours when its pieces were joined one by one): past the parse budget,
// so its time and memory (B/op) are the budget's, not the input's.
func BenchmarkHostileTEI(b *testing.B) {
	for _, kind := range hostile.TEIs {
		data, err := hostile.Bytes(kind, 60_000_000)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
