package tei

import "testing"

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
