package sim

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/groundwork/curate/parse/arxiv"
)

// A Corpus is a literature held in memory: the pages arXiv and ar5iv
// serve, what Semantic Scholar knows (paper records, reference lists,
// withheld lists) and the arXiv API's entries. It is filled one item at a
// time (tests), from files laid out as the services answer (LoadCorpus:
// the demo corpus), or from recorded responses (the shared fixtures). It
// is a Literature, so every world-backed service can serve it. Its
// methods are safe for concurrent use, also while it is served.
type Corpus struct {
	mu      sync.RWMutex
	pages   map[string]map[string][]corpusPage // site -> canonical arXiv id -> pages, by version
	papers  map[string]*corpusPaper            // canonical S2 id -> paper
	entries []Entry
	entryOf map[string]int // canonical arXiv id -> index in entries
	citedBy map[string][]*corpusPaper
	indexed bool // citedBy is up to date
	oai     []corpusRecord
}

type corpusRecord struct {
	rec    OAIRecord
	prefix string // "" for a deleted record: every format lists it
}

type corpusPage struct {
	version int // 0: the latest, number unknown
	body    []byte
}

// corpusPaper is one S2 paper, shared by all its ids.
type corpusPaper struct {
	id     string // paperId
	record object
	edges  []json.RawMessage
	// withheld is set when the publisher elided the reference list.
	withheld *S2OpenAccessPDF
	pageCap  int
	// stub is set for a paper known only through its reference list or
	// an alias.
	stub bool
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus {
	return &Corpus{
		pages:   map[string]map[string][]corpusPage{HTMLArxiv: {}, HTMLAr5iv: {}},
		papers:  map[string]*corpusPaper{},
		entryOf: map[string]int{},
	}
}

// AddPage makes site (HTMLArxiv or HTMLAr5iv) serve body as the page of
// id. A versioned id says which version the page is: arXiv serves it for
// that version, and for the versionless id when it is the highest version
// added; other versions answer 404 (a paper may have a page for several
// versions, each added on its own). Without a version arXiv serves it for
// the versionless id only. ar5iv keeps one version of a paper and serves
// it for any: the last added.
func (c *Corpus) AddPage(site, id string, body []byte) error {
	a, err := arxiv.Parse(id)
	if err != nil {
		return fmt.Errorf("sim: page for %q: %w", id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pages, ok := c.pages[site]
	if !ok {
		return fmt.Errorf("sim: page for %s: no site %q (want %q or %q)", id, site, HTMLArxiv, HTMLAr5iv)
	}
	pg := corpusPage{version: a.Version, body: body}
	list := pages[a.Canonical()]
	i := slices.IndexFunc(list, func(p corpusPage) bool { return p.version == a.Version })
	switch {
	case site == HTMLAr5iv:
		list = []corpusPage{pg}
	case i >= 0:
		list[i] = pg
	default:
		list = append(list, pg)
		slices.SortStableFunc(list, func(x, y corpusPage) int { return x.version - y.version })
	}
	pages[a.Canonical()] = list
	return nil
}

// HTML returns the page site serves for id.
func (c *Corpus) HTML(site string, id arxiv.ID) ([]byte, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	list := c.pages[site][id.Canonical()]
	switch {
	case len(list) == 0:
		return nil, false
	case site == HTMLAr5iv || id.Version == 0:
		return list[len(list)-1].body, true
	}
	for _, pg := range list {
		if pg.version == id.Version {
			return pg.body, true
		}
	}
	return nil, false
}

// AddS2Paper registers a paper record: anything that marshals to a JSON
// object in S2's shape (a recorded body, an S2Paper, a
// record.ScholarPaper, a map).
// It returns the paperId. The paper answers to its paperId, corpusId and
// externalIds (ArXiv, DOI, CorpusId, MAG, ACL, PubMed, PubMedCentral) and
// to ids. A record without paperId gets one derived from ids[0].
// Registering a paper whose paperId or one of ids is known, or that a
// reference list was set for, replaces that paper's record and keeps its
// reference list; an external id moves to the latest paper registered
// with it.
func (c *Corpus) AddS2Paper(record any, ids ...string) (string, error) {
	rec, err := objectOf(record)
	if err != nil {
		return "", fmt.Errorf("sim: S2 paper: %w", err)
	}
	if pid := rec.stringOf("paperId"); pid != "" {
		if !isHex40(pid) {
			return "", fmt.Errorf("sim: S2 paper: paperId %q is not 40 hex digits", pid)
		}
	} else {
		if len(ids) == 0 {
			return "", fmt.Errorf("sim: S2 paper %.80s: no paperId and no id given", rec.encode())
		}
		rec = rec.set("paperId", mustJSON(derivedPaperID(ids[0])))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addLocked(rec, ids).id, nil
}

// addLocked registers rec under its own ids and ids.
func (c *Corpus) addLocked(rec object, ids []string) *corpusPaper {
	c.indexed = false
	pid := rec.stringOf("paperId")
	var p *corpusPaper
	for _, id := range append([]string{pid}, ids...) {
		if old := c.papers[canonicalS2ID(id)]; old != nil {
			p = old
			break
		}
	}
	if p == nil {
		// A stub made for one of the paper's ids becomes this paper.
		for _, id := range recordS2IDs(rec) {
			if old := c.papers[canonicalS2ID(id)]; old != nil && old.stub {
				p = old
				break
			}
		}
	}
	if p == nil {
		p = &corpusPaper{}
	}
	p.record, p.id, p.stub = rec, pid, false
	for _, id := range append(recordS2IDs(rec), ids...) {
		c.papers[canonicalS2ID(id)] = p
	}
	return p
}

// lookupOrStub returns the paper of id, registering a stub (a paperId
// derived from id, a title, and the external id id names) when it is
// unknown.
func (c *Corpus) lookupOrStub(id string) *corpusPaper {
	if p := c.papers[canonicalS2ID(id)]; p != nil {
		return p
	}
	pid := derivedPaperID(id)
	rec := object{
		{"paperId", mustJSON(pid)},
		{"title", mustJSON("Paper " + id)},
		{"url", mustJSON("https://www.semanticscholar.org/paper/" + pid)},
	}
	if x := externalIDsOf(id); x != nil {
		rec = rec.set("externalIds", mustJSON(x))
		if n, ok := x["CorpusId"]; ok {
			rec = rec.set("corpusId", mustJSON(n))
		}
	}
	p := c.addLocked(rec, []string{id})
	p.stub = true
	return p
}

// AliasS2 makes aliases address the paper of id (a stub when id is
// unknown).
func (c *Corpus) AliasS2(id string, aliases ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.lookupOrStub(id)
	for _, a := range aliases {
		c.papers[canonicalS2ID(a)] = p
	}
}

// SetS2References makes edges the reference list of paper id (a stub when
// id is unknown), served in that order. Each edge is a data element of the
// references endpoint (a recorded element, a marshalled S2Edge or
// record.ScholarReference). A citedPaper whose paperId is "" is served with a null
// paperId, as S2 sends unresolved references.
func (c *Corpus) SetS2References(id string, edges []json.RawMessage) error {
	raw := make([]json.RawMessage, len(edges))
	for i, e := range edges {
		o, err := parseObject(e)
		if err != nil {
			return fmt.Errorf("sim: reference %d of %s: %w", i, id, err)
		}
		if cp := o.get("citedPaper"); cp != nil && string(cp) != "null" {
			co, err := parseObject(cp)
			if err != nil {
				return fmt.Errorf("sim: reference %d of %s: citedPaper: %w", i, id, err)
			}
			if co.stringOf("paperId") == "" {
				o = o.set("citedPaper", co.set("paperId", jsonNull).encode())
			}
		}
		raw[i] = o.encode()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexed = false
	p := c.lookupOrStub(id)
	p.edges, p.withheld = raw, nil
	return nil
}

// WithholdS2References makes the reference list of paper id withheld by
// its publisher (a stub when id is unknown): every page answers "data":
// null with pdf as citingPaperInfo.openAccessPdf.
func (c *Corpus) WithholdS2References(id string, pdf S2OpenAccessPDF) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexed = false
	p := c.lookupOrStub(id)
	p.edges, p.withheld = nil, &pdf
}

// SetS2PageCap makes the reference list of paper id come in pages of at
// most n edges whatever limit is asked (0: as asked).
func (c *Corpus) SetS2PageCap(id string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lookupOrStub(id).pageCap = n
}

// S2Paper returns the record of the paper id names. A record without
// referenceCount gets the length of its reference list.
func (c *Corpus) S2Paper(id string) (json.RawMessage, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.papers[canonicalS2ID(id)]
	if p == nil {
		return nil, false
	}
	rec := p.record
	if !rec.has("referenceCount") && p.edges != nil {
		rec = slices.Clone(rec).set("referenceCount", json.RawMessage(strconv.Itoa(len(p.edges))))
	}
	return rec.encode(), true
}

// S2References returns the reference list of the paper id names: empty
// for a paper registered without one.
func (c *Corpus) S2References(id string) (S2List, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := c.papers[canonicalS2ID(id)]
	if p == nil {
		return S2List{}, false
	}
	return S2List{Edges: p.edges, Withheld: p.withheld, PageCap: p.pageCap}, true
}

// S2CitedBy returns the records of the papers whose reference lists cite
// the paper id names, in the order they were registered.
func (c *Corpus) S2CitedBy(id string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.indexed {
		c.indexLocked()
	}
	p := c.papers[canonicalS2ID(id)]
	if p == nil {
		return nil
	}
	var out []json.RawMessage
	for _, q := range c.citedBy[p.id] {
		out = append(out, q.record.encode())
	}
	return out
}

// S2Citing returns the citations of the paper id names: for each paper
// whose reference list cites it (in the order of S2CitedBy), that edge's
// fields and the citing paper's record.
func (c *Corpus) S2Citing(id string) ([]json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.indexed {
		c.indexLocked()
	}
	p := c.papers[canonicalS2ID(id)]
	if p == nil {
		return nil, false
	}
	var out []json.RawMessage
	for _, q := range c.citedBy[p.id] {
		for _, e := range q.edges {
			o, err := parseObject(e)
			if err != nil {
				continue
			}
			co, err := parseObject(o.get("citedPaper"))
			if err != nil || co.stringOf("paperId") == "" || c.papers[canonicalS2ID(co.stringOf("paperId"))] != p {
				continue
			}
			edge := make(object, 0, len(o))
			for _, f := range o {
				if f.key != "citedPaper" {
					edge = append(edge, f)
				}
			}
			out = append(out, edge.set("citingPaper", q.record.encode()).encode())
			break
		}
	}
	return out, true
}

// indexLocked rebuilds citedBy, citing papers in a stable order.
func (c *Corpus) indexLocked() {
	c.citedBy = map[string][]*corpusPaper{}
	seen := map[*corpusPaper]bool{}
	var all []*corpusPaper
	for _, p := range c.papers {
		if !seen[p] {
			seen[p] = true
			all = append(all, p)
		}
	}
	slices.SortFunc(all, func(a, b *corpusPaper) int { return compareStrings(a.id, b.id) })
	for _, q := range all {
		for _, e := range q.edges {
			o, err := parseObject(e)
			if err != nil {
				continue
			}
			co, err := parseObject(o.get("citedPaper"))
			if err != nil {
				continue
			}
			if cited := c.papers[canonicalS2ID(co.stringOf("paperId"))]; cited != nil && co.stringOf("paperId") != "" {
				c.citedBy[cited.id] = append(c.citedBy[cited.id], q)
			}
		}
	}
	c.indexed = true
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AddEntry adds an arXiv API entry: an <entry> element (or its inner
// XML, namespace prefixes as in a feed of the API) from which the id,
// version, dates and categories are read. An entry for a paper already
// there replaces it.
func (c *Corpus) AddEntry(xml string) error {
	e, err := ParseEntry(xml)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.entryOf[e.ID]; ok {
		c.entries[i] = e
		return nil
	}
	c.entryOf[e.ID] = len(c.entries)
	c.entries = append(c.entries, e)
	return nil
}

// ArxivEntry returns the entry of the paper with the versionless id.
func (c *Corpus) ArxivEntry(id string) (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.entryOf[id]
	if !ok {
		return Entry{}, false
	}
	return c.entries[i], true
}

// ArxivEntries returns every entry, in the order added.
func (c *Corpus) ArxivEntries() iter.Seq[Entry] {
	c.mu.RLock()
	entries := slices.Clone(c.entries)
	c.mu.RUnlock()
	return slices.Values(entries)
}

// AddFeed adds every entry of an arXiv API feed.
func (c *Corpus) AddFeed(feed []byte) error {
	entries, err := ParseFeed(feed)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		if i, ok := c.entryOf[e.ID]; ok {
			c.entries[i] = e
			continue
		}
		c.entryOf[e.ID] = len(c.entries)
		c.entries = append(c.entries, e)
	}
	return nil
}

// AddOAIRecord adds an OAI-PMH record in format prefix (see
// OAIMeta.Record; a deleted record is listed in every format).
func (c *Corpus) AddOAIRecord(prefix string, rec OAIRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec.Deleted {
		prefix = ""
	}
	c.oai = append(c.oai, corpusRecord{rec, prefix})
}

// AddOAIPage adds the records of an OAI-PMH ListRecords answer, each kept
// as written (ParseOAIPage).
func (c *Corpus) AddOAIPage(page []byte) error {
	recs, prefixes, err := ParseOAIPage(page)
	if err != nil {
		return err
	}
	for i, r := range recs {
		c.AddOAIRecord(prefixes[i], r)
	}
	return nil
}

// OAIRecords returns the records in format prefix and the deleted ones,
// in the order added.
func (c *Corpus) OAIRecords(prefix string) iter.Seq[OAIRecord] {
	c.mu.RLock()
	var out []OAIRecord
	for _, r := range c.oai {
		if r.prefix == prefix || r.prefix == "" {
			out = append(out, r.rec)
		}
	}
	c.mu.RUnlock()
	return slices.Values(out)
}
