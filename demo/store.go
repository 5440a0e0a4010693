package demo

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/arxiv"
)

// store is the corpus loaded into the indexes the handlers need. It is
// built once and only read afterwards.
type store struct {
	// HTML pages by versionless arXiv id.
	arxivPages map[string]htmlPage
	ar5ivPages map[string]htmlPage

	// Semantic Scholar.
	papers   []object       // /paper records
	paperIdx map[string]int // normalized paper id -> index in papers
	refs     map[int][]object
	pageCap  map[int]int   // most edges per references page, by paper
	citedBy  map[int][]int // paper -> papers whose reference lists hold it

	// arXiv API entries, in corpus order.
	entries []entry
	entryOf map[string]int // versionless id -> index
}

type htmlPage struct {
	version int
	body    []byte
}

var loadStore = sync.OnceValues(func() (*store, error) { return newStore(FS()) })

// mustStore returns the loaded corpus. The corpus is embedded and checked
// by the package's tests, so failing to load it is a build defect.
func mustStore() *store {
	s, err := loadStore()
	if err != nil {
		panic("demo: " + err.Error())
	}
	return s
}

func newStore(fsys fs.FS) (*store, error) {
	s := &store{
		arxivPages: map[string]htmlPage{},
		ar5ivPages: map[string]htmlPage{},
		paperIdx:   map[string]int{},
		refs:       map[int][]object{},
		pageCap:    map[int]int{},
		citedBy:    map[int][]int{},
		entryOf:    map[string]int{},
	}
	if err := s.loadPages(fsys, "arxiv/html", s.arxivPages); err != nil {
		return nil, err
	}
	if err := s.loadPages(fsys, "ar5iv/html", s.ar5ivPages); err != nil {
		return nil, err
	}
	if err := s.loadS2(fsys); err != nil {
		return nil, err
	}
	if err := s.loadEntries(fsys); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *store) loadPages(fsys fs.FS, dir string, into map[string]htmlPage) error {
	names, err := fs.Glob(fsys, dir+"/*.html")
	if err != nil {
		return err
	}
	for _, name := range names {
		id, err := arxiv.Parse(strings.TrimSuffix(path.Base(name), ".html"))
		if err != nil {
			return fmt.Errorf("page %s: %w", name, err)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		into[id.Canonical()] = htmlPage{version: id.Version, body: body}
	}
	return nil
}

func (s *store) loadS2(fsys fs.FS) error {
	data, err := fs.ReadFile(fsys, "s2/papers.json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &s.papers); err != nil {
		return fmt.Errorf("s2/papers.json: %w", err)
	}
	for i, p := range s.papers {
		var rec struct {
			PaperID     string `json:"paperId"`
			CorpusID    int64  `json:"corpusId"`
			ExternalIDs struct {
				ArXiv string `json:"ArXiv"`
				DOI   string `json:"DOI"`
			} `json:"externalIds"`
		}
		if err := json.Unmarshal(p.raw(), &rec); err != nil {
			return fmt.Errorf("s2/papers.json record %d: %w", i, err)
		}
		keys := []string{"hex:" + strings.ToLower(rec.PaperID), fmt.Sprintf("corpus:%d", rec.CorpusID)}
		if rec.ExternalIDs.ArXiv != "" {
			keys = append(keys, "arxiv:"+rec.ExternalIDs.ArXiv)
		}
		if rec.ExternalIDs.DOI != "" {
			keys = append(keys, "doi:"+strings.ToLower(rec.ExternalIDs.DOI))
		}
		for _, k := range keys {
			if _, dup := s.paperIdx[k]; dup {
				return fmt.Errorf("s2/papers.json: two papers with id %s", k)
			}
			s.paperIdx[k] = i
		}
	}
	names, err := fs.Glob(fsys, "s2/references/*.json")
	if err != nil {
		return err
	}
	for _, name := range names {
		id := strings.TrimSuffix(path.Base(name), ".json")
		i, ok := s.paperIdx["arxiv:"+id]
		if !ok {
			return fmt.Errorf("%s: no paper record for %s", name, id)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		var body struct {
			Data []object `json:"data"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.refs[i] = body.Data
		for _, e := range body.Data {
			var edge struct {
				CitedPaper struct {
					PaperID *string `json:"paperId"`
				} `json:"citedPaper"`
			}
			if err := json.Unmarshal(e.raw(), &edge); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if edge.CitedPaper.PaperID != nil {
				if j, ok := s.paperIdx["hex:"+*edge.CitedPaper.PaperID]; ok {
					s.citedBy[j] = append(s.citedBy[j], i)
				}
			}
		}
	}
	m, err := readManifest(fsys)
	if err != nil {
		return err
	}
	for _, t := range m.Targets {
		if t.S2PageCap > 0 {
			s.pageCap[s.paperIdx["arxiv:"+t.ArxivID]] = t.S2PageCap
		}
	}
	return nil
}

func readManifest(fsys fs.FS) (*Manifest, error) {
	data, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	return &m, nil
}

// entry is one Atom entry of the arXiv API, kept as its XML.
type entry struct {
	id        string // versionless
	version   int
	published time.Time
	updated   time.Time
	cats      []string
	xml       string // the inner XML of <entry>, prefixes as in the corpus feed
}

func (s *store) loadEntries(fsys fs.FS) error {
	data, err := fs.ReadFile(fsys, "arxiv-api/entries.xml")
	if err != nil {
		return err
	}
	var feed struct {
		Entries []struct {
			ID         string `xml:"http://www.w3.org/2005/Atom id"`
			Published  string `xml:"http://www.w3.org/2005/Atom published"`
			Updated    string `xml:"http://www.w3.org/2005/Atom updated"`
			Categories []struct {
				Term string `xml:"term,attr"`
			} `xml:"http://www.w3.org/2005/Atom category"`
			Inner string `xml:",innerxml"`
		} `xml:"http://www.w3.org/2005/Atom entry"`
	}
	if err := xml.Unmarshal(data, &feed); err != nil {
		return fmt.Errorf("arxiv-api/entries.xml: %w", err)
	}
	for _, e := range feed.Entries {
		id, err := arxiv.Parse(strings.TrimPrefix(e.ID, "http://arxiv.org/abs/"))
		if err != nil {
			return fmt.Errorf("arxiv-api/entries.xml: entry %s: %w", e.ID, err)
		}
		pub, err1 := time.Parse(time.RFC3339, e.Published)
		upd, err2 := time.Parse(time.RFC3339, e.Updated)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("arxiv-api/entries.xml: entry %s: %w", e.ID, err)
		}
		en := entry{id: id.Canonical(), version: id.Version, published: pub, updated: upd, xml: e.Inner}
		for _, c := range e.Categories {
			en.cats = append(en.cats, c.Term)
		}
		s.entryOf[en.id] = len(s.entries)
		s.entries = append(s.entries, en)
	}
	return nil
}

// object is a JSON object that keeps its keys in their stored order, so
// the server answers with S2's field order.
type object []field

type field struct {
	key string
	val json.RawMessage
}

func (o *object) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return fmt.Errorf("want a JSON object, got %v", t)
	}
	*o = (*o)[:0]
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, field{key: t.(string), val: v})
	}
	_, err = dec.Token()
	return err
}

// get returns the value of key, or nil.
func (o object) get(key string) json.RawMessage {
	for _, f := range o {
		if f.key == key {
			return f.val
		}
	}
	return nil
}

// raw encodes the whole object.
func (o object) raw() []byte {
	return o.pick(func(string) bool { return true }, nil)
}

// pick encodes the fields keep accepts, in stored order, then the extra
// fields in the order given.
func (o object) pick(keep func(string) bool, extra []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	write := func(f field) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.val)
	}
	for _, f := range o {
		if keep(f.key) {
			write(f)
		}
	}
	for _, f := range extra {
		write(f)
	}
	b.WriteByte('}')
	return b.Bytes()
}
