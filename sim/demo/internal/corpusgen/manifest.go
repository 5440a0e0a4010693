package corpusgen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/groundwork/curate/sim"
)

// The manifest's shape. demo.Manifest reads it; a test there decodes it
// with unknown fields disallowed, so the two stay in step.

type manifest struct {
	Note          string          `json:"note"`
	Cutoff        string          `json:"cutoff"`
	Targets       []mTarget       `json:"targets"`
	Papers        []mPaper        `json:"papers"`
	Contamination []mContaminated `json:"contamination"`
	Quirks        []mQuirk        `json:"quirks"`
}

type mTarget struct {
	ArxivID         string    `json:"arxiv_id"`
	Version         int       `json:"version"`
	Published       string    `json:"published"`
	Updated         string    `json:"updated"`
	Split           string    `json:"split"`
	PrimaryCategory string    `json:"primary_category"`
	Categories      []string  `json:"categories"`
	Domain          string    `json:"domain"`
	Title           string    `json:"title"`
	HTML            string    `json:"html"`
	Page            string    `json:"page"`
	S2PaperID       string    `json:"s2_paper_id"`
	S2Edges         int       `json:"s2_edges"`
	S2PageCap       int       `json:"s2_page_cap,omitempty"`
	References      []mRef    `json:"references"`
	Sources         []mSource `json:"sources"`
}

type mRef struct {
	RefKey    string `json:"ref_key"`
	Label     string `json:"label"`
	Title     string `json:"title"`
	ArxivID   string `json:"arxiv_id,omitempty"`
	DOI       string `json:"doi,omitempty"`
	S2PaperID string `json:"s2_paper_id,omitempty"`
	Role      string `json:"role"`
	Mentions  int    `json:"mentions"`
}

type mSource struct {
	RefKey      string   `json:"ref_key"`
	Label       string   `json:"label"`
	Title       string   `json:"title"`
	ArxivID     string   `json:"arxiv_id,omitempty"`
	DOI         string   `json:"doi,omitempty"`
	S2PaperID   string   `json:"s2_paper_id"`
	Labels      []string `json:"labels"`
	Cue         string   `json:"cue"`
	TextLevel   string   `json:"text_level"`
	SharedWith  []string `json:"shared_with,omitempty"`
	TargetSplit string   `json:"target_split,omitempty"`
}

type mPaper struct {
	ArxivID     string `json:"arxiv_id,omitempty"`
	Version     int    `json:"version,omitempty"`
	Published   string `json:"published,omitempty"`
	DOI         string `json:"doi,omitempty"`
	S2PaperID   string `json:"s2_paper_id"`
	CorpusID    int    `json:"corpus_id"`
	Title       string `json:"title"`
	Role        string `json:"role"`
	HTML        string `json:"html,omitempty"`
	Page        string `json:"page,omitempty"`
	HasAbstract bool   `json:"has_abstract"`
}

type mContaminated struct {
	TrainTarget string `json:"train_target"`
	TestTarget  string `json:"test_target"`
	RefKey      string `json:"ref_key"`
	As          string `json:"as"`
	Note        string `json:"note"`
}

type mQuirk struct {
	Target string `json:"target,omitempty"`
	Kind   string `json:"kind"`
	RefKey string `json:"ref_key,omitempty"`
	Paper  string `json:"paper,omitempty"`
	Detail string `json:"detail"`
}

const manifestNote = "Synthetic demo corpus: every paper, author, venue and DOI (10.5555/...) is invented. " +
	"Targets dated on or after the cutoff form the test split. Sources are what each target was written to build on; " +
	"quirks list the deliberate imperfections of the pages and of the Semantic Scholar data."

var reCite = regexp.MustCompile(`\{\{([^}]*)\}\}`)

func buildManifest(tgts []Target, refs map[string][]sim.S2Edge) manifest {
	m := manifest{Note: manifestNote, Cutoff: Cutoff, Contamination: []mContaminated{}, Quirks: []mQuirk{}}
	isTarget := map[string]*Paper{}
	sourceOf := map[string][]string{} // paper key -> targets' arXiv ids having it as a source
	for _, t := range tgts {
		isTarget[t.Key] = paperByKey[t.Key]
		for _, s := range t.Sources {
			sourceOf[s.Key] = append(sourceOf[s.Key], paperByKey[t.Key].Arxiv)
		}
	}
	split := func(p *Paper) string {
		if p.Versions[0][:10] >= Cutoff {
			return "test"
		}
		return "train"
	}
	for _, t := range tgts {
		p := paperByKey[t.Key]
		mt := mTarget{
			ArxivID: p.Arxiv, Version: len(p.Versions),
			Published: p.Versions[0][:10], Updated: p.Versions[len(p.Versions)-1][:10],
			Split: split(p), PrimaryCategory: p.Primary, Categories: p.Cats, Domain: t.Domain,
			Title: p.Title, HTML: htmlSite(p), Page: pagePath(p),
			S2PaperID: paperID(p.Key), S2Edges: len(refs[p.Key]), S2PageCap: t.S2.PageCap,
		}
		mentions := map[string]int{}
		forEachSentence(p.Page, func(s string) {
			for _, k := range uniq(citedKeys(s)) {
				mentions[k]++
			}
		})
		isSource := map[string]Source{}
		for _, s := range t.Sources {
			isSource[s.Key] = s
		}
		for i, it := range p.Page.Bib {
			r := mRef{RefKey: fmt.Sprintf("bib.bib%d", i+1), Label: fmt.Sprintf("[%d]", i+1), Role: "other", Mentions: mentions[it.Key]}
			if _, ok := isSource[it.Key]; ok {
				r.Role = "source"
			}
			if q := paperByKey[it.Key]; q != nil {
				r.Title = bibTitle(it, q)
				r.ArxivID = q.Arxiv
				if !it.NoDOI {
					r.DOI = q.DOI
				}
				if !slices.Contains(t.S2.Missing, it.Key) {
					r.S2PaperID = paperID(q.Key)
				}
			} else {
				r.Title = strings.TrimSuffix(it.Raw[1], ".")
			}
			mt.References = append(mt.References, r)
		}
		for _, s := range t.Sources {
			q := paperByKey[s.Key]
			n := bibNumber(p, s.Key)
			ms := mSource{
				RefKey: fmt.Sprintf("bib.bib%d", n), Label: fmt.Sprintf("[%d]", n),
				Title: bibTitle(p.Page.Bib[n-1], q), ArxivID: q.Arxiv, DOI: q.DOI, S2PaperID: paperID(q.Key),
				Labels: s.Labels, Cue: renderCue(p, s.Cue), TextLevel: "abstract",
			}
			if q.Page != nil {
				ms.TextLevel = "full_text"
			}
			for _, other := range sourceOf[s.Key] {
				if other != p.Arxiv {
					ms.SharedWith = append(ms.SharedWith, other)
				}
			}
			if isTarget[s.Key] != nil {
				ms.TargetSplit = split(q)
				if ms.TargetSplit == "test" && mt.Split == "train" {
					m.Contamination = append(m.Contamination, mContaminated{
						TrainTarget: p.Arxiv, TestTarget: q.Arxiv, RefKey: ms.RefKey, As: "source",
						Note: fmt.Sprintf("train target %s (v%d, updated %s) builds on test target %s; "+
							"the dataset stage must find the test target among this training instance's sources and apply its contamination policy",
							p.Arxiv, len(p.Versions), mt.Updated, q.Arxiv),
					})
				}
			}
			mt.Sources = append(mt.Sources, ms)
		}
		m.Targets = append(m.Targets, mt)
		m.Quirks = append(m.Quirks, targetQuirks(t, p, mt)...)
	}
	for _, p := range papers {
		mp := mPaper{
			ArxivID: p.Arxiv, DOI: p.DOI, S2PaperID: paperID(p.Key), CorpusID: corpusID(p.Key),
			Title: p.Title, Role: "cited", HasAbstract: !p.NoAbstract,
		}
		if p.Arxiv != "" {
			mp.Version = len(p.Versions)
			mp.Published = p.Versions[0][:10]
		}
		switch {
		case isTarget[p.Key] != nil:
			mp.Role = "target"
		case sourceOf[p.Key] != nil:
			mp.Role = "source"
		}
		if p.Page != nil {
			mp.HTML, mp.Page = htmlSite(p), pagePath(p)
		}
		if p.NoAbstract {
			m.Quirks = append(m.Quirks, mQuirk{Kind: "no_abstract", Paper: paperRef(p),
				Detail: "S2 has no abstract for this paper anywhere (publisher elided; the openAccessPdf disclaimer says so) and it has no arXiv page"})
		}
		if p.Page != nil && p.Page.Ar5ivOnly && isTarget[p.Key] == nil {
			m.Quirks = append(m.Quirks, mQuirk{Kind: "ar5iv_only", Paper: p.Arxiv, Detail: "arXiv answers 404; ar5iv serves the page"})
		}
		m.Papers = append(m.Papers, mp)
	}
	return m
}

func htmlSite(p *Paper) string {
	if p.Page.Ar5ivOnly {
		return "ar5iv"
	}
	return "arxiv"
}

func paperRef(p *Paper) string {
	switch {
	case p.Arxiv != "":
		return p.Arxiv
	case p.DOI != "":
		return "DOI:" + p.DOI
	}
	return p.Title
}

func bibTitle(it BibItem, p *Paper) string {
	if it.Title != "" {
		return it.Title
	}
	return p.Title
}

// renderCue replaces {{key}} in a cue with the label the page prints.
func renderCue(p *Paper, cue string) string {
	return reCite.ReplaceAllStringFunc(cue, func(s string) string {
		return fmt.Sprintf("[%d]", bibNumber(p, s[2:len(s)-2]))
	})
}

func targetQuirks(t Target, p *Paper, mt mTarget) []mQuirk {
	var out []mQuirk
	add := func(kind, key, detail string) {
		q := mQuirk{Target: p.Arxiv, Kind: kind, Detail: detail}
		if key != "" {
			if n := bibNumber(p, key); n > 0 {
				q.RefKey = fmt.Sprintf("bib.bib%d", n)
			}
			if c := paperByKey[key]; c != nil {
				q.Paper = paperRef(c)
			}
		}
		out = append(out, q)
	}
	if p.Page.Ar5ivOnly {
		add("ar5iv_only", "", "arXiv answers 404 for the page; ar5iv serves an older-style page with an ar5iv-severity-warning footer")
	}
	if p.Page.AbstractPara {
		add("abstract_paragraph", "", "no div.ltx_abstract: the abstract is an ltx_para starting with a bold 'Abstract.'")
	}
	if p.Page.FullURLCites {
		add("full_url_cites", "", "citation links are absolute (https://arxiv.org/html/ID#bib.bibN)")
	}
	if len(p.Versions) > 1 {
		add("version", "", fmt.Sprintf("the served page is v%d (%s); v1 (%s) decides the split; other versions answer 404",
			len(p.Versions), mt.Updated, mt.Published))
	}
	// The knowledge cut: what the target's sources were at its v1.
	for _, src := range t.Sources {
		c := paperByKey[src.Key]
		if c == nil || c.Arxiv == "" {
			continue
		}
		switch v1 := p.Versions[0]; {
		case c.Versions[0] > v1:
			add("first_published_after_cutoff", src.Key, fmt.Sprintf("a source first published (%s) after the target's v1 (%s), cited by its v%d: never a source under the knowledge cut",
				c.Versions[0][:10], v1[:10], len(p.Versions)))
		case c.Versions[len(c.Versions)-1] > v1:
			pinned := 1
			for i, d := range c.Versions {
				if d <= v1 {
					pinned = i + 1
				}
			}
			add("revised_after_cutoff", src.Key, fmt.Sprintf("a source revised (v%d, %s) after the target's v1 (%s): read at v%d, whose page arXiv serves at html/%sv%d",
				len(c.Versions), c.Versions[len(c.Versions)-1][:10], v1[:10], pinned, c.Arxiv, pinned))
		}
	}
	q := t.S2
	if q.PageCap > 0 {
		add("paginated", "", fmt.Sprintf("S2 returns at most %d edges per page for this paper, so its %d edges span %d pages whatever limit is asked",
			q.PageCap, mt.S2Edges, (mt.S2Edges+q.PageCap-1)/q.PageCap))
	}
	for _, k := range q.Missing {
		add("s2_missing_edge", k, "in the bibliography, but S2 has no edge for it")
	}
	for _, k := range q.Extra {
		add("s2_extra_edge", k, "S2 lists an edge to this paper, but the bibliography has no such entry")
	}
	for _, k := range sortedKeys(q.Unresolved) {
		add("unresolved", k, fmt.Sprintf("S2 edge with paperId null and title %q", q.Unresolved[k].Title))
	}
	for _, k := range q.NullAbstract {
		add("null_abstract", k, "citedPaper.abstract is null in the reference list; /paper and /paper/batch have it")
	}
	for _, k := range q.NoContexts {
		add("no_contexts", k, "S2 found no citation context for this edge")
	}
	for _, it := range p.Page.Bib {
		c := paperByKey[it.Key]
		if c == nil || slices.Contains(q.Missing, it.Key) {
			continue
		}
		s2Title := c.Title
		if c.S2Title != "" {
			s2Title = c.S2Title
		}
		if bt := bibTitle(it, c); bt != s2Title {
			add("title_variant", it.Key, fmt.Sprintf("bibliography %q, S2 %q", bt, s2Title))
		}
	}
	for _, s := range t.Sources {
		if !slices.Contains(q.Influential, s.Key) {
			add("not_influential", s.Key, "an intended source that S2 marks isInfluential false")
		}
	}
	for _, k := range q.Influential {
		if !slices.ContainsFunc(t.Sources, func(s Source) bool { return s.Key == k }) {
			add("influential_other", k, "S2 marks isInfluential true on a reference that is not an intended source")
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
