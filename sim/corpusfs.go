package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// LoadCorpus reads a corpus stored as the services would answer:
//
//	arxiv/html/IDvN.html    pages arxiv.org/html serves (old-style ids with
//	                        "_" for "/", as arxiv.ID.FileName writes them)
//	ar5iv/html/ID.html      pages ar5iv.labs.arxiv.org serves
//	s2/papers.json          an array of Semantic Scholar paper records
//	s2/references/ID.json   {"data": [...]}: the whole reference list of
//	                        the paper ARXIV:ID, which papers.json holds
//	arxiv-api/entries.xml   an arXiv API feed of every paper's entry
//	oai/NAME.xml            OAI-PMH ListRecords answers (each record kept
//	                        as written, in the format its metadata is in)
//
// Each part may be absent, not all of them.
func LoadCorpus(fsys fs.FS) (*Corpus, error) {
	c := NewCorpus()
	found := false
	for _, site := range []string{HTMLArxiv, HTMLAr5iv} {
		names, err := fs.Glob(fsys, site+"/html/*.html")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			found = true
			body, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil, fmt.Errorf("sim: corpus: %w", err)
			}
			id := strings.ReplaceAll(strings.TrimSuffix(path.Base(name), ".html"), "_", "/")
			if err := c.AddPage(site, id, body); err != nil {
				return nil, fmt.Errorf("sim: corpus %s: %w", name, err)
			}
		}
	}
	if data, err := fs.ReadFile(fsys, "s2/papers.json"); err == nil {
		found = true
		var papers []json.RawMessage
		if err := json.Unmarshal(data, &papers); err != nil {
			return nil, fmt.Errorf("sim: corpus s2/papers.json: %w", err)
		}
		for i, p := range papers {
			if _, err := c.AddS2Paper(p); err != nil {
				return nil, fmt.Errorf("sim: corpus s2/papers.json record %d: %w", i, err)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sim: corpus: %w", err)
	}
	names, err := fs.Glob(fsys, "s2/references/*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		found = true
		id := "ARXIV:" + strings.ReplaceAll(strings.TrimSuffix(path.Base(name), ".json"), "_", "/")
		if _, ok := c.S2Paper(id); !ok {
			return nil, fmt.Errorf("sim: corpus %s: no paper record for %s in s2/papers.json", name, id)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("sim: corpus: %w", err)
		}
		var body struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, fmt.Errorf("sim: corpus %s: %w", name, err)
		}
		if err := c.SetS2References(id, body.Data); err != nil {
			return nil, fmt.Errorf("sim: corpus %s: %w", name, err)
		}
	}
	if data, err := fs.ReadFile(fsys, "arxiv-api/entries.xml"); err == nil {
		found = true
		if err := c.AddFeed(data); err != nil {
			return nil, fmt.Errorf("sim: corpus arxiv-api/entries.xml: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sim: corpus: %w", err)
	}
	pages, err := fs.Glob(fsys, "oai/*.xml")
	if err != nil {
		return nil, err
	}
	for _, name := range pages {
		found = true
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("sim: corpus: %w", err)
		}
		if err := c.AddOAIPage(data); err != nil {
			return nil, fmt.Errorf("sim: corpus %s: %w", name, err)
		}
	}
	if !found {
		return nil, errors.New("sim: corpus: none of arxiv/html, ar5iv/html, s2/, arxiv-api/entries.xml or oai/ found")
	}
	return c, nil
}
