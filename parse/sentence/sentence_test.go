package sentence

import "testing"

func TestBounds(t *testing.T) {
	tests := []struct {
		text  string
		cites [][2]int
		want  []string
	}{
		{"One. Two.", nil, []string{"One.", "Two."}},
		{"As in Smith et al. (2020) it works. Next one.", nil, []string{"As in Smith et al. (2020) it works.", "Next one."}},
		{"It is known.[12] Next.", [][2]int{{12, 16}}, []string{"It is known.[12]", "Next."}},
		{"See Fig. 3 and e.g. this. Then J. R. Smith said so.", nil, []string{"See Fig. 3 and e.g. this.", "Then J. R. Smith said so."}},
		{"  ", nil, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, b := range Bounds(tt.text, tt.cites) {
			got = append(got, tt.text[b[0]:b[1]])
		}
		if len(got) != len(tt.want) {
			t.Errorf("Bounds(%q) = %q, want %q", tt.text, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Bounds(%q) = %q, want %q", tt.text, got, tt.want)
				break
			}
		}
	}
}
