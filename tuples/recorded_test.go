package tuples_test

// The tuples on the recorded real papers of ../shared/fixtures (arXiv and
// ar5iv pages, GROBID TEI of PDFs): the heuristic backend, and the prompt
// path with a fake model that quotes the paper block as a careful model
// does. Their text stays out of this repository: tests read it at test
// time and skip when it is absent.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/quote"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/tuples"
)

// recordedPaper is one recorded paper, parsed.
type recordedPaper struct {
	name string
	doc  *record.Document
}

// recordedPapers parses every recorded arXiv/ar5iv page and GROBID TEI
// (the text of a PDF, as a target whose v1 has no HTML is read), leaving
// out those with no text at all (ar5iv's "No content available" page).
// The papers are parsed once for the package's tests (none changes a
// Document).
var (
	recordedMu    sync.Mutex
	recordedCache []recordedPaper
)

func recordedPapers(t *testing.T) []recordedPaper {
	t.Helper()
	dirs := map[string]string{}
	for _, kind := range []string{"arxiv-html", "grobid-tei"} {
		dirs[kind] = fixtures.Dir(t, kind)
	}
	recordedMu.Lock()
	defer recordedMu.Unlock()
	if recordedCache != nil {
		return recordedCache
	}
	var out []recordedPaper
	for _, kind := range []struct{ dir, glob string }{{"arxiv-html", "*.html"}, {"grobid-tei", "*.xml"}} {
		files, _ := filepath.Glob(filepath.Join(dirs[kind.dir], kind.glob))
		if len(files) == 0 {
			t.Fatalf("no recorded paper in %s", kind.dir)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc *record.Document
			if kind.dir == "grobid-tei" {
				doc, err = tei.Parse(b, tei.Options{})
			} else {
				doc, err = latexml.Parse(b, latexml.Options{})
			}
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(f), err)
			}
			if strings.TrimSpace(doc.Abstract) == "" && !paperprompt.HasBody(doc) {
				t.Logf("%s: no text (conversion %s)", filepath.Base(f), doc.Conversion.Severity)
				continue
			}
			out = append(out, recordedPaper{filepath.Base(f), doc})
		}
	}
	recordedCache = out
	return out
}

// checkQuotes holds every quote of r (claims and steps) to doc's text:
// found verbatim, and the text the record keeps is the paper's own.
func checkQuotes(t *testing.T, name string, doc *record.Document, r record.IdeaTuples) {
	t.Helper()
	ver := quote.ForDocument(doc)
	check := func(field, q string) {
		span, ok := ver.Find(q)
		if !ok {
			t.Errorf("%s %s: quote %q not in the paper", name, field, q)
		} else if span != q {
			t.Errorf("%s %s: the record keeps %q, the paper has %q", name, field, q, span)
		}
	}
	for _, f := range record.TupleFields {
		for _, c := range r.Idea.Claims(f) {
			check(f, c.Quote)
		}
	}
	for _, m := range r.Idea.Methods {
		for _, s := range m.Steps {
			check("step", s.Quote)
		}
	}
}

// TestOfflineRecorded: the heuristic backend, as the stage calls it
// (Offline), on every recorded paper with text, HTML and PDF alike: a
// claim in every required field, every quote in the paper, and the
// record already what verification keeps (nothing more to drop).
func TestOfflineRecorded(t *testing.T) {
	for _, p := range recordedPapers(t) {
		r := tuples.Offline(tuples.Input{Key: p.name, Doc: p.doc})
		if !tuples.Complete(r) || len(r.Missing) > 0 {
			t.Errorf("%s: missing %v", p.name, r.Missing)
		}
		if !r.Heuristic || r.Unverified+r.NotSelfContained+r.NotAtomic != 0 {
			t.Errorf("%s: heuristic %v, dropped %+v", p.name, r.Heuristic, r.Dropped)
		}
		checkQuotes(t, p.name, p.doc, r)
		if again, drops := tuples.Verify(p.doc, r.Idea); len(drops) > 0 || !tuples.Complete(record.IdeaTuples{Idea: again}) {
			t.Errorf("%s: verifying the stored tuple again drops %+v", p.name, drops)
		}
	}
}

// The fake model's ways of writing a quote back.
const (
	// verbatim copies the block's sentence as it stands.
	verbatim = "verbatim"
	// retyped writes it as a model types it back: typography in ASCII,
	// no space before a closing mark nor after an opening one (what the
	// conversion left where a footnote mark or a citation key was), a
	// formula's TeX without the line-break comments LaTeXML wraps long
	// formulas with ("\alpha%" and a newline), composed accents.
	retyped = "retyped"
)

var (
	spaceBeforeClosing = regexp.MustCompile(`\s+([,.;:!?)\]])`)
	spaceAfterOpening  = regexp.MustCompile(`([(\[])\s+`)
	// texLineBreak is a comment LaTeXML breaks a long formula's TeX with
	// ("\epsilon%" and a newline, shown as "\epsilon% _{ij}"): after a
	// letter or a TeX mark, where a per cent sign of the prose stands
	// after a digit.
	texLineBreak = regexp.MustCompile(`([A-Za-z{}()\[\],=+^_-])% `)
	ascii        = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`, "\u2013", "-", "\u2014", "-", "\u2026", "...", "\u00a0", " ")
)

// retype is how a model types a quote back (see retyped).
func retype(s string) string {
	s = ascii.Replace(s)
	s = texLineBreak.ReplaceAllString(s, "$1")
	s = spaceBeforeClosing.ReplaceAllString(s, "$1")
	return spaceAfterOpening.ReplaceAllString(s, "$1")
}

// blockSentences are the sentences of the paper's text as the block of
// req shows it (its headings and notes left out), stressful first: those
// with a formula's TeX, a mark the conversion spaced off, typography, or
// characters beyond ASCII, then the rest, each once.
func blockSentences(req llm.Request) []string {
	text := req.Paper
	if i := strings.Index(text, "<paper>"); i >= 0 {
		text = text[i+len("<paper>"):]
	}
	if i := strings.Index(text, "</paper>"); i >= 0 {
		text = text[:i]
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Title: ") || strings.HasPrefix(line, "Text: ") || strings.HasPrefix(line, "[Left out for length") {
			continue
		}
		for _, s := range paperprompt.Sentences(line) {
			if n := len(strings.Fields(s)); n < 6 || n > 80 || seen[s] || strings.Contains(s, "[removed") {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	stress := func(s string) int {
		n := 0
		if strings.Contains(s, `\`) {
			n += 4
		}
		if spaceBeforeClosing.MatchString(s) || spaceAfterOpening.MatchString(s) {
			n += 3
		}
		for _, r := range s {
			if r > unicode.MaxASCII {
				n += 2
				break
			}
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b string) int { return stress(b) - stress(a) })
	return out
}

// quotingModel is a fake model answering the tuples task as a careful
// model does: a claim of its own words in every field (plain and
// self-contained), each with a sentence of the paper block as its quote,
// written back in style, the hardest sentences first. bad, when set,
// adds to each field but the summary, in turn, a claim whose quote one of
// its functions makes wrong. It records the sentences it quoted.
type quotingModel struct {
	style  string
	bad    []func(s string) string
	quoted []string
}

func (m *quotingModel) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	ss := blockSentences(req)
	if len(ss) < 8 {
		return nil, fmt.Errorf("the block holds %d sentences", len(ss))
	}
	next := 0
	claim := func(field string, k int) map[string]any {
		s := ss[next%len(ss)]
		next++
		m.quoted = append(m.quoted, s)
		q := s
		if m.style == retyped {
			q = retype(s)
		}
		return map[string]any{"claim": fmt.Sprintf("The paper states a point of kind %s, number %d.", strings.ReplaceAll(field, "_", " "), k), "quote": q}
	}
	idea := map[string]any{}
	for i, f := range record.TupleFields {
		n := 2
		if f == record.TupleSummary {
			n = 1
		}
		var cs []map[string]any
		for k := 1; k <= n; k++ {
			c := claim(f, k)
			if f == record.TupleMethods {
				c["steps"] = []map[string]any{claim("method step", k)}
			}
			cs = append(cs, c)
		}
		if len(m.bad) > 0 && f != record.TupleSummary {
			s := ss[(next+len(ss)/2)%len(ss)]
			cs = append(cs, map[string]any{"claim": fmt.Sprintf("The paper states a point of kind %s, number 9.", strings.ReplaceAll(f, "_", " ")), "quote": m.bad[i%len(m.bad)](s)})
		}
		idea[f] = cs
	}
	answer, err := json.Marshal(map[string]any{"references": []any{}, "card": nil, "idea": idea})
	if err != nil {
		return nil, err
	}
	if err := req.Validate(answer); err != nil {
		return nil, err
	}
	return &llm.Response{JSON: answer, Model: "quoting-model"}, nil
}

// TestExtractRecorded asks a fake model that quotes the paper block, on
// every recorded paper with text, for its tuple: quotes copied verbatim,
// and quotes typed back as a model writes them (what verification must
// take as the paper's words: typography, the spaces the conversion left
// before punctuation where it took out a footnote mark or a citation, the
// line-break comments of a formula's TeX), the hardest sentences first
// (formulas, footnote gaps, non-ASCII). Every claim is kept, the record
// keeps the paper's own text of each quote, and it is complete.
func TestExtractRecorded(t *testing.T) {
	papers := recordedPapers(t)
	for _, style := range []string{verbatim, retyped} {
		t.Run(style, func(t *testing.T) {
			retypedDiffers := 0
			for _, p := range papers {
				m := &quotingModel{style: style}
				r, err := tuples.Extract(t.Context(), m, "quoting-model", tuples.Input{Key: p.name, Doc: p.doc})
				if err != nil {
					t.Errorf("%s: %v", p.name, err)
					continue
				}
				if !tuples.Complete(r) || r.Unverified != 0 || r.NotSelfContained+r.NotAtomic != 0 {
					t.Errorf("%s: missing %v, dropped %d unverified, %d other: %+v", p.name, r.Missing, r.Unverified, r.NotSelfContained+r.NotAtomic, r.Dropped)
				}
				checkQuotes(t, p.name, p.doc, r)
				for _, s := range m.quoted {
					if retype(s) != s {
						retypedDiffers++
					}
				}
			}
			if style == retyped && retypedDiffers == 0 {
				t.Error("no quote was typed back differently: the test checks nothing")
			}
			if style == retyped {
				t.Logf("%d papers, %d quotes typed back differently", len(papers), retypedDiffers)
			}
		})
	}
}

// TestExtractRecordedWrongQuotes: on the recorded papers a quote that is
// not the paper's words is dropped and counted, whatever else the answer
// holds: a word left out, two words swapped, fragments joined with an
// ellipsis, an entry of the bibliography (no evidence of what the paper
// claims), a sentence of the paper with a word of another; one of each
// in the fields but the summary, beside the claims that hold.
func TestExtractRecordedWrongQuotes(t *testing.T) {
	dropped := 0
	for _, p := range recordedPapers(t) {
		var entries []string
		for _, r := range p.doc.References {
			if len(strings.Fields(r.Text)) >= 6 {
				entries = append(entries, r.Text)
			}
		}
		bad := []func(string) string{
			func(s string) string { // a word left out
				f := strings.Fields(s)
				return strings.Join(slices.Delete(f, len(f)/2, len(f)/2+1), " ")
			},
			func(s string) string { // two words swapped
				f := strings.Fields(s)
				for i := len(f) / 2; i+1 < len(f); i++ {
					if f[i] != f[i+1] {
						f[i], f[i+1] = f[i+1], f[i]
						break
					}
				}
				return strings.Join(f, " ")
			},
			func(s string) string { // fragments joined
				f := strings.Fields(s)
				return strings.Join(f[:3], " ") + " … " + strings.Join(f[len(f)-3:], " ")
			},
			func(s string) string { // the bibliography
				if len(entries) == 0 {
					return "No entry of this bibliography is long enough to quote."
				}
				return entries[len(s)%len(entries)]
			},
			func(s string) string { // a word of another
				f := strings.Fields(s)
				f[len(f)/2] = "zebra"
				return strings.Join(f, " ")
			},
		}
		m := &quotingModel{style: verbatim, bad: bad}
		r, err := tuples.Extract(t.Context(), m, "quoting-model", tuples.Input{Key: p.name, Doc: p.doc})
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if want := len(record.TupleFields) - 1; r.Unverified != want || !tuples.Complete(r) {
			t.Errorf("%s: %d claims dropped as unverified, want %d (missing %v): %+v", p.name, r.Unverified, want, r.Missing, r.Dropped)
		}
		for _, d := range r.Dropped {
			if d.Why != record.DropUnverified || !strings.Contains(d.Claim, "number 9") {
				t.Errorf("%s: dropped %+v", p.name, d)
			}
		}
		for _, f := range record.TupleFields {
			for _, c := range r.Idea.Claims(f) {
				if strings.Contains(c.Claim, "number 9") {
					t.Errorf("%s %s: kept the wrong quote %q", p.name, f, c.Quote)
				}
			}
		}
		checkQuotes(t, p.name, p.doc, r)
		dropped += r.Unverified
	}
	if dropped == 0 {
		t.Fatal("nothing dropped")
	}
}
