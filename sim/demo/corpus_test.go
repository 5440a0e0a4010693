package demo_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/sim/demo/internal/corpusgen"
)

func manifest(t *testing.T) *demo.Manifest {
	t.Helper()
	m, err := demo.LoadManifest()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCorpusUpToDate checks that the committed corpus is what the
// generator writes: run go generate after editing internal/corpusgen.
func TestCorpusUpToDate(t *testing.T) {
	files, err := corpusgen.Build()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	err = fs.WalkDir(demo.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		got, err := fs.ReadFile(demo.FS(), path)
		if err != nil {
			return err
		}
		total += len(got)
		want, ok := files[path]
		switch {
		case !ok:
			t.Errorf("corpus/%s is not generated; remove it", path)
		case !bytes.Equal(got, want):
			t.Errorf("corpus/%s differs from the generator's output; run go generate ./demo", path)
		}
		delete(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for path := range files {
		t.Errorf("corpus/%s is missing; run go generate ./demo", path)
	}
	// About 150 KB of it is the OAI-PMH repository's records in its three
	// formats (the licences and the version histories curate reads).
	if total > 850<<10 {
		t.Errorf("corpus is %d bytes; keep it small", total)
	}
}

// TestManifestShape decodes the manifest strictly, so the generator's and
// the package's types stay in step.
func TestManifestShape(t *testing.T) {
	data, err := fs.ReadFile(demo.FS(), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m demo.Manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
}

func parse(t *testing.T, path string) *record.Document {
	t.Helper()
	page, err := fs.ReadFile(demo.FS(), path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := latexml.Parse(page, latexml.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestPagesParse parses every page of the corpus.
func TestPagesParse(t *testing.T) {
	m := manifest(t)
	for _, p := range m.Papers {
		if p.Page == "" {
			continue
		}
		doc := parse(t, p.Page)
		id, err := arxiv.Parse(doc.ID)
		switch {
		case err != nil || id.Canonical() != p.ArxivID:
			t.Errorf("%s: page id %q, want %s", p.Page, doc.ID, p.ArxivID)
		case doc.Source != p.HTML:
			t.Errorf("%s: source %q, want %q", p.Page, doc.Source, p.HTML)
		case doc.Title == nil || *doc.Title != p.Title:
			t.Errorf("%s: title %v, want %q", p.Page, doc.Title, p.Title)
		case len(doc.Authors) == 0 || doc.Abstract == "" || len(doc.Sections) < 2 || len(doc.References) == 0:
			t.Errorf("%s: %d authors, abstract %d bytes, %d sections, %d references", p.Page,
				len(doc.Authors), len(doc.Abstract), len(doc.Sections), len(doc.References))
		case doc.Conversion.Truncated || doc.Conversion.MissingCitations > 0 || len(doc.Conversion.Notes) > 0:
			t.Errorf("%s: conversion %+v", p.Page, doc.Conversion)
		}
		if p.HTML == "ar5iv" && doc.Conversion.Severity != record.SeverityWarning {
			t.Errorf("%s: ar5iv severity %q, want warning", p.Page, doc.Conversion.Severity)
		}
	}
}

// TestTargetPages checks each target page against the manifest: its
// bibliography, tables, and the intended sources' mentions and cues.
func TestTargetPages(t *testing.T) {
	m := manifest(t)
	for _, tg := range m.Targets {
		doc := parse(t, tg.Page)
		if len(doc.Tables) == 0 {
			t.Errorf("%s: no data table", tg.ArxivID)
		}
		if doc.Title == nil || *doc.Title != tg.Title {
			t.Errorf("%s: title %v", tg.ArxivID, doc.Title)
		}
		if len(doc.References) != len(tg.References) {
			t.Fatalf("%s: %d references parsed, manifest has %d", tg.ArxivID, len(doc.References), len(tg.References))
		}
		if n := len(tg.References); n < 8 || n > 12 {
			t.Errorf("%s: %d references, want 8-12", tg.ArxivID, n)
		}
		if n := len(tg.Sources); n < 4 || n > 6 {
			t.Errorf("%s: %d sources, want 4-6", tg.ArxivID, n)
		}
		mentions := map[string][]string{}
		for _, mn := range doc.Mentions {
			for _, k := range mn.RefKeys {
				mentions[k] = append(mentions[k], mn.Sentence)
			}
		}
		for i, r := range tg.References {
			got := doc.References[i]
			if got.Key != r.RefKey || got.Label != r.Label || got.ArxivID != r.ArxivID || got.DOI != r.DOI || got.Title != r.Title {
				t.Errorf("%s %s: parsed %+v, manifest %+v", tg.ArxivID, r.RefKey, got, r)
			}
			// The manifest counts sentences as written. The parser may see
			// fewer: it joins a sentence that opens with a citation ("[1]
			// leaves open ...") to the sentence before it.
			if n := len(mentions[r.RefKey]); n == 0 || n > r.Mentions {
				t.Errorf("%s %s: %d mentions parsed, manifest says %d", tg.ArxivID, r.RefKey, n, r.Mentions)
			}
			if r.Role == "other" && r.Mentions != 1 {
				t.Errorf("%s %s: a background reference mentioned %d times, want once", tg.ArxivID, r.RefKey, r.Mentions)
			}
		}
		for _, s := range tg.Sources {
			ms := mentions[s.RefKey]
			if len(ms) < 2 {
				t.Errorf("%s: source %s has %d mentions, want 2 or more", tg.ArxivID, s.RefKey, len(ms))
			}
			if !slices.ContainsFunc(ms, func(x string) bool { return strings.Contains(x, s.Cue) }) {
				t.Errorf("%s: source %s: no mention contains the cue %q", tg.ArxivID, s.RefKey, s.Cue)
			}
			i := slices.IndexFunc(tg.References, func(r demo.Reference) bool { return r.RefKey == s.RefKey })
			if i < 0 || tg.References[i].Role != "source" {
				t.Errorf("%s: source %s is not a source entry of the bibliography", tg.ArxivID, s.RefKey)
			}
		}
	}
}

type s2Edge struct {
	Contexts      []string `json:"contexts"`
	Intents       []string `json:"intents"`
	IsInfluential bool     `json:"isInfluential"`
	CitedPaper    struct {
		PaperID     *string `json:"paperId"`
		Title       string  `json:"title"`
		Abstract    *string `json:"abstract"`
		ExternalIDs *struct {
			ArXiv    string `json:"ArXiv"`
			DOI      string `json:"DOI"`
			CorpusID int    `json:"CorpusId"`
		} `json:"externalIds"`
	} `json:"citedPaper"`
}

func s2References(t *testing.T, id string) []s2Edge {
	t.Helper()
	data, err := fs.ReadFile(demo.FS(), "s2/references/"+id+".json")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Offset int      `json:"offset"`
		Next   *int     `json:"next"`
		Data   []s2Edge `json:"data"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	if body.Next != nil || body.Offset != 0 {
		t.Fatalf("%s: stored list is not a whole list", id)
	}
	return body.Data
}

// TestManifestConsistency checks the manifest against the rest of the
// corpus and against what the corpus promises.
func TestManifestConsistency(t *testing.T) {
	m := manifest(t)
	papers := map[string]demo.Paper{}
	for _, p := range m.Papers {
		papers[p.S2PaperID] = p
		if p.ArxivID == "" {
			continue
		}
		id, err := arxiv.Parse(p.ArxivID)
		if err != nil {
			t.Errorf("%s: %v", p.ArxivID, err)
			continue
		}
		if got := p.Published[2:4] + p.Published[5:7]; got != id.YYMM {
			t.Errorf("%s: published %s does not match the id", p.ArxivID, p.Published)
		}
	}
	splits := map[string]int{}
	cats := map[string]bool{}
	ar5ivTrain, paragraph := 0, 0
	for _, tg := range m.Targets {
		splits[tg.Split]++
		cats[tg.PrimaryCategory] = true
		want := "train"
		if tg.Published >= m.Cutoff {
			want = "test"
		}
		if tg.Split != want {
			t.Errorf("%s: split %s, published %s", tg.ArxivID, tg.Split, tg.Published)
		}
		if tg.HTML == "ar5iv" && tg.Split == "train" {
			ar5ivTrain++
		}
		edges := s2References(t, tg.ArxivID)
		if len(edges) != tg.S2Edges {
			t.Errorf("%s: %d S2 edges, manifest says %d", tg.ArxivID, len(edges), tg.S2Edges)
		}
		inS2 := map[string]bool{}
		for _, e := range edges {
			if e.CitedPaper.PaperID != nil {
				inS2[*e.CitedPaper.PaperID] = true
			}
		}
		for _, s := range tg.Sources {
			if !inS2[s.S2PaperID] {
				t.Errorf("%s: source %s (%s) has no S2 edge", tg.ArxivID, s.RefKey, s.Title)
			}
			if _, ok := papers[s.S2PaperID]; !ok {
				t.Errorf("%s: source %s is not among the papers", tg.ArxivID, s.RefKey)
			}
		}
	}
	if splits["train"] != 6 || splits["test"] != 3 || len(cats) < 3 {
		t.Errorf("splits %v, primary categories %v", splits, cats)
	}
	if ar5ivTrain != 1 {
		t.Errorf("%d ar5iv-only train targets, want 1", ar5ivTrain)
	}
	for _, q := range m.Quirks {
		if q.Kind == "abstract_paragraph" {
			paragraph++
		}
	}
	if paragraph != 1 {
		t.Errorf("%d targets with an 'Abstract.' paragraph, want 1", paragraph)
	}
	if ids := demo.TargetIDs(); len(ids) != len(m.Targets) || ids[0] != m.Targets[0].ArxivID {
		t.Errorf("targets.txt lists %v", ids)
	}

	// The contamination case: a train target builds on a test target.
	split := map[string]string{}
	for _, tg := range m.Targets {
		split[tg.ArxivID] = tg.Split
	}
	if len(m.Contamination) != 1 {
		t.Fatalf("contamination cases %+v, want 1", m.Contamination)
	}
	c := m.Contamination[0]
	if split[c.TrainTarget] != "train" || split[c.TestTarget] != "test" {
		t.Errorf("contamination %+v: splits %s and %s", c, split[c.TrainTarget], split[c.TestTarget])
	}
	found := false
	for _, tg := range m.Targets {
		for _, s := range tg.Sources {
			if tg.ArxivID == c.TrainTarget && s.ArxivID == c.TestTarget && s.RefKey == c.RefKey && s.TargetSplit == "test" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("contamination %+v is not an intended source of the train target", c)
	}

	// Shared sources: a train target's source is also a test target's.
	shared := false
	for _, tg := range m.Targets {
		for _, s := range tg.Sources {
			for _, other := range s.SharedWith {
				if tg.Split == "train" && split[other] == "test" {
					shared = true
				}
			}
		}
	}
	if !shared {
		t.Error("no source shared between a train and a test target")
	}
}

// TestS2Imperfections checks that the S2 data is as imperfect as the
// manifest's quirks say.
func TestS2Imperfections(t *testing.T) {
	m := manifest(t)
	byTarget := map[string][]s2Edge{}
	for _, tg := range m.Targets {
		byTarget[tg.ArxivID] = s2References(t, tg.ArxivID)
	}
	kinds := map[string]int{}
	for _, q := range m.Quirks {
		kinds[q.Kind]++
	}
	for _, k := range []string{"paginated", "unresolved", "s2_missing_edge", "s2_extra_edge", "null_abstract", "title_variant", "no_abstract"} {
		if kinds[k] == 0 {
			t.Errorf("no %s quirk", k)
		}
	}
	unresolved, nullAbstract, emptyIntents, influentialSources, influential := 0, 0, 0, 0, 0
	for _, tg := range m.Targets {
		sources := map[string]bool{}
		for _, s := range tg.Sources {
			sources[s.S2PaperID] = true
		}
		for _, e := range byTarget[tg.ArxivID] {
			switch {
			case e.CitedPaper.PaperID == nil:
				unresolved++
				if e.CitedPaper.ExternalIDs != nil || e.CitedPaper.Title == "" {
					t.Errorf("%s: unresolved edge %+v", tg.ArxivID, e.CitedPaper)
				}
				continue
			case e.CitedPaper.Abstract == nil:
				nullAbstract++
			}
			if len(e.Contexts) > 0 && len(e.Intents) == 0 {
				emptyIntents++
			}
			if e.IsInfluential {
				influential++
				if sources[*e.CitedPaper.PaperID] {
					influentialSources++
				}
			}
		}
	}
	if unresolved != 1 || nullAbstract < 3 || emptyIntents < 20 {
		t.Errorf("%d unresolved edges, %d null abstracts, %d edges with contexts but no intents", unresolved, nullAbstract, emptyIntents)
	}
	if influentialSources*10 < influential*8 {
		t.Errorf("isInfluential: %d of %d on sources, want mostly", influentialSources, influential)
	}
}

// TestAtomEntries checks that every arXiv paper has an Atom entry whose
// dates and categories agree with the manifest.
func TestAtomEntries(t *testing.T) {
	m := manifest(t)
	data, err := fs.ReadFile(demo.FS(), "arxiv-api/entries.xml")
	if err != nil {
		t.Fatal(err)
	}
	feed := decodeFeed(t, data)
	entries := map[string]atomEntry{}
	for _, e := range feed.Entries {
		id, err := arxiv.Parse(strings.TrimPrefix(e.ID, "http://arxiv.org/abs/"))
		if err != nil || id.Version == 0 {
			t.Errorf("entry id %q", e.ID)
			continue
		}
		entries[id.Canonical()] = e
	}
	for _, p := range m.Papers {
		if p.ArxivID == "" {
			continue
		}
		e, ok := entries[p.ArxivID]
		if !ok {
			t.Errorf("%s has no Atom entry", p.ArxivID)
			continue
		}
		if !strings.HasPrefix(e.Published, p.Published) || e.Primary.Term == "" || len(e.Categories) == 0 || e.Categories[0].Term != e.Primary.Term {
			t.Errorf("%s: entry published %s, primary %q, categories %v", p.ArxivID, e.Published, e.Primary.Term, e.Categories)
		}
		if !strings.HasSuffix(e.ID, "v"+strconv.Itoa(p.Version)) || e.Summary == "" || len(e.Authors) == 0 {
			t.Errorf("%s: entry %+v", p.ArxivID, e)
		}
	}
	for _, tg := range m.Targets {
		e := entries[tg.ArxivID]
		if e.Primary.Term != tg.PrimaryCategory || !strings.HasPrefix(e.Updated, tg.Updated) {
			t.Errorf("%s: entry primary %s updated %s, manifest %s %s", tg.ArxivID, e.Primary.Term, e.Updated, tg.PrimaryCategory, tg.Updated)
		}
	}
}

type atomFeed struct {
	XMLName      xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	TotalResults int         `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	StartIndex   int         `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
	Entries      []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Updated   string `xml:"http://www.w3.org/2005/Atom updated"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Primary struct {
		Term string `xml:"term,attr"`
	} `xml:"http://arxiv.org/schemas/atom primary_category"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"http://www.w3.org/2005/Atom category"`
	DOI string `xml:"http://arxiv.org/schemas/atom doi"`
}

func decodeFeed(t *testing.T, data []byte) atomFeed {
	t.Helper()
	var f atomFeed
	if err := xml.Unmarshal(data, &f); err != nil {
		t.Fatalf("decode feed: %v\n%s", err, data)
	}
	return f
}
