package conformance

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/sim"
)

// The OAI-PMH invariants (protocol version 2.0, as arXiv serves it): every
// answer is 200 with an OAI-PMH document in the 2.0 namespace and a
// responseDate; errors are <error code=...> elements in it; a list page's
// records have an oai:arXiv.org: identifier, a day datestamp within the
// harvest's from and until and the set asked for; GetRecord answers with
// the one record of the identifier asked for, in the format asked for, the
// record a harvest lists, and refuses an unknown or malformed identifier
// with idDoesNotExist; a resumption token goes
// alone with the verb, the pages of a list add up to its completeListSize
// with the cursor counting the records before, and the last page's token
// is empty or absent.

// OAIPage is an OAI-PMH answer as CheckOAIResponse reads it.
type OAIPage struct {
	ResponseDate time.Time
	Errors       []string // codes
	Records      []OAIRecord
	GetRecord    bool // the answer is a GetRecord (its one record in Records)
	Token        string
	Cursor       int // -1 when not sent
	ListSize     int // -1 when not sent
	Identify     *struct {
		RepositoryName, BaseURL, ProtocolVersion, Granularity string
	}
}

// OAIRecord is one record of an OAIPage.
type OAIRecord struct {
	ID        string // versionless arXiv id
	Datestamp time.Time
	Sets      []string
	Deleted   bool
	Format    string // the namespace of its metadata, "" when it has none
	License   string // the metadata's <license> (arXiv's formats), "" when it names none
	// VersionDates are arXivRaw's history: the date of v1, v2, ...
	// (CheckOAIResponse holds them numbered from v1 without a gap).
	VersionDates []time.Time
	// Created and Updated are the arXiv format's dates (days); Updated
	// is zero for a paper of one version.
	Created, Updated time.Time
}

// arXivRawDate is how arXiv writes a version's date; the 2025 server pads
// the day, the old one did not (both parse with _2).
const arXivRawDate = "Mon, _2 Jan 2006 15:04:05 GMT"

type oaiDoc struct {
	XMLName      xml.Name `xml:"http://www.openarchives.org/OAI/2.0/ OAI-PMH"`
	ResponseDate string   `xml:"http://www.openarchives.org/OAI/2.0/ responseDate"`
	Errors       []struct {
		Code string `xml:"code,attr"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ error"`
	Identify *struct {
		RepositoryName  string `xml:"http://www.openarchives.org/OAI/2.0/ repositoryName"`
		BaseURL         string `xml:"http://www.openarchives.org/OAI/2.0/ baseURL"`
		ProtocolVersion string `xml:"http://www.openarchives.org/OAI/2.0/ protocolVersion"`
		Granularity     string `xml:"http://www.openarchives.org/OAI/2.0/ granularity"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ Identify"`
	GetRecord *struct {
		Records []oaiWireRecord `xml:"http://www.openarchives.org/OAI/2.0/ record"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ GetRecord"`
	List *struct {
		Records []oaiWireRecord `xml:"http://www.openarchives.org/OAI/2.0/ record"`
		Token   *struct {
			Value    string `xml:",chardata"`
			Cursor   string `xml:"cursor,attr"`
			ListSize string `xml:"completeListSize,attr"`
		} `xml:"http://www.openarchives.org/OAI/2.0/ resumptionToken"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ ListRecords"`
}

type oaiWireRecord struct {
	Header struct {
		Status     string   `xml:"status,attr"`
		Identifier string   `xml:"http://www.openarchives.org/OAI/2.0/ identifier"`
		Datestamp  string   `xml:"http://www.openarchives.org/OAI/2.0/ datestamp"`
		SetSpecs   []string `xml:"http://www.openarchives.org/OAI/2.0/ setSpec"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ header"`
	Metadata struct {
		Inner []struct {
			XMLName  xml.Name
			License  string `xml:"license"`
			Created  string `xml:"created"`
			Updated  string `xml:"updated"`
			Versions []struct {
				Version string `xml:"version,attr"`
				Date    string `xml:"date"`
			} `xml:"version"`
		} `xml:",any"`
	} `xml:"http://www.openarchives.org/OAI/2.0/ metadata"`
}

// CheckOAIResponse checks an OAI-PMH answer and returns the page.
func CheckOAIResponse(status int, body []byte) (*OAIPage, error) {
	if status != 200 {
		return nil, fmt.Errorf("status %d, want 200 (OAI-PMH errors come in the body): %s", status, truncate(body))
	}
	var doc oaiDoc
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not an OAI-PMH 2.0 document: %w", err)
	}
	var errs []error
	p := &OAIPage{Cursor: -1, ListSize: -1}
	var err error
	if p.ResponseDate, err = time.Parse(time.RFC3339, strings.TrimSpace(doc.ResponseDate)); err != nil {
		errs = append(errs, fmt.Errorf("responseDate %q: %w", doc.ResponseDate, err))
	}
	for _, e := range doc.Errors {
		p.Errors = append(p.Errors, e.Code)
	}
	if doc.Identify != nil {
		p.Identify = &struct{ RepositoryName, BaseURL, ProtocolVersion, Granularity string }{
			strings.TrimSpace(doc.Identify.RepositoryName), strings.TrimSpace(doc.Identify.BaseURL),
			strings.TrimSpace(doc.Identify.ProtocolVersion), strings.TrimSpace(doc.Identify.Granularity)}
	}
	var recs []oaiWireRecord
	switch {
	case doc.List != nil && doc.GetRecord != nil:
		errs = append(errs, errors.New("both ListRecords and GetRecord"))
	case doc.GetRecord != nil:
		p.GetRecord = true
		if recs = doc.GetRecord.Records; len(recs) != 1 {
			errs = append(errs, fmt.Errorf("GetRecord with %d records, want 1", len(recs)))
		}
	case doc.List != nil:
		recs = doc.List.Records
	}
	for i, r := range recs {
		rec := OAIRecord{Sets: r.Header.SetSpecs, Deleted: r.Header.Status == "deleted"}
		id, ok := strings.CutPrefix(strings.TrimSpace(r.Header.Identifier), "oai:arXiv.org:")
		if a, err := arxiv.Parse(id); !ok || err != nil || a.Version != 0 {
			errs = append(errs, fmt.Errorf("record %d: identifier %q is no oai:arXiv.org: versionless id", i, r.Header.Identifier))
		}
		rec.ID = id
		if rec.Datestamp, err = time.Parse(time.DateOnly, strings.TrimSpace(r.Header.Datestamp)); err != nil {
			errs = append(errs, fmt.Errorf("record %s: datestamp %q is no day", id, r.Header.Datestamp))
		}
		switch {
		case len(r.Metadata.Inner) > 0:
			in := r.Metadata.Inner[0]
			rec.Format = in.XMLName.Space
			rec.License = strings.TrimSpace(in.License)
			if rec.Deleted {
				errs = append(errs, fmt.Errorf("record %s: deleted, with metadata", id))
			}
			switch rec.Format {
			case "http://arxiv.org/OAI/arXivRaw/":
				if len(in.Versions) == 0 {
					errs = append(errs, fmt.Errorf("record %s: an arXivRaw record without versions", id))
				}
				for k, v := range in.Versions {
					d, err := time.Parse(arXivRawDate, strings.TrimSpace(v.Date))
					switch {
					case strings.TrimSpace(v.Version) != "v"+strconv.Itoa(k+1):
						errs = append(errs, fmt.Errorf("record %s: version %d is %q, want v%d (numbered from v1, in order)", id, k+1, v.Version, k+1))
					case err != nil:
						errs = append(errs, fmt.Errorf("record %s: version %s date %q is not as arXiv writes one (Mon, 02 Mar 2026 18:00:01 GMT)", id, v.Version, v.Date))
					case k > 0 && d.Before(rec.VersionDates[k-1]):
						errs = append(errs, fmt.Errorf("record %s: version %s dated before v%d", id, v.Version, k))
					}
					rec.VersionDates = append(rec.VersionDates, d.UTC())
				}
			case "http://arxiv.org/OAI/arXiv/":
				if rec.Created, err = time.Parse(time.DateOnly, strings.TrimSpace(in.Created)); err != nil {
					errs = append(errs, fmt.Errorf("record %s: created %q is no day", id, in.Created))
				}
				if u := strings.TrimSpace(in.Updated); u != "" {
					if rec.Updated, err = time.Parse(time.DateOnly, u); err != nil || rec.Updated.Before(rec.Created) {
						errs = append(errs, fmt.Errorf("record %s: updated %q is no day after created", id, in.Updated))
					}
				}
			}
		case !rec.Deleted:
			errs = append(errs, fmt.Errorf("record %s: no metadata", id))
		}
		p.Records = append(p.Records, rec)
	}
	if doc.List != nil {
		if t := doc.List.Token; t != nil {
			p.Token = strings.TrimSpace(t.Value)
			if t.Cursor != "" {
				p.Cursor, _ = strconv.Atoi(t.Cursor)
			}
			if t.ListSize != "" {
				p.ListSize, _ = strconv.Atoi(t.ListSize)
			}
		}
	}
	if len(p.Errors) == 0 && p.Identify == nil && doc.List == nil && doc.GetRecord == nil {
		errs = append(errs, errors.New("neither an answer nor an error"))
	}
	return p, errors.Join(errs...)
}

func (s *Suite) oai(t *testing.T, base string, q url.Values) *OAIPage {
	t.Helper()
	r := get(t, base+sim.OAIPath+"?"+q.Encode())
	p, err := CheckOAIResponse(r.status, r.body)
	if err != nil {
		t.Fatalf("%s: %v", q.Encode(), err)
	}
	return p
}

// harvest walks a ListRecords harvest through its tokens, checking every
// page, and returns the records.
func (s *Suite) harvest(t *testing.T, base string, q url.Values) []OAIRecord {
	t.Helper()
	var all []OAIRecord
	from, _ := time.Parse(time.DateOnly, q.Get("from"))
	size := -1
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("more than 1000 pages")
		}
		p := s.oai(t, base, q)
		if len(p.Errors) > 0 {
			t.Fatalf("%s: errors %v", q.Encode(), p.Errors)
		}
		for _, rec := range p.Records {
			if !from.IsZero() && rec.Datestamp.Before(from) {
				t.Errorf("from %s: record %s of %s", q.Get("from"), rec.ID, rec.Datestamp.Format(time.DateOnly))
			}
		}
		if p.ListSize >= 0 {
			if size >= 0 && p.ListSize != size {
				t.Errorf("completeListSize %d after %d", p.ListSize, size)
			}
			size = p.ListSize
		}
		if p.Cursor >= 0 && p.Cursor != len(all) {
			t.Errorf("cursor %d after %d records", p.Cursor, len(all))
		}
		all = append(all, p.Records...)
		if p.Token == "" {
			if size >= 0 && len(all) != size {
				t.Errorf("%d records in all, completeListSize %d", len(all), size)
			}
			return all
		}
		q = url.Values{"verb": {"ListRecords"}, "resumptionToken": {p.Token}}
	}
}

// TestOAIIdentify asks the repository to describe itself.
func (s *Suite) TestOAIIdentify(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	p := s.oai(t, base, url.Values{"verb": {"Identify"}})
	if p.Identify == nil || p.Identify.ProtocolVersion != "2.0" || p.Identify.Granularity != "YYYY-MM-DD" || p.Identify.RepositoryName == "" {
		t.Errorf("Identify: %+v", p.Identify)
	}
}

// TestOAIListRecords harvests the whole repository and a set of it,
// through the tokens.
func (s *Suite) TestOAIListRecords(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	all := s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}})
	if len(all) == 0 {
		t.Fatal("an empty repository")
	}
	seen := map[string]bool{}
	for _, rec := range all {
		if seen[rec.ID] {
			t.Errorf("record %s twice in one harvest", rec.ID)
		}
		seen[rec.ID] = true
		if !rec.Deleted && rec.Format != "http://arxiv.org/OAI/arXiv/" {
			t.Errorf("record %s in format %q, want arXiv's", rec.ID, rec.Format)
		}
	}
	// A set, and a date range: what a harvest of them finds is in them.
	if len(all[0].Sets) > 0 {
		set := all[0].Sets[0]
		for _, rec := range s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "set": {set}}) {
			if !slices.Contains(rec.Sets, set) {
				t.Errorf("set %s: record %s of sets %v", set, rec.ID, rec.Sets)
			}
		}
	}
	mid := all[len(all)/2].Datestamp.Format(time.DateOnly)
	if n := len(s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {mid}})); n == 0 || n > len(all) {
		t.Errorf("from %s: %d records of %d", mid, n, len(all))
	}
	for _, prefix := range []string{"arXivRaw", "oai_dc"} {
		if n := len(s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {prefix}})); n != len(all) {
			t.Errorf("metadataPrefix %s: %d records, %d in arXiv's format", prefix, n, len(all))
		}
	}
}

// TestOAIErrors asks what the protocol refuses; the errors come in 200s.
func (s *Suite) TestOAIErrors(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	first := s.oai(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}})
	for _, tc := range []struct {
		q    url.Values
		code string
	}{
		{url.Values{"verb": {"Nonsense"}}, "badVerb"},
		{url.Values{}, "badVerb"},
		{url.Values{"verb": {"ListRecords"}}, "badArgument"},
		{url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"marc21"}}, "cannotDisseminateFormat"},
		{url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"yesterday"}}, "badArgument"},
		{url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2026-03-02"}, "until": {"2026-03-01"}}, "badArgument"},
		{url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2999-01-01"}}, "noRecordsMatch"},
		{url.Values{"verb": {"ListRecords"}, "resumptionToken": {"not-a-token"}}, "badResumptionToken"},
		{url.Values{"verb": {"Identify"}, "set": {"cs"}}, "badArgument"},
	} {
		if p := s.oai(t, base, tc.q); len(p.Errors) != 1 || p.Errors[0] != tc.code {
			t.Errorf("%s: errors %v, want %s", tc.q.Encode(), p.Errors, tc.code)
		}
	}
	if first.Token != "" {
		q := url.Values{"verb": {"ListRecords"}, "resumptionToken": {first.Token}, "metadataPrefix": {"arXiv"}}
		if p := s.oai(t, base, q); len(p.Errors) != 1 || p.Errors[0] != "badArgument" {
			t.Errorf("a token with another argument: errors %v, want badArgument", p.Errors)
		}
	}
}

// TestOAIGetRecord asks for single records: each is the record a harvest
// lists, in every format, by its identifier with or without version;
// what arXiv's server refuses is refused with its codes.
func (s *Suite) TestOAIGetRecord(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	all := s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}})
	if len(all) == 0 {
		t.Fatal("an empty repository")
	}
	get := func(ident, prefix string) *OAIPage {
		t.Helper()
		return s.oai(t, base, url.Values{"verb": {"GetRecord"}, "identifier": {ident}, "metadataPrefix": {prefix}})
	}
	// The first and last records, and the first deleted one.
	probes := []OAIRecord{all[0], all[len(all)-1]}
	if i := slices.IndexFunc(all, func(r OAIRecord) bool { return r.Deleted }); i >= 0 {
		probes = append(probes, all[i])
	}
	formats := map[string]string{"arXiv": "http://arxiv.org/OAI/arXiv/", "arXivRaw": "http://arxiv.org/OAI/arXivRaw/", "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/"}
	for _, want := range probes {
		// A version names the paper.
		for _, ident := range []string{"oai:arXiv.org:" + want.ID, "oai:arXiv.org:" + want.ID + "v1"} {
			for prefix, ns := range formats {
				p := get(ident, prefix)
				if len(p.Errors) > 0 || !p.GetRecord || len(p.Records) != 1 {
					t.Errorf("GetRecord %s %s: errors %v, %d records", ident, prefix, p.Errors, len(p.Records))
					continue
				}
				got := p.Records[0]
				switch {
				case got.ID != want.ID || got.Deleted != want.Deleted || !got.Datestamp.Equal(want.Datestamp) || !slices.Equal(got.Sets, want.Sets):
					t.Errorf("GetRecord %s %s: %+v; the harvest lists %+v", ident, prefix, got, want)
				case !got.Deleted && got.Format != ns:
					t.Errorf("GetRecord %s %s: metadata in %q", ident, prefix, got.Format)
				case prefix == "arXiv" && got.License != want.License:
					t.Errorf("GetRecord %s: licence %q; the harvest lists %q", ident, got.License, want.License)
				}
			}
		}
	}

	seen := map[string]bool{}
	for _, r := range all {
		seen[r.ID] = true
	}
	unknown := ""
	for _, id := range []string{"0704.0001", "1501.00001", "2101.00001", "2512.99999", "hep-th/9901001"} {
		if !seen[id] {
			unknown = id
			break
		}
	}
	known := "oai:arXiv.org:" + all[0].ID
	for _, tc := range []struct {
		q    url.Values
		code string
	}{
		{url.Values{"verb": {"GetRecord"}, "identifier": {"oai:arXiv.org:" + unknown}, "metadataPrefix": {"arXiv"}}, "idDoesNotExist"},
		{url.Values{"verb": {"GetRecord"}, "identifier": {all[0].ID}, "metadataPrefix": {"arXiv"}}, "idDoesNotExist"},
		{url.Values{"verb": {"GetRecord"}, "identifier": {"oai:arXiv.org:not-an-id"}, "metadataPrefix": {"arXiv"}}, "idDoesNotExist"},
		{url.Values{"verb": {"GetRecord"}, "identifier": {known}, "metadataPrefix": {"marc21"}}, "cannotDisseminateFormat"},
		{url.Values{"verb": {"GetRecord"}, "identifier": {known}}, "badArgument"},
		{url.Values{"verb": {"GetRecord"}, "metadataPrefix": {"arXiv"}}, "badArgument"},
		{url.Values{"verb": {"GetRecord"}, "identifier": {known}, "metadataPrefix": {"arXiv"}, "set": {"cs"}}, "badArgument"},
	} {
		if p := s.oai(t, base, tc.q); len(p.Errors) != 1 || p.Errors[0] != tc.code || len(p.Records) > 0 {
			t.Errorf("%s: errors %v, %d records; want %s", tc.q.Encode(), p.Errors, len(p.Records), tc.code)
		}
	}
}

// TestOAIVersions harvests the version histories (arXivRaw) and the
// arXiv format: every paper's history numbered from v1 with dates in
// order, its v1 the arXiv format's created day and its last version the
// updated day; GetRecord gives the history a harvest lists.
func (s *Suite) TestOAIVersions(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	raw := s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXivRaw"}})
	plain := map[string]OAIRecord{}
	for _, r := range s.harvest(t, base, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}}) {
		plain[r.ID] = r
	}
	day := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	var several *OAIRecord
	for i, r := range raw {
		if r.Deleted {
			continue
		}
		p, ok := plain[r.ID]
		switch {
		case !ok:
			t.Errorf("%s: in arXivRaw, not in arXiv's format", r.ID)
		case len(r.VersionDates) == 0:
		case day(p.Created) != day(r.VersionDates[0]):
			t.Errorf("%s: created %s, v1 dated %s", r.ID, day(p.Created), r.VersionDates[0])
		case len(r.VersionDates) == 1 && !p.Updated.IsZero():
			t.Errorf("%s: one version, updated %s", r.ID, day(p.Updated))
		case len(r.VersionDates) > 1 && day(p.Updated) != day(r.VersionDates[len(r.VersionDates)-1]):
			t.Errorf("%s: updated %s, v%d dated %s", r.ID, day(p.Updated), len(r.VersionDates), r.VersionDates[len(r.VersionDates)-1])
		}
		if len(r.VersionDates) > 1 && several == nil {
			several = &raw[i]
		}
	}
	probes := []OAIRecord{}
	if len(raw) > 0 {
		probes = append(probes, raw[0])
	}
	if several != nil {
		probes = append(probes, *several)
	}
	for _, want := range probes {
		p := s.oai(t, base, url.Values{"verb": {"GetRecord"}, "identifier": {"oai:arXiv.org:" + want.ID}, "metadataPrefix": {"arXivRaw"}})
		if len(p.Records) != 1 || !slices.EqualFunc(p.Records[0].VersionDates, want.VersionDates, time.Time.Equal) {
			t.Errorf("GetRecord %s arXivRaw: %+v; the harvest lists %v", want.ID, p.Records, want.VersionDates)
		}
	}
}

// TestOAIFlowControl holds the repository to OAI-PMH's flow control: over
// its limits it answers 503 with a Retry-After (seconds or an HTTP date),
// not 429, and serves again once the client waits.
func (s *Suite) TestOAIFlowControl(t *testing.T) {
	base := s.url(t, sim.OAIPMH)
	svc := s.service(t, sim.OAIPMH)
	restore := svc.Limits()
	svc.SetLimits(sim.Limits{Rate: 1e-6, Burst: 1, RetryAfter: 2 * time.Second})
	defer svc.SetLimits(restore)
	q := base + sim.OAIPath + "?verb=Identify"
	if r := get(t, q); r.status != 200 {
		t.Fatalf("first request: status %d", r.status)
	}
	r := get(t, q)
	if r.status != 503 {
		t.Fatalf("over the limit: status %d, want 503 (OAI-PMH flow control)", r.status)
	}
	if err := checkRetryAfter(r.header.Get("Retry-After")); err != nil {
		t.Errorf("over the limit: %v", err)
	}
	svc.SetLimits(restore)
	if r := get(t, q); r.status != 200 {
		t.Errorf("after the wait: status %d", r.status)
	}
}

// checkRetryAfter checks a Retry-After value: delay-seconds or an
// HTTP-date (RFC 9110, section 10.2.3).
func checkRetryAfter(v string) error {
	if v == "" {
		return errors.New("no Retry-After")
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return nil
	}
	if _, err := http.ParseTime(v); err == nil {
		return nil
	}
	return fmt.Errorf("Retry-After %q is neither seconds nor an HTTP date", v)
}
