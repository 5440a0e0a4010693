package summarize

import (
	"slices"
	"testing"

	"github.com/groundwork/curate/record"
)

func TestPaperItems(t *testing.T) {
	tests := []struct {
		arxiv, s2, title string
		want             []string
	}{
		{"2507.11127v2", "abc", "A Title", []string{"2507.11127", "s2:abc", "title:a title"}},
		{"not-an-id", "abc", "", []string{"s2:abc"}},
		{"", "", "Gödel's {T}heorem", []string{"title:godel s theorem"}},
		{"", "", "", nil},
	}
	for _, tt := range tests {
		if got := record.PaperItems(tt.arxiv, tt.s2, tt.title); !slices.Equal(got, tt.want) {
			t.Errorf("PaperItems(%q, %q, %q) = %q, want %q", tt.arxiv, tt.s2, tt.title, got, tt.want)
		}
	}
}
