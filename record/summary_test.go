package record

import "testing"

func TestCardKind(t *testing.T) {
	if got, want := CardKind(CardSource, "Qwen/Qwen3-8B", "summarize-source-v1").Name(), "card:source:Qwen/Qwen3-8B:summarize-source-v1"; got != want {
		t.Errorf("CardKind = %q, want %q", got, want)
	}
	if got, want := FailureKind(CardGold, "m", "v").Name(), "card-failure:gold:m:v"; got != want {
		t.Errorf("FailureKind = %q, want %q", got, want)
	}
}

func TestPaperItems(t *testing.T) {
	got := PaperItems("2507.11127v2", "abc", "Attention Is All You Need!")
	want := []string{"2507.11127", "s2:abc", "title:attention is all you need"}
	if len(got) != len(want) {
		t.Fatalf("PaperItems = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("PaperItems[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	if got := PaperItems("not an id", "", ""); len(got) != 0 {
		t.Errorf("PaperItems of nothing = %q", got)
	}
}
