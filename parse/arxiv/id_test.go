package arxiv

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in        string
		str, base string
		canonical string
		year, mon int
		file      string
	}{
		{"2507.11127", "2507.11127", "2507.11127", "2507.11127", 2025, 7, "2507.11127"},
		{"2507.11127v1", "2507.11127v1", "2507.11127", "2507.11127", 2025, 7, "2507.11127v1"},
		{"arXiv:1706.03762v7", "1706.03762v7", "1706.03762", "1706.03762", 2017, 6, "1706.03762v7"},
		{" 1301.3781 ", "1301.3781", "1301.3781", "1301.3781", 2013, 1, "1301.3781"},
		{"0704.0001", "0704.0001", "0704.0001", "0704.0001", 2007, 4, "0704.0001"},
		{"1412.9999", "1412.9999", "1412.9999", "1412.9999", 2014, 12, "1412.9999"},
		{"1501.00001", "1501.00001", "1501.00001", "1501.00001", 2015, 1, "1501.00001"},
		{"hep-th/9901001", "hep-th/9901001", "hep-th/9901001", "hep-th/9901001", 1999, 1, "hep-th_9901001"},
		{"hep-th/9901001v2", "hep-th/9901001v2", "hep-th/9901001", "hep-th/9901001", 1999, 1, "hep-th_9901001v2"},
		{"math.GT/0309136", "math.GT/0309136", "math.GT/0309136", "math/0309136", 2003, 9, "math.GT_0309136"},
		{"astro-ph/9710163", "astro-ph/9710163", "astro-ph/9710163", "astro-ph/9710163", 1997, 10, "astro-ph_9710163"},
		{"cs/0703001", "cs/0703001", "cs/0703001", "cs/0703001", 2007, 3, "cs_0703001"},
	}
	for _, tt := range tests {
		id, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if id.String() != tt.str || id.Base() != tt.base || id.Canonical() != tt.canonical ||
			id.Year() != tt.year || id.Month() != tt.mon || id.FileName() != tt.file {
			t.Errorf("Parse(%q) = %q base %q canonical %q %d-%d file %q", tt.in, id, id.Base(), id.Canonical(), id.Year(), id.Month(), id.FileName())
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "empty"},
		{"2507.1112", "5 digits"},   // 2015+ ids have 5 digits
		{"1301.37812", "4 digits"},  // 2007-2014 ids have 4
		{"0703.0001", "0704"},       // before the new scheme
		{"2513.00001", "month 13"},  // no month 13
		{"2507.11127v0", "version"}, // versions start at 1
		{"2507.11127v", "version"},
		{"2507.11127v01", "version"},
		{"hep-th/990100", "YYMMNNN"},
		{"hep-th/0801001", "0703"}, // old style ended in March 2007
		{"HEP-TH/9901001", "archive"},
		{"../../etc/passwd", "not letters"},
		{"hep-th/9901001/../x", "YYMMNNN"},
		{"1706.03762 extra", "digits"},
		{"https://arxiv.org/abs/1706.03762", "archive"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) accepted an invalid id", tt.in)
			continue
		}
		if !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), tt.in) {
			t.Errorf("Parse(%q) error %q should name the input and say %q", tt.in, err, tt.why)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"2507.11127v3": "2507.11127", "math.GT/0309136v1": "math/0309136", "junk": ""} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParse checks that a parsed ID prints back to a string that parses to
// the same ID, and that its file name is one safe path element.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"2507.11127v1", "hep-th/9901001", "math.GT/0309136v2", "1301.3781", "arXiv:0704.0001", "a/9107001", "2507.11127v99999999999999999999", "../x", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(id.String())
		if err != nil || again != id {
			t.Fatalf("Parse(%q) = %#v, but its String %q parses to %#v, %v", s, id, id.String(), again, err)
		}
		name := id.FileName()
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
			t.Fatalf("unsafe file name %q for %q", name, s)
		}
		if y := id.Year(); y < 1991 || y > 2099 {
			t.Fatalf("year %d for %q", y, s)
		}
	})
}
