package simtest

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/groundwork/curate/sim"
)

// Synth shapes a synthetic reference list. The zero value makes every
// edge resolved with an abstract.
type Synth struct {
	// Seed keeps the cited papers of different lists apart; the same seed
	// gives the same list.
	Seed string
	// Unresolved makes every Unresolved-th edge (the 1-based index a
	// multiple of it) unresolved, as S2 sends a bibliography entry it
	// could not match: every field null but a raw fragment as title, a
	// venue and a year. 0: none.
	Unresolved int
	// NullAbstract gives every NullAbstract-th edge a null abstract under
	// citedPaper, while the paper's own record keeps one, as S2 serves
	// /paper/batch. 0: none.
	NullAbstract int
}

// SyntheticReferences returns n reference edges in the real shape and the
// records of their resolved cited papers (for /paper and /paper/batch).
//
// Edge i (from 0) cites a paper with a 40-hex paperId and a CorpusId;
// i%3 == 0 has an ArXiv id, i%3 == 1 a DOI, i%3 == 2 neither. Even edges
// carry a citation context, every fourth edge an intent, every eleventh is
// influential; i%5 == 3 has a null publicationDate with the year set, odd
// ones a null openAccessPdf. o adds unresolved edges and null abstracts.
func SyntheticReferences(n int, o Synth) (edges, cited []json.RawMessage) {
	for i := range n {
		e, p := synthetic(i, o)
		b, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		edges = append(edges, b)
		if p != nil {
			if b, err = json.Marshal(p); err != nil {
				panic(err)
			}
			cited = append(cited, b)
		}
	}
	return edges, cited
}

// AddSyntheticReferences makes a synthetic list of n edges (see
// SyntheticReferences) the reference list of paper id in c and registers
// the cited papers; it returns the edges. The seed defaults to id.
func AddSyntheticReferences(tb testing.TB, c *sim.Corpus, id string, n int, o Synth) []json.RawMessage {
	tb.Helper()
	if o.Seed == "" {
		o.Seed = id
	}
	edges, cited := SyntheticReferences(n, o)
	for _, p := range cited {
		if _, err := c.AddS2Paper(p); err != nil {
			tb.Fatal(err)
		}
	}
	if err := c.SetS2References(id, edges); err != nil {
		tb.Fatal(err)
	}
	return edges
}

// synthetic returns edge i and, when it is resolved, the cited paper's own
// record.
func synthetic(i int, o Synth) (sim.S2Edge, *sim.S2Paper) {
	sum := sha1.Sum(fmt.Appendf(nil, "simtest-synth:%s:%d", o.Seed, i))
	h := binary.BigEndian.Uint32(sum[:4])
	year := 2010 + i%15
	e := sim.S2Edge{Contexts: []string{}, Intents: []string{}, ContextsWithIntent: []sim.S2Context{}}
	if o.Unresolved > 0 && (i+1)%o.Unresolved == 0 {
		e.CitedPaper = sim.S2Paper{
			Title:   fmt.Sprintf("J Doe %d", i),
			Venue:   fmt.Sprintf("Unpublished manuscript, reference %d", i),
			Year:    &year,
			Authors: []sim.S2Author{},
		}
		return e, nil
	}

	pid := hex.EncodeToString(sum[:])
	corpus := int64(h%300_000_000) + 1
	url := "https://www.semanticscholar.org/paper/" + pid
	abstract := fmt.Sprintf("We study problem %d of the %s list and report what we find.", i, o.Seed)
	x := &sim.S2ExternalIDs{CorpusID: corpus}
	switch i % 3 {
	case 0:
		// A month of the seed's own and the index: unique within a list.
		seed := sha1.Sum([]byte(o.Seed))
		m := int(binary.BigEndian.Uint16(seed[:2])) % 120
		x.ArXiv = fmt.Sprintf("%02d%02d.%05d", 15+m/12, 1+m%12, i%100000)
		x.DOI = "10.48550/arXiv." + x.ArXiv
	case 1:
		x.DOI = fmt.Sprintf("10.5555/simtest.%s.%d", pid[:8], i)
		x.MAG = fmt.Sprint(2000000000 + h%100000000)
	}
	p := sim.S2Paper{
		PaperID:        &pid,
		ExternalIDs:    x,
		CorpusID:       &corpus,
		URL:            &url,
		Title:          fmt.Sprintf("Synthetic Study %d of %s", i, o.Seed),
		Abstract:       &abstract,
		Venue:          []string{"arXiv.org", "Neural Information Processing Systems", "Journal of Synthetic Results"}[i%3],
		Year:           &year,
		ReferenceCount: ptr(10 + i%40),
		CitationCount:  ptr(int(h % 5000)),
		IsOpenAccess:   ptr(false),
		Authors: []sim.S2Author{
			{AuthorID: ptr(fmt.Sprint(1000 + h%900000)), Name: fmt.Sprintf("Ada Author%d", i)},
			{Name: "B. Unlinked"},
		},
	}
	if i%5 != 3 {
		d := fmt.Sprintf("%d-%02d-%02d", year, 1+i%12, 1+i%28)
		p.PublicationDate = &d
	}
	if i%2 == 0 {
		p.IsOpenAccess = ptr(true)
		p.OpenAccessPDF = &sim.S2OpenAccessPDF{URL: "https://example.org/pdf/" + pid[:12] + ".pdf", Status: ptr("GREEN")}
		ctx := fmt.Sprintf("As shown in prior work [%d], the effect holds.", i+1)
		e.Contexts = []string{ctx}
		cwi := sim.S2Context{Context: ctx, Intents: []string{}}
		if i%4 == 0 {
			e.Intents = []string{"methodology"}
			cwi.Intents = []string{"methodology"}
		}
		e.ContextsWithIntent = []sim.S2Context{cwi}
	}
	e.IsInfluential = i%11 == 0
	e.CitedPaper = p
	if o.NullAbstract > 0 && (i+1)%o.NullAbstract == 0 {
		e.CitedPaper.Abstract = nil
	}
	return e, &p
}

func ptr[T any](v T) *T { return &v }
