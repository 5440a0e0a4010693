package oaipmh

import (
	"slices"
	"testing"
	"time"
)

func TestSplitAuthors(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"A. N. Physicist", []string{"A. N. Physicist"}},
		{"A. One and B. Two", []string{"A. One", "B. Two"}},
		{"A. One, B. Two, C. Three", []string{"A. One", "B. Two", "C. Three"}},
		{"A. One, B. Two, and C. Three", []string{"A. One", "B. Two", "C. Three"}},
		{"A. One, B. Two and\n  C. Three", []string{"A. One", "B. Two", "C. Three"}},
		// Affiliations hold commas and "and"; names may contain "and".
		{"A. One (Univ. X, Dept. of Y and Z), B. Alexander", []string{"A. One (Univ. X, Dept. of Y and Z)", "B. Alexander"}},
		{"C. Bal\\'azs, C.-P. Yuan", []string{"C. Bal\\'azs", "C.-P. Yuan"}},
		{"The ATLAS Collaboration", []string{"The ATLAS Collaboration"}},
		{"", nil},
		{" , ", nil},
	}
	for _, tt := range tests {
		if got := splitAuthors(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitAuthors(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseDates(t *testing.T) {
	tests := []struct {
		parse func(string) (time.Time, error)
		in    string
		want  time.Time // zero: an error is wanted
	}{
		{parseVersionDate, "Mon, 02 Mar 2026 18:00:01 GMT", time.Date(2026, 3, 2, 18, 0, 1, 0, time.UTC)},
		{parseVersionDate, "Mon, 4 Jan 1999 17:23:40 GMT", time.Date(1999, 1, 4, 17, 23, 40, 0, time.UTC)},
		{parseVersionDate, " Tue, 24 Jul 2007 20:10:27 GMT\n", time.Date(2007, 7, 24, 20, 10, 27, 0, time.UTC)},
		{parseVersionDate, "2007-07-24", time.Time{}},
		{parseDatestamp, "2026-03-04", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		{parseDatestamp, "2026-03-05T01:02:03Z", time.Date(2026, 3, 5, 1, 2, 3, 0, time.UTC)},
		{parseDatestamp, "", time.Time{}},
		{parseDatestamp, "2026-13-04", time.Time{}},
	}
	for _, tt := range tests {
		got, err := tt.parse(tt.in)
		if tt.want.IsZero() {
			if err == nil {
				t.Errorf("%q parsed as %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("%q = %v, %v; want %v in UTC", tt.in, got, err, tt.want)
		}
	}
}

func TestVersionNumber(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"v1", 1, true}, {"v12", 12, true}, {" v3 ", 3, true},
		{"v0", 0, false}, {"1", 0, false}, {"v", 0, false}, {"v1a", 0, false}, {"v99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		if n, ok := versionNumber(tt.in); n != tt.want || ok != tt.ok {
			t.Errorf("versionNumber(%q) = %d, %v; want %d, %v", tt.in, n, ok, tt.want, tt.ok)
		}
	}
}
