package oapdf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/record"
)

func TestACLAnthologyPDF(t *testing.T) {
	for id, want := range map[string]string{
		"P19-1285":               "https://aclanthology.org/P19-1285.pdf",
		"W18-5041":               "https://aclanthology.org/W18-5041.pdf",
		" D17-1230 ":             "https://aclanthology.org/D17-1230.pdf",
		"2020.acl-main.1":        "https://aclanthology.org/2020.acl-main.1.pdf",
		"2023.findings-emnlp.12": "https://aclanthology.org/2023.findings-emnlp.12.pdf",
		"":                       "",
		"P19-1285.pdf":           "",
		"../../etc/passwd":       "",
		"P19-1285/../x":          "",
		"p19-1285":               "",
		"2020.acl main.1":        "",
		"https://evil.org/x":     "",
	} {
		got, ok := ACLAnthologyPDF(id)
		if got != want || ok != (want != "") {
			t.Errorf("ACLAnthologyPDF(%q) = %q, %v; want %q", id, got, ok, want)
		}
	}
}

func TestCandidates(t *testing.T) {
	yes := func(acl string, oa *record.ScholarPDF) *record.ScholarPaper {
		return &record.ScholarPaper{ExternalIDs: &record.ScholarIDs{ACL: acl}, OpenAccessPDF: oa}
	}
	cases := []struct {
		name string
		p    *record.ScholarPaper
		want []Candidate
	}{
		{"nil", nil, nil},
		{"nothing", &record.ScholarPaper{}, nil},
		{"closed", yes("", &record.ScholarPDF{URL: "https://x.org/a.pdf", Status: "CLOSED"}), nil},
		{"empty url (S2's 2025 shape)", yes("", &record.ScholarPDF{URL: ""}), nil},
		{"s2 only", yes("", &record.ScholarPDF{URL: "https://arxiv.org/pdf/1706.03762", Status: "GREEN", License: "arXiv"}),
			[]Candidate{{URL: "https://arxiv.org/pdf/1706.03762", Origin: OriginS2, Status: "GREEN", License: "arXiv"}}},
		{"acl only", yes("P19-1285", nil), []Candidate{{URL: "https://aclanthology.org/P19-1285.pdf", Origin: OriginACL}}},
		{"acl and its aclweb copy are one", yes("D17-1230", &record.ScholarPDF{URL: "https://www.aclweb.org/anthology/D17-1230.pdf", Status: "HYBRID", License: "CCBY"}),
			[]Candidate{{URL: "https://aclanthology.org/D17-1230.pdf", Origin: OriginACL, Status: "HYBRID", License: "CCBY"}}},
		{"acl then another copy", yes("N06-1015", &record.ScholarPDF{URL: "https://dl.acm.org/doi/pdf/10.3115/1220835.1220850"}),
			[]Candidate{{URL: "https://aclanthology.org/N06-1015.pdf", Origin: OriginACL}, {URL: "https://dl.acm.org/doi/pdf/10.3115/1220835.1220850", Origin: OriginS2}}},
		{"acl and its copy at the default port are one", yes("D17-1230", &record.ScholarPDF{URL: "https://aclanthology.org:443/D17-1230.pdf", Status: "HYBRID"}),
			[]Candidate{{URL: "https://aclanthology.org/D17-1230.pdf", Origin: OriginACL, Status: "HYBRID"}}},
		{"acl and a copy at another port are two", yes("D17-1230", &record.ScholarPDF{URL: "https://aclanthology.org:8443/D17-1230.pdf"}),
			[]Candidate{{URL: "https://aclanthology.org/D17-1230.pdf", Origin: OriginACL}, {URL: "https://aclanthology.org:8443/D17-1230.pdf", Origin: OriginS2}}},
		{"a bad acl id is ignored", yes("not-an-id", nil), nil},
	}
	for _, c := range cases {
		if got := Candidates(c.p); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// TestCandidatesFromRecordedS2 derives candidates from the real recorded
// Semantic Scholar answers, decoded with the s2 package's types, and
// checks them against a generic JSON reading of the same files.
func TestCandidatesFromRecordedS2(t *testing.T) {
	dir := fixtures.Dir(t, "s2")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	f, err := New(Config{UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	papers, withACL, withOA, allowed, total := 0, 0, 0, 0, 0
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range paperObjects(data) {
			var p record.ScholarPaper
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: %v", filepath.Base(name), err)
			}
			var generic map[string]any
			json.Unmarshal(raw, &generic)
			papers++
			cands := Candidates(&p)
			total += len(cands)
			acl, _ := nested(generic, "externalIds", "ACL").(string)
			oaURL, _ := nested(generic, "openAccessPdf", "url").(string)
			if acl != "" {
				withACL++
				if len(cands) == 0 || cands[0].Origin != OriginACL || cands[0].URL != "https://aclanthology.org/"+acl+".pdf" {
					t.Errorf("%s: paper with ACL id %s: candidates %+v", filepath.Base(name), acl, cands)
				}
			}
			if oaURL != "" {
				withOA++
				found := false
				for _, c := range cands {
					found = found || c.URL == oaURL || c.Origin == OriginACL && strings.Contains(oaURL, acl)
				}
				if !found {
					t.Errorf("%s: openAccessPdf %s is no candidate: %+v", filepath.Base(name), oaURL, cands)
				}
			}
			if acl == "" && oaURL == "" && len(cands) > 0 {
				t.Errorf("%s: candidates without ACL id or open-access url: %+v", filepath.Base(name), cands)
			}
			for _, c := range cands {
				if f.Check(c.URL) == nil {
					allowed++
				}
			}
		}
	}
	if withACL == 0 || withOA == 0 {
		t.Fatalf("the recorded answers have %d papers with an ACL id and %d with an open-access url; expected some of each", withACL, withOA)
	}
	t.Logf("%d papers: %d with an ACL id, %d with an open-access url; %d candidates, %d on the default allow-list", papers, withACL, withOA, total, allowed)
}

// paperObjects returns the paper objects of a recorded answer: a paper,
// the elements of a batch, the cited or citing papers of a page or item.
func paperObjects(data []byte) []json.RawMessage {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []json.RawMessage
	add := func(x any) {
		if m, ok := x.(map[string]any); ok && m["paperId"] != nil || ok && m["externalIds"] != nil {
			b, _ := json.Marshal(x)
			out = append(out, b)
		}
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			add(e)
		}
	case map[string]any:
		if data, ok := x["data"].([]any); ok {
			for _, e := range data {
				if m, ok := e.(map[string]any); ok {
					add(m["citedPaper"])
					add(m["citingPaper"])
				}
			}
		}
		add(x["citedPaper"])
		add(x["citingPaper"])
		add(x)
	}
	return out
}

func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
