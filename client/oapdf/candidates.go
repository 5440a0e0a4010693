package oapdf

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/record"
)

// Origins of a Candidate.
const (
	OriginACL = "acl_anthology"  // the ACL Anthology's PDF of the paper's ACL id
	OriginS2  = "s2_open_access" // Semantic Scholar's openAccessPdf
)

// Candidate is one place a paper's PDF may be downloaded from, with what
// is known of its licence.
type Candidate struct {
	URL    string `json:"url"`
	Origin string `json:"origin"`
	// Status and License are Semantic Scholar's openAccessPdf status
	// ("GREEN", "GOLD", "HYBRID", "BRONZE", ...) and licence ("CCBY",
	// "arXiv", ...), empty when S2 gives none.
	Status  string `json:"status,omitempty"`
	License string `json:"license,omitempty"`
}

// reACL matches ACL Anthology ids: old style "P19-1285", "W18-5041"; new
// style "2020.acl-main.1", "2023.findings-emnlp.12".
var reACL = regexp.MustCompile(`^(?:[A-Z]\d{2}-\d{4}|\d{4}\.[a-z0-9]+(?:-[a-z0-9]+)*\.\d{1,4})$`)

// ACLAnthologyPDF returns the Anthology's PDF URL of an ACL id
// (https://aclanthology.org/P19-1285.pdf), and false for anything that is
// no ACL id.
func ACLAnthologyPDF(id string) (string, bool) {
	id = strings.TrimSpace(id)
	if !reACL.MatchString(id) {
		return "", false
	}
	return "https://aclanthology.org/" + id + ".pdf", true
}

// Candidates returns where the PDF of an S2 paper may be downloaded
// from, best first: the ACL Anthology for a paper with an ACL id (the
// publisher's own open copy), then S2's openAccessPdf unless it is empty
// or closed. The same Anthology PDF under its old aclweb.org address is
// one candidate, carrying S2's status and licence.
func Candidates(p *record.ScholarPaper) []Candidate {
	if p == nil {
		return nil
	}
	var out []Candidate
	aclID := ""
	if p.ExternalIDs != nil {
		if u, ok := ACLAnthologyPDF(p.ExternalIDs.ACL); ok {
			aclID = p.ExternalIDs.ACL
			out = append(out, Candidate{URL: u, Origin: OriginACL})
		}
	}
	oa := p.OpenAccessPDF
	if oa == nil || strings.TrimSpace(oa.URL) == "" || strings.EqualFold(oa.Status, "CLOSED") {
		return out
	}
	c := Candidate{URL: strings.TrimSpace(oa.URL), Origin: OriginS2, Status: oa.Status, License: oa.License}
	if aclID != "" && sameAnthologyPDF(c.URL, aclID) {
		out[0].Status, out[0].License = c.Status, c.License
		return out
	}
	return append(out, c)
}

// sameAnthologyPDF reports whether raw is the Anthology PDF of id at one
// of its addresses (aclanthology.org/ID.pdf, www.aclweb.org/anthology/ID.pdf).
func sameAnthologyPDF(raw, id string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.TrimPrefix(httpx.HostKey(u), "www.")
	p := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/anthology"), "/")
	return (host == "aclanthology.org" || host == "aclweb.org") && (p == "/"+id+".pdf" || p == "/"+id)
}
