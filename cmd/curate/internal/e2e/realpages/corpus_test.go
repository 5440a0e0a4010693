package realpages

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// realTarget is a recorded page made a target: the file it is in, the
// site that serves it, its version history and categories (invented for
// the test, in the order of the arXiv IDs), and whether arXiv serves a
// later version of it (made from the v1 page at test time).
type realTarget struct {
	id, file, site string
	versions       []string // dates of v1, v2, ...
	revisedPage    bool
	categories     []string
}

// realTargets are the targets of the real-page runs: arXiv pages of five
// fields, one page cut short as recorded, one target whose v2 arXiv
// serves now (it is read at v1), one whose v1 arXiv has no HTML for (ar5iv
// serves it).
var realTargets = []realTarget{
	{"2501.11120", "arxiv-2501.11120v1.html", sim.HTMLArxiv, []string{"2025-01-19"}, false, []string{"cs.CL", "cs.AI"}},
	{"2507.11127", "arxiv-2507.11127v1.html", sim.HTMLArxiv, []string{"2025-07-15", "2025-08-20"}, true, []string{"cs.AI", "cs.LO"}},
	{"2507.11538", "arxiv-2507.11538v1.html", sim.HTMLArxiv, []string{"2025-07-15"}, false, []string{"cs.AI", "cs.CL"}},
	{"2507.13317", "arxiv-2507.13317v1.html", sim.HTMLArxiv, []string{"2025-07-17", "2025-10-02"}, false, []string{"astro-ph.CO"}},
	{"2509.15338", "arxiv-2509.15338v1.html", sim.HTMLArxiv, []string{"2025-09-18"}, false, []string{"physics.soc-ph", "q-bio.PE"}},
	{"2510.14970", "arxiv-2510.14970v1.html", sim.HTMLArxiv, []string{"2025-10-16"}, false, []string{"q-bio.GN", "cs.LG"}},
	{"1706.03762", "ar5iv-1706.03762.html", sim.HTMLAr5iv, []string{"2017-06-12", "2017-12-06"}, false, []string{"cs.CL", "cs.LG"}},
}

// revisionMark is what a later version made from a recorded v1 page adds
// to its abstract: text a target read at v1 must not show.
const revisionMark = "In a revision made after the first version, the authors discuss concurrent work."

// lateSource is a paper the S2 reference list of 2507.11127 (its latest
// version's, as S2 has it) cites, first published after that target's
// v1: never a source of it.
const lateSource, lateSourceTarget = "2508.01234", "2507.11127"

// standInAbstract is the abstract S2 gives a paper a target cites: the
// test has the citing page, not the cited paper.
const standInAbstract = "%s. Earlier approaches to this problem remain costly and fail on harder cases. " +
	"We propose a method that addresses these limitations with a simple and general design. " +
	"We evaluate the method on standard benchmarks and datasets of the field. " +
	"The results show that the method improves over strong baselines by a clear margin. " +
	"This abstract stands in for the cited paper's own in a test of curate."

// revisedPage returns the recorded v1 page of id as its version v: every
// "IDv1" of the page made "IDvN", revisionMark opening the abstract.
func revisedPage(t *testing.T, v1 []byte, id string, v int) []byte {
	t.Helper()
	page := bytes.ReplaceAll(v1, []byte(id+"v1"), []byte(fmt.Sprintf("%sv%d", id, v)))
	abs := bytes.Index(page, []byte(`class="ltx_abstract"`))
	p := bytes.Index(page[max(abs, 0):], []byte(`<p class="ltx_p"`))
	if abs < 0 || p < 0 {
		t.Fatalf("%s: no abstract paragraph to revise", id)
	}
	at := abs + p + bytes.IndexByte(page[abs+p:], '>') + 1
	return slices.Concat(page[:at], []byte(revisionMark+" "), page[at:])
}

func date(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d.Add(16*time.Hour + 41*time.Minute)
}

// s2ID is a paper ID of the test's making, stable across runs.
func s2ID(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// corpusID is a CorpusId of the test's making.
func corpusID(s string) int64 {
	sum := sha1.Sum([]byte(s))
	return int64(sum[0])<<24 | int64(sum[1])<<16 | int64(sum[2])<<8 | int64(sum[3]) + 1
}

// citedHistory is the version history the test gives a paper a target
// cites on arXiv: v1 in the month its ID names; every third revised a
// month after the target's v1 (so read as served now, marked), the late
// source first published after it.
func citedHistory(t *testing.T, id string, cutoff time.Time) []time.Time {
	t.Helper()
	if id == lateSource {
		return []time.Time{cutoff.AddDate(0, 0, 21)}
	}
	a, err := arxiv.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	yy, _ := strconv.Atoi(a.YYMM[:2])
	mm, _ := strconv.Atoi(a.YYMM[2:4])
	year := 2000 + yy
	if yy > 90 {
		year = 1900 + yy
	}
	v1 := time.Date(year, time.Month(mm), 10, 12, 0, 0, 0, time.UTC)
	if !v1.Before(cutoff) {
		v1 = cutoff.AddDate(0, 0, -3)
	}
	h := []time.Time{v1}
	if corpusID(id)%3 == 0 {
		h = append(h, cutoff.AddDate(0, 1, 0))
	}
	return h
}

// realCorpus serves the real targets: their pages (arXiv's at IDv1,
// ar5iv's), and what Semantic Scholar, the arXiv API and OAI-PMH say of
// them, made from the pages: each target's reference list from its
// bibliography (titles, arXiv IDs and DOIs as the page gives them, the
// page's citing sentences as contexts), version histories of the targets
// and the papers they cite on arXiv, and three papers citing each target
// (two after its v1, one influential, one before). It returns the
// corpus and each target's parsed page.
func realCorpus(t *testing.T) (*sim.Corpus, map[string]*record.Document) {
	t.Helper()
	c := sim.NewCorpus()
	docs := map[string]*record.Document{}
	histories := map[string][]time.Time{}
	for _, tg := range realTargets {
		page := simtest.ArxivFixture(t, tg.file)
		doc, err := latexml.Parse(page, latexml.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tg.file, err)
		}
		docs[tg.id] = doc
		pageID := tg.id
		if tg.site == sim.HTMLArxiv {
			pageID += "v1"
		}
		if err := c.AddPage(tg.site, pageID, page); err != nil {
			t.Fatal(err)
		}
		if tg.revisedPage {
			if err := c.AddPage(sim.HTMLArxiv, fmt.Sprintf("%sv%d", tg.id, len(tg.versions)), revisedPage(t, page, tg.id, len(tg.versions))); err != nil {
				t.Fatal(err)
			}
		}
		var vs []time.Time
		for _, d := range tg.versions {
			vs = append(vs, date(t, d))
		}
		histories[tg.id] = vs
		cutoff := vs[0]
		title := ""
		if doc.Title != nil {
			title = *doc.Title
		}
		tid := s2ID("target " + tg.id)
		cid := corpusID(tg.id)
		year := cutoff.Year()
		pub := cutoff.Format(time.DateOnly)
		abstract := doc.Abstract
		if _, err := c.AddS2Paper(sim.S2Paper{PaperID: &tid, CorpusID: &cid, ExternalIDs: &sim.S2ExternalIDs{ArXiv: tg.id, CorpusID: cid},
			Title: title, Abstract: &abstract, Venue: "arXiv.org", Year: &year, PublicationDate: &pub,
			PublicationTypes: []string{"JournalArticle"}, Authors: []sim.S2Author{{Name: "Real Author"}}}); err != nil {
			t.Fatal(err)
		}

		// The reference list, from the page's bibliography.
		mentions := map[string][]string{}
		for _, m := range doc.Mentions {
			for _, k := range m.RefKeys {
				mentions[k] = append(mentions[k], m.Sentence)
			}
		}
		refs := doc.References
		if tg.id == lateSourceTarget {
			// A later version cites a paper of after v1: S2 lists it.
			refs = append(slices.Clone(refs), record.Reference{Key: "late", Title: "A Method First Published After The Target", ArxivID: lateSource})
			mentions["late"] = []string{"We build directly on the method of this later work, which we extend to new settings."}
		}
		var edges []any
		for _, r := range refs {
			refTitle := strings.TrimSpace(r.Title)
			if refTitle == "" {
				if f := strings.Fields(r.Text); len(f) > 0 {
					refTitle = strings.Join(f[:min(len(f), 12)], " ")
				}
			}
			if refTitle == "" {
				continue
			}
			id := s2ID(tg.id + " cites " + r.Key)
			rc := corpusID(id)
			refAbstract := fmt.Sprintf(standInAbstract, strings.TrimSuffix(refTitle, "."))
			cited := sim.S2Paper{PaperID: &id, CorpusID: &rc, ExternalIDs: &sim.S2ExternalIDs{ArXiv: r.ArxivID, DOI: r.DOI, CorpusID: rc},
				Title: refTitle, Abstract: &refAbstract, Authors: []sim.S2Author{{Name: "Cited Author"}}}
			if r.Year > 0 {
				y := r.Year
				cited.Year = &y
			}
			if r.ArxivID != "" {
				if _, ok := histories[r.ArxivID]; !ok {
					histories[r.ArxivID] = citedHistory(t, r.ArxivID, cutoff)
				}
				d := histories[r.ArxivID][0].Format(time.DateOnly)
				cited.PublicationDate = &d
				y := histories[r.ArxivID][0].Year()
				cited.Year = &y
			}
			if _, err := c.AddS2Paper(cited); err != nil {
				t.Fatal(err)
			}
			ctx := mentions[r.Key]
			if ctx == nil {
				ctx = []string{}
			}
			edges = append(edges, map[string]any{"contexts": ctx, "intents": []string{}, "isInfluential": len(ctx) >= 3, "citedPaper": cited})
		}
		raw := make([]json.RawMessage, 0, len(edges))
		for _, e := range edges {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, b)
		}
		if err := c.SetS2References(tid, raw); err != nil {
			t.Fatal(err)
		}

		// The arXiv API's entry.
		cats := ""
		for _, cat := range tg.categories {
			cats += fmt.Sprintf(`<category term=%q scheme="http://arxiv.org/schemas/atom"/>`, cat)
		}
		entry := fmt.Sprintf(`<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"><id>http://arxiv.org/abs/%sv%d</id>`+
			`<updated>%s</updated><published>%s</published><title>%s</title><summary>%s</summary><author><name>Real Author</name></author>`+
			`<arxiv:primary_category term=%q scheme="http://arxiv.org/schemas/atom"/>%s</entry>`,
			tg.id, len(vs), vs[len(vs)-1].Format(time.RFC3339), cutoff.Format(time.RFC3339), html.EscapeString(title), html.EscapeString(abstract), tg.categories[0], cats)
		if err := c.AddEntry(entry); err != nil {
			t.Fatal(err)
		}

		// Papers citing the target: two after its v1, one before.
		for i, cp := range []struct {
			days        int
			influential bool
		}{{75, true}, {140, false}, {-20, false}} {
			id := s2ID(fmt.Sprintf("cites %s %d", tg.id, i))
			cc := corpusID(id)
			d := cutoff.AddDate(0, 0, cp.days).Format(time.DateOnly)
			y := cutoff.AddDate(0, 0, cp.days).Year()
			ab := "A paper citing the target, of the test's making."
			n := 10 - i
			if _, err := c.AddS2Paper(sim.S2Paper{PaperID: &id, CorpusID: &cc, ExternalIDs: &sim.S2ExternalIDs{CorpusID: cc},
				Title: fmt.Sprintf("Work %d building on %s", i+1, title), Abstract: &ab, Venue: "A Venue", Year: &y, PublicationDate: &d,
				CitationCount: &n, InfluentialCitationCount: &n}); err != nil {
				t.Fatal(err)
			}
			e, _ := json.Marshal(map[string]any{"contexts": []string{"It builds on the target."}, "intents": []string{"methodology"}, "isInfluential": cp.influential,
				"citedPaper": map[string]any{"paperId": tid}})
			if err := c.SetS2References(id, []json.RawMessage{e}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id, vs := range histories {
		m := sim.OAIMeta{ID: id, Datestamp: vs[len(vs)-1], VersionDates: vs, Title: "Paper " + id, Abstract: "An abstract.", Categories: []string{"cs.CL"}, Authors: []string{"Real Author"}}
		for _, tg := range realTargets {
			if tg.id == id {
				m.Categories = tg.categories
				if d := docs[id]; d.Title != nil {
					m.Title = *d.Title
				}
			}
		}
		c.AddOAIRecord("arXivRaw", m.Record("arXivRaw"))
	}
	return c, docs
}
