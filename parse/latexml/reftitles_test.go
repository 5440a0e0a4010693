package latexml

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/record"
)

// titleLabel is one hand-labelled entry: the title it writes, or "" for an
// entry without a title.
type titleLabel struct{ page, key, title string }

func readTitleLabels(t *testing.T, name string) []titleLabel {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []titleLabel
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("%s:%d: want page, key and title separated by tabs", name, n)
		}
		out = append(out, titleLabel{f[0], f[1], f[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// titleScore counts a page's titles against the labels: correct (the same
// letters and digits as the label), wrong (a title that is not the
// label's, or a title where the label has none) and missed.
type titleScore struct{ correct, wrong, missed, labelled, given, entries int }

func (s *titleScore) add(got, want string) bool {
	s.entries++
	if want != "" {
		s.labelled++
	}
	if got != "" {
		s.given++
	}
	switch {
	case got == "" && want == "":
		return true
	case got != "" && letters(got) == letters(want):
		s.correct++
		return true
	case got != "":
		s.wrong++
		if want != "" {
			s.missed++
		}
	default:
		s.missed++
	}
	return false
}

func (s titleScore) precision() float64 {
	if s.given == 0 {
		return 1
	}
	return float64(s.correct) / float64(s.given)
}

func (s titleScore) recall() float64 {
	if s.labelled == 0 {
		return 1
	}
	return float64(s.correct) / float64(s.labelled)
}

// TestReferenceTitles scores the titles the parser reads from reference
// entries against titles labelled by hand: every entry of the fixture
// pages' bibliographies (numeric, author-year, econometrics, physics and
// astronomy journal-volume-page styles, entries without a title) and of
// the reference pages written for these tests (REVTeX, ApJ, MNRAS, IEEE,
// APA, Chicago, Vancouver, LNCS, AMS, Nature, ACM, unconverted \bibinfo
// markup; the no-title styles of astronomy, with software records whose
// authors include GitHub handles and whose title is "name/repo: version",
// and titles that begin with "In"). A title counts as right when it has the label's letters and
// digits; a title where the label has none, or another title, is wrong.
func TestReferenceTitles(t *testing.T) {
	sets := []struct {
		labels string
		dir    func(t *testing.T) string
	}{
		{"reftitles-pages.tsv", func(*testing.T) string { return filepath.Join("testdata", "pages") }},
		{"reftitles.tsv", func(t *testing.T) string { return fixtures.Dir(t, "arxiv-html") }},
	}
	for _, set := range sets {
		t.Run(set.labels, func(t *testing.T) {
			labels := readTitleLabels(t, set.labels)
			dir := set.dir(t)
			titles := map[string]map[string]string{}
			var all titleScore
			per := map[string]*titleScore{}
			var pages []string
			for _, l := range labels {
				if titles[l.page] == nil {
					page, err := os.ReadFile(filepath.Join(dir, l.page+".html"))
					if errors.Is(err, fs.ErrNotExist) {
						testneeds.Skip(t, testneeds.Fixtures, "no page %s in %s", l.page, dir)
					}
					if err != nil {
						t.Fatal(err)
					}
					d, err := Parse(page, Options{})
					if err != nil {
						t.Fatalf("%s: %v", l.page, err)
					}
					titles[l.page] = map[string]string{}
					for _, r := range d.References {
						titles[l.page][r.Key] = r.Title
					}
					per[l.page] = &titleScore{}
					pages = append(pages, l.page)
				}
				got, ok := titles[l.page][l.key]
				if !ok {
					t.Errorf("%s: no reference %s", l.page, l.key)
					continue
				}
				all.add(got, l.title)
				if !per[l.page].add(got, l.title) {
					t.Logf("%s %s: title %q, labelled %q", l.page, l.key, got, l.title)
				}
			}
			for _, p := range pages {
				s := per[p]
				t.Logf("%-28s precision %.3f recall %.3f (%d right, %d wrong, %d missed of %d titles, %d entries without)",
					p, s.precision(), s.recall(), s.correct, s.wrong, s.missed, s.labelled, s.entries-s.labelled)
			}
			t.Logf("all: precision %.3f recall %.3f over %d entries", all.precision(), all.recall(), len(labels))
			if all.precision() < 0.97 || all.recall() < 0.95 {
				t.Errorf("title precision %.3f (want at least 0.97), recall %.3f (want at least 0.95)", all.precision(), all.recall())
			}
		})
	}
}

// TestReferenceIdentifiers checks identifiers read from entries: the DOI
// of a link over the DOI as typeset, arXiv IDs and years.
func TestReferenceIdentifiers(t *testing.T) {
	d := parseFile(t, "refs-styles.html")
	byKey := map[string]record.Reference{}
	for _, r := range d.References {
		byKey[r.Key] = r
	}
	for _, tt := range []struct {
		key, doi, arxiv string
		year            int
	}{
		{"bib.bib1", "10.1146/annurev-physchem-032511-143803", "", 2012},
		{"bib.bib16", "10.1162/rest_a_01125", "", 2021},
		{"bib.bib19", "", "2101.01234", 0},
		{"bib.bib21", "", "", 2005},
		{"bib.bib30", "", "", 1968},
	} {
		r := byKey[tt.key]
		if r.DOI != tt.doi || r.ArxivID != tt.arxiv || r.Year != tt.year {
			t.Errorf("%s: doi %q arxiv %q year %d; want %q %q %d (%s)", tt.key, r.DOI, r.ArxivID, r.Year, tt.doi, tt.arxiv, tt.year, r.Text)
		}
	}
}
