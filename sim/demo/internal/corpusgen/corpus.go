package corpusgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/sim"
)

// Cutoff is the date from which a target belongs to the test split.
const Cutoff = "2026-01-01"

// The corpus, built once: papers in catalogue order with their pages.
var papers, paperByKey = load()

func load() ([]*Paper, map[string]*Paper) {
	ps := catalogue()
	byKey := map[string]*Paper{}
	for _, p := range ps {
		if byKey[p.Key] != nil {
			panic("duplicate paper key " + p.Key)
		}
		byKey[p.Key] = p
	}
	for _, pages := range []map[string]*Page{targetPages(), sourcePages()} {
		for k, pg := range pages {
			p := byKey[k]
			if p == nil || p.Arxiv == "" {
				panic("page for unknown or non-arXiv paper " + k)
			}
			p.Page = pg
		}
	}
	return ps, byKey
}

// Build renders the whole corpus: file path (slash-separated, relative to
// the corpus directory) to contents.
func Build() (map[string][]byte, error) {
	files := map[string][]byte{}
	tgts := targets()
	quirks := map[string]S2Quirks{}
	for _, t := range tgts {
		quirks[t.Key] = t.S2
	}
	if err := check(tgts); err != nil {
		return nil, err
	}

	// Reference lists first: a record's referenceCount is their length.
	records := map[string]sim.S2Paper{}
	for _, p := range papers {
		records[p.Key] = s2Record(p, 0)
	}
	refs := map[string][]sim.S2Edge{}
	for _, p := range papers {
		if p.Page != nil {
			refs[p.Key] = s2References(p, quirks[p.Key], records)
		}
	}
	var list []sim.S2Paper
	for _, p := range papers {
		n, ok := len(refs[p.Key]), refs[p.Key] != nil
		if !ok {
			n = 12 + corpusID(p.Key)%40 // references of papers outside the corpus
		}
		r := s2Record(p, n)
		records[p.Key] = r
		list = append(list, r)
	}
	// Edges carry the cited paper as it was when the list was built.
	for _, p := range papers {
		if p.Page != nil {
			refs[p.Key] = s2References(p, quirks[p.Key], records)
		}
	}

	for _, p := range papers {
		if p.Page == nil {
			continue
		}
		for _, v := range pageVersions(p) {
			files[pagePathAt(p, v)] = []byte(renderPage(p, v))
		}
		body, err := marshalReferences(refs[p.Key])
		if err != nil {
			return nil, err
		}
		files["s2/references/"+p.Arxiv+".json"] = body
	}
	body, err := marshalLines(list)
	if err != nil {
		return nil, err
	}
	files["s2/papers.json"] = body
	files["arxiv-api/entries.xml"] = []byte(renderFeed(papers))
	for _, prefix := range sim.OAIFormats {
		files["oai/"+prefix+".xml"] = renderOAI(papers, prefix)
	}

	m := buildManifest(tgts, refs)
	body, err = marshal(m)
	if err != nil {
		return nil, err
	}
	files["manifest.json"] = body
	files["targets.txt"] = []byte(targetsTxt(m))
	return files, nil
}

// Write builds the corpus into dir, replacing the files it generates.
func Write(dir string) error {
	files, err := Build()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pagePath is where the page arXiv serves for the versionless ID lies.
func pagePath(p *Paper) string { return pagePathAt(p, len(p.Versions)) }

func pagePathAt(p *Paper, v int) string {
	if p.Page.Ar5ivOnly {
		return "ar5iv/html/" + p.Arxiv + ".html"
	}
	return fmt.Sprintf("arxiv/html/%sv%d.html", p.Arxiv, v)
}

// pageVersions are the versions p's page is served at.
func pageVersions(p *Paper) []int {
	if p.PageVersions == nil || p.Page.Ar5ivOnly {
		return []int{len(p.Versions)}
	}
	return p.PageVersions
}

// renderOAI renders every arXiv paper's record in format prefix (arXiv,
// arXivRaw with its version history, oai_dc) as one ListRecords answer: what
// the OAI-PMH repository serves (its datestamp is the latest version's
// day).
func renderOAI(papers []*Paper, prefix string) []byte {
	var recs []sim.OAIRecord
	for _, p := range papers {
		if p.Arxiv == "" {
			continue
		}
		var dates []time.Time
		for _, v := range p.Versions {
			d, err := time.Parse(time.RFC3339, v)
			if err != nil {
				panic(fmt.Sprintf("%s: version date %q: %v", p.Key, v, err))
			}
			dates = append(dates, d.UTC())
		}
		m := sim.OAIMeta{ID: p.Arxiv, Datestamp: dates[len(dates)-1], VersionDates: dates, Authors: p.Authors,
			Title: p.Title, Abstract: p.Abstract, Categories: p.Cats, Comments: p.Comment, JournalRef: p.JournalRef,
			License: "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"}
		recs = append(recs, m.Record(prefix))
	}
	return sim.OAIListPage(prefix, recs)
}

// marshal writes JSON indented, without HTML escaping, with a final newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// marshalLines writes a JSON array with one compact element per line:
// small, and still one diff line per record.
func marshalLines[T any](list []T) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, v := range list {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimSuffix(e.Bytes(), []byte("\n")))
		if i < len(list)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]")
	return b.Bytes(), nil
}

// marshalReferences writes a whole reference list as the body S2 returns
// for offset 0 when the list fits one page: offset, no next, data.
func marshalReferences(edges []sim.S2Edge) ([]byte, error) {
	data, err := marshalLines(edges)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"offset": 0, "data": `), data...), "}\n"...), nil
}

// check verifies what the content promises: every citation resolves, every
// bibliography entry is cited, papers cite only older papers (a v2 may cite
// what appeared before it), and each source is cited at least twice.
func check(tgts []Target) error {
	for _, p := range papers {
		if p.Arxiv != "" {
			yymm := p.Arxiv[:4]
			v1 := p.Versions[0]
			if v1[2:4]+v1[5:7] != yymm {
				return fmt.Errorf("%s: v1 date %s does not match its id", p.Arxiv, v1)
			}
		}
		if p.Page == nil {
			continue
		}
		count := map[string]int{}
		inBib := map[string]bool{}
		for _, it := range p.Page.Bib {
			inBib[it.Key] = true
			if it.Raw == nil && paperByKey[it.Key] == nil {
				return fmt.Errorf("%s: bibliography entry %q is no paper", p.Key, it.Key)
			}
		}
		var bad error
		forEachSentence(p.Page, func(s string) {
			for _, k := range uniq(citedKeys(s)) {
				if !inBib[k] && bad == nil {
					bad = fmt.Errorf("%s cites %q outside its bibliography", p.Key, k)
				}
				count[k]++
			}
		})
		if bad != nil {
			return bad
		}
		last := p.Versions[len(p.Versions)-1]
		for _, it := range p.Page.Bib {
			if count[it.Key] == 0 {
				return fmt.Errorf("%s: bibliography entry %q is never cited", p.Key, it.Key)
			}
			if q := paperByKey[it.Key]; q != nil && published(q) > last[:10] {
				return fmt.Errorf("%s (last version %s) cites the later %s (%s)", p.Key, last[:10], q.Key, published(q))
			}
		}
		for _, t := range tgts {
			if t.Key != p.Key {
				continue
			}
			for _, s := range t.Sources {
				if count[s.Key] < 2 {
					return fmt.Errorf("%s: source %s is cited in %d sentences, want 2 or more", t.Key, s.Key, count[s.Key])
				}
			}
		}
	}
	return nil
}

// published is a paper's first public date: its arXiv v1, else S2's date
// or year.
func published(p *Paper) string {
	switch {
	case p.Arxiv != "":
		return p.Versions[0][:10]
	case p.PubDate != "":
		return p.PubDate
	}
	return strconv.Itoa(p.Year) + "-01-01"
}

func targetsTxt(m manifest) string {
	var b strings.Builder
	b.WriteString("# Targets of the Groundwork demo corpus (synthetic papers; see manifest.json).\n")
	fmt.Fprintf(&b, "# Test split: arXiv v1 on or after %s.\n", Cutoff)
	for _, t := range m.Targets {
		fmt.Fprintf(&b, "%s  # %s, %s, %s\n", t.ArxivID, t.Split, t.PrimaryCategory, t.Published)
	}
	return b.String()
}

// bibNumber returns the 1-based position of key in p's bibliography.
func bibNumber(p *Paper, key string) int {
	return slices.IndexFunc(p.Page.Bib, func(it BibItem) bool { return it.Key == key }) + 1
}
