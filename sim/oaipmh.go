package sim

import (
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
)

// arXiv's OAI-PMH 2.0 repository (oaipmh.arxiv.org/oai), answering from
// an OAIRecords source: Identify; GetRecord with exactly identifier
// (oai:arXiv.org:ID; a version names the paper) and metadataPrefix, a
// deleted record answered with its header, an identifier of another form
// or of no record idDoesNotExist, as arXiv's server has it; ListRecords
// and ListIdentifiers with
// metadataPrefix (arXiv, arXivRaw, oai_dc), from and until (day
// granularity, the record's datestamp) and set, in pages of
// Options.OAIPageSize records; each page but the last ends in a
// resumptionToken in the form arXiv's 2025 server uses (the query
// percent-encoded, with skip=N), the last one in an empty one; a token
// goes alone with the verb. Errors come in the body of a 200 response, as
// the protocol has it: badVerb, badArgument, badResumptionToken,
// cannotDisseminateFormat, noRecordsMatch. ListMetadataFormats names the
// three formats. arXivRaw lists every version with its date as arXiv
// writes it ("Mon, 02 Mar 2026 18:00:01 GMT"), the size and source type.
// Over its limits (Limits) the repository answers 503 with Retry-After,
// OAI-PMH's flow control, not 429: the protocol's harvester guidelines
// (openarchives.org/OAI/2.0/guidelines-harvester.htm, section 5) and
// arXiv's own account of its answers to a harvester too fast for it (a
// 503 saying to wait 60 seconds; oai-implementers list, September 2002).

// OAIPath is the repository's path.
const OAIPath = "/oai"

// OAIResponseDate is the responseDate of every answer: the simulated
// repository's clock.
const OAIResponseDate = "2026-07-01T00:00:00Z"

// OAIDefaultPageSize is the records of a ListRecords page when
// Options.OAIPageSize is 0.
const OAIDefaultPageSize = 1000

// OAIFormats are the metadata formats the repository disseminates.
var OAIFormats = []string{"arXiv", "arXivRaw", "oai_dc"}

// OAIRecord is one record of the repository in one metadata format.
type OAIRecord struct {
	ID        string    // versionless arXiv id
	Datestamp time.Time // the day the record last changed
	// Sets are every set the record belongs to, for selective harvests
	// ("cs", "cs:cs:AI", "physics:hep-th").
	Sets    []string
	Deleted bool
	// XML is the <record> element: header, and metadata unless Deleted.
	XML string
}

// OAIRecords is what the OAI-PMH repository holds.
type OAIRecords interface {
	// OAIRecords returns the records in format prefix (one of
	// OAIFormats), deleted ones included, in the repository's order.
	OAIRecords(prefix string) iter.Seq[OAIRecord]
}

// oaiAPI serves the repository over src.
type oaiAPI struct {
	src      OAIRecords
	pageSize int
}

// oaiArgs are the arguments each verb takes (verb itself aside).
var oaiArgs = map[string][]string{
	"Identify":            nil,
	"GetRecord":           {"identifier", "metadataPrefix"},
	"ListMetadataFormats": {"identifier"},
	"ListRecords":         {"metadataPrefix", "from", "until", "set", "resumptionToken"},
	"ListIdentifiers":     {"metadataPrefix", "from", "until", "set", "resumptionToken"},
}

func (a oaiAPI) serve(w http.ResponseWriter, r *http.Request, body []byte, _ bool) {
	if r.URL.Path != OAIPath {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			a.fail(w, nil, "badArgument", "The request body is no form.")
			return
		}
		for k, v := range form {
			q[k] = append(q[k], v...)
		}
	}
	verb := q.Get("verb")
	allowed, ok := oaiArgs[verb]
	if !ok {
		a.fail(w, nil, "badVerb", fmt.Sprintf("Illegal verb %q: the simulated repository answers Identify, GetRecord, ListMetadataFormats, ListRecords and ListIdentifiers.", verb))
		return
	}
	for k, v := range q {
		if len(v) > 1 {
			a.fail(w, nil, "badArgument", "Repeated argument "+k+".")
			return
		}
		if k != "verb" && !slices.Contains(allowed, k) {
			a.fail(w, nil, "badArgument", fmt.Sprintf("Illegal argument %s for verb %s.", k, verb))
			return
		}
	}
	switch verb {
	case "Identify":
		a.write(w, q, "<Identify>\n"+
			"    <repositoryName>arXiv</repositoryName>\n    <baseURL>https://oaipmh.arxiv.org/oai</baseURL>\n"+
			"    <protocolVersion>2.0</protocolVersion>\n    <adminEmail>help@arxiv.org</adminEmail>\n"+
			"    <earliestDatestamp>2005-09-16</earliestDatestamp>\n    <deletedRecord>persistent</deletedRecord>\n"+
			"    <granularity>YYYY-MM-DD</granularity>\n  </Identify>")
	case "ListMetadataFormats":
		var b strings.Builder
		b.WriteString("<ListMetadataFormats>\n")
		for _, f := range OAIFormats {
			fmt.Fprintf(&b, "    <metadataFormat><metadataPrefix>%s</metadataPrefix><schema>%s</schema><metadataNamespace>%s</metadataNamespace></metadataFormat>\n",
				f, oaiSchemas[f][1], oaiSchemas[f][0])
		}
		b.WriteString("  </ListMetadataFormats>")
		a.write(w, q, b.String())
	case "GetRecord":
		a.getRecord(w, q)
	default:
		a.list(w, verb, q)
	}
}

// getRecord answers GetRecord in the order arXiv's server checks: both
// arguments there (badArgument), the identifier (idDoesNotExist), the
// format (cannotDisseminateFormat), then the record.
func (a oaiAPI) getRecord(w http.ResponseWriter, q url.Values) {
	if !q.Has("identifier") || !q.Has("metadataPrefix") {
		a.fail(w, nil, "badArgument", "Parameters provided did not match expected. Expected: verb, identifier, metadataPrefix.")
		return
	}
	ident, prefix := q.Get("identifier"), q.Get("metadataPrefix")
	local, ok := strings.CutPrefix(ident, "oai:arXiv.org:")
	if !ok {
		a.fail(w, q, "idDoesNotExist", "The value of the identifier argument is unknown or illegal in this repository. Reason: All identifiers start with: oai:arXiv.org:")
		return
	}
	id, err := arxiv.Parse(local)
	// arxiv.Parse forgives what arXiv's identifier check does not.
	if err != nil || local != strings.TrimSpace(local) || strings.HasPrefix(strings.ToLower(local), "arxiv:") {
		a.fail(w, q, "idDoesNotExist", "The value of the identifier argument is unknown or illegal in this repository. Reason: Invalid arXiv_id structure")
		return
	}
	if !slices.Contains(OAIFormats, prefix) {
		a.fail(w, q, "cannotDisseminateFormat", fmt.Sprintf("The metadata format identified by the value given for the metadataPrefix argument is not supported by the item or by the repository. Reason: Did not recognize requested format %q", prefix))
		return
	}
	for rec := range a.src.OAIRecords(prefix) {
		if rec.ID == id.Canonical() {
			a.write(w, q, "<GetRecord>\n    "+rec.XML+"\n  </GetRecord>")
			return
		}
	}
	a.fail(w, q, "idDoesNotExist", "The value of the identifier argument is unknown or illegal in this repository. Reason: Nothing found for this ID")
}

// oaiSchemas are each format's namespace and schema.
var oaiSchemas = map[string][2]string{
	"arXiv":    {"http://arxiv.org/OAI/arXiv/", "http://arxiv.org/OAI/arXiv.xsd"},
	"arXivRaw": {"http://arxiv.org/OAI/arXivRaw/", "http://arxiv.org/OAI/arXivRaw.xsd"},
	"oai_dc":   {"http://www.openarchives.org/OAI/2.0/oai_dc/", "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"},
}

// oaiQuery is a harvest: the arguments of its first request, and where a
// page starts.
type oaiQuery struct {
	prefix, from, until, set string
	skip                     int
}

// token is the resumption token of the page at skip, in the form arXiv's
// 2025 server uses.
func (h oaiQuery) token(verb string, skip int) string {
	v := "verb=" + verb + "&metadataPrefix=" + h.prefix
	for _, kv := range [][2]string{{"from", h.from}, {"until", h.until}, {"set", h.set}} {
		if kv[1] != "" {
			v += "&" + kv[0] + "=" + kv[1]
		}
	}
	return url.QueryEscape(v + "&skip=" + strconv.Itoa(skip))
}

// parseOAIToken reads a token token made for verb.
func parseOAIToken(verb, tok string) (oaiQuery, bool) {
	raw, err := url.QueryUnescape(tok)
	if err != nil {
		return oaiQuery{}, false
	}
	v, err := url.ParseQuery(raw)
	if err != nil || v.Get("verb") != verb {
		return oaiQuery{}, false
	}
	skip, err := strconv.Atoi(v.Get("skip"))
	h := oaiQuery{prefix: v.Get("metadataPrefix"), from: v.Get("from"), until: v.Get("until"), set: v.Get("set"), skip: skip}
	if err != nil || skip <= 0 || !slices.Contains(OAIFormats, h.prefix) || h.token(verb, skip) != tok {
		return oaiQuery{}, false
	}
	return h, true
}

func (a oaiAPI) list(w http.ResponseWriter, verb string, q url.Values) {
	var h oaiQuery
	if tok := q.Get("resumptionToken"); q.Has("resumptionToken") {
		if len(q) != 2 {
			a.fail(w, q, "badArgument", "The resumptionToken argument is exclusive: it may only be sent with the verb.")
			return
		}
		var ok bool
		if h, ok = parseOAIToken(verb, tok); !ok {
			a.fail(w, q, "badResumptionToken", "The value of the resumptionToken argument is invalid or expired.")
			return
		}
	} else {
		h = oaiQuery{prefix: q.Get("metadataPrefix"), from: q.Get("from"), until: q.Get("until"), set: q.Get("set")}
		switch {
		case h.prefix == "":
			a.fail(w, q, "badArgument", "The metadataPrefix argument is required.")
			return
		case !slices.Contains(OAIFormats, h.prefix):
			a.fail(w, q, "cannotDisseminateFormat", fmt.Sprintf("The metadataPrefix argument %q is not supported by the repository.", h.prefix))
			return
		}
	}
	from, until, msg := oaiDays(h.from, h.until)
	if msg != "" {
		a.fail(w, q, "badArgument", msg)
		return
	}
	var all []OAIRecord
	for rec := range a.src.OAIRecords(h.prefix) {
		d := rec.Datestamp.UTC().Truncate(24 * time.Hour)
		if !from.IsZero() && d.Before(from) || !until.IsZero() && d.After(until) || h.set != "" && !slices.Contains(rec.Sets, h.set) {
			continue
		}
		all = append(all, rec)
	}
	if len(all) == 0 || h.skip >= len(all) && h.skip > 0 {
		if h.skip > 0 {
			a.fail(w, q, "badResumptionToken", "The value of the resumptionToken argument is invalid or expired.")
			return
		}
		a.fail(w, q, "noRecordsMatch", "The combination of the values of the from, until, set and metadataPrefix arguments results in an empty list.")
		return
	}
	size := cmpOrInt(a.pageSize, OAIDefaultPageSize)
	end := min(h.skip+size, len(all))
	var b strings.Builder
	b.WriteString("<" + verb + ">\n")
	for _, rec := range all[h.skip:end] {
		x := rec.XML
		if verb == "ListIdentifiers" {
			x = oaiHeaderOnly(x)
		}
		b.WriteString("    " + x + "\n")
	}
	switch {
	case end < len(all):
		fmt.Fprintf(&b, "    <resumptionToken cursor=\"%d\" completeListSize=\"%d\">%s</resumptionToken>\n", h.skip, len(all), h.token(verb, end))
	case h.skip > 0:
		fmt.Fprintf(&b, "    <resumptionToken cursor=\"%d\" completeListSize=\"%d\"/>\n", h.skip, len(all))
	}
	b.WriteString("  </" + verb + ">")
	a.write(w, q, b.String())
}

// oaiHeaderOnly cuts a record down to its header, as ListIdentifiers
// answers.
func oaiHeaderOnly(rec string) string {
	i, j := strings.Index(rec, "<header"), strings.Index(rec, "</header>")
	if i < 0 || j < 0 {
		return rec
	}
	return rec[i : j+len("</header>")]
}

// oaiDays parses from and until (YYYY-MM-DD).
func oaiDays(from, until string) (f, u time.Time, refusal string) {
	var err error
	if from != "" {
		if f, err = time.Parse(time.DateOnly, from); err != nil {
			return f, u, fmt.Sprintf("The from argument %q is not a day (YYYY-MM-DD).", from)
		}
	}
	if until != "" {
		if u, err = time.Parse(time.DateOnly, until); err != nil {
			return f, u, fmt.Sprintf("The until argument %q is not a day (YYYY-MM-DD).", until)
		}
	}
	if !f.IsZero() && !u.IsZero() && u.Before(f) {
		return f, u, "The until argument is before the from argument."
	}
	return f, u, ""
}

// write answers with the OAI-PMH envelope around content.
func (a oaiAPI) write(w http.ResponseWriter, q url.Values, content string) {
	writeBody(w, "text/xml; charset=utf-8", oaiEnvelope(q, content))
}

// OAIListPage is a ListRecords answer holding records, with no
// resumption token: a whole harvest in one page, as a corpus stores one
// (AddOAIPage reads it back).
func OAIListPage(prefix string, records []OAIRecord) []byte {
	var b strings.Builder
	b.WriteString("<ListRecords>\n")
	for _, r := range records {
		b.WriteString("    " + r.XML + "\n")
	}
	b.WriteString("  </ListRecords>")
	return oaiEnvelope(url.Values{"verb": {"ListRecords"}, "metadataPrefix": {prefix}}, b.String())
}

// oaiEnvelope is the OAI-PMH envelope around content, the request
// echoing q.
func oaiEnvelope(q url.Values, content string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">` + "\n")
	b.WriteString("  <responseDate>" + OAIResponseDate + "</responseDate>\n")
	b.WriteString("  <request")
	if q != nil {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range q {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=\"%s\"", k, html.EscapeString(q.Get(k)))
		}
	}
	b.WriteString(">https://oaipmh.arxiv.org/oai</request>\n  ")
	b.WriteString(content)
	b.WriteString("\n</OAI-PMH>\n")
	return []byte(b.String())
}

// fail answers an OAI-PMH error; the request echoes its arguments unless
// they are what is wrong (badVerb, badArgument), as the protocol asks.
func (a oaiAPI) fail(w http.ResponseWriter, q url.Values, code, msg string) {
	if code == "badVerb" || code == "badArgument" {
		q = nil
	}
	a.write(w, q, fmt.Sprintf("<error code=\"%s\">%s</error>", code, html.EscapeString(msg)))
}

func cmpOrInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// OAIMeta is what a record says of a paper.
type OAIMeta struct {
	ID               string // versionless arXiv id
	Datestamp        time.Time
	Deleted          bool
	Created, Updated time.Time // v1's date; the latest version's (zero for v1 only)
	Versions         int       // the latest version (arXivRaw's history)
	// VersionDates, when set, are the dates of v1, v2, ... (arXivRaw's
	// history); they then give Created, Updated and Versions too.
	VersionDates      []time.Time
	Authors           []string // full names, "Forenames Keyname"
	Title, Abstract   string
	Categories        []string // primary first
	DOI, JournalRef   string
	Comments, License string
	Sets              []string // the header's setSpecs; default OAISets(Categories)
}

// physicsArchives are the archives of arXiv's physics group; every other
// archive is its own group.
var physicsArchives = []string{"astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th",
	"math-ph", "nlin", "nucl-ex", "nucl-th", "physics", "quant-ph"}

// OAISets returns the sets of a paper with categories, as arXiv's 2025
// repository names them: the group ("cs", "physics"), group:archive for
// the physics archives ("physics:hep-th"), and group:archive:category
// ("cs:cs:AI"). A record's header lists the first two kinds (header).
func OAISets(categories []string) (all, header []string) {
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, c := range categories {
		archive, sub, _ := strings.Cut(c, ".")
		group := archive
		if slices.Contains(physicsArchives, archive) {
			group = "physics"
		}
		if group == "physics" {
			add(&all, group+":"+archive)
			add(&header, group+":"+archive)
		} else {
			add(&header, group)
		}
		add(&all, group)
		if sub != "" {
			add(&all, group+":"+archive+":"+sub)
		}
	}
	return all, header
}

// Record returns m as a record in format prefix (one of OAIFormats).
func (m OAIMeta) Record(prefix string) OAIRecord {
	if n := len(m.VersionDates); n > 0 {
		m.Versions, m.Created, m.Updated = n, m.VersionDates[0], time.Time{}
		if n > 1 {
			m.Updated = m.VersionDates[n-1]
		}
	}
	all, header := OAISets(m.Categories)
	if m.Sets != nil {
		header = m.Sets
		all = append(slices.Clone(m.Sets), all...)
	}
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	x := html.EscapeString
	day := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	b.WriteString("<record>\n")
	if m.Deleted {
		f("      <header status=\"deleted\">\n")
	} else {
		f("      <header>\n")
	}
	f("        <identifier>oai:arXiv.org:%s</identifier>\n        <datestamp>%s</datestamp>\n", x(m.ID), day(m.Datestamp))
	for _, s := range header {
		f("        <setSpec>%s</setSpec>\n", x(s))
	}
	f("      </header>\n")
	if !m.Deleted {
		f("      <metadata>\n")
		switch prefix {
		case "arXiv":
			f("        <arXiv xmlns=\"%s\">\n          <id>%s</id>\n          <created>%s</created>\n", oaiSchemas[prefix][0], x(m.ID), day(m.Created))
			if !m.Updated.IsZero() {
				f("          <updated>%s</updated>\n", day(m.Updated))
			}
			f("          <authors>\n")
			for _, a := range m.Authors {
				fore, key := splitName(a)
				if fore == "" {
					f("            <author><keyname>%s</keyname></author>\n", x(key))
				} else {
					f("            <author><keyname>%s</keyname><forenames>%s</forenames></author>\n", x(key), x(fore))
				}
			}
			f("          </authors>\n          <title>%s</title>\n          <categories>%s</categories>\n", x(m.Title), x(strings.Join(m.Categories, " ")))
			m.optional(f)
			f("          <abstract>  %s\n</abstract>\n        </arXiv>\n", x(m.Abstract))
		case "arXivRaw":
			f("        <arXivRaw xmlns=\"%s\">\n          <id>%s</id>\n", oaiSchemas[prefix][0], x(m.ID))
			for v := 1; v <= max(m.Versions, 1); v++ {
				t := m.Created
				switch {
				case v <= len(m.VersionDates):
					t = m.VersionDates[v-1]
				case v > 1 && !m.Updated.IsZero():
					t = m.Updated
				}
				// arXiv writes the zone GMT (Go's RFC1123 writes UTC's
				// own name) and, since its 2025 rewrite, pads the day.
				f("          <version version=\"v%d\"><date>%s</date><size>%dkb</size><source_type>D</source_type></version>\n",
					v, t.UTC().Format("Mon, 02 Jan 2006 15:04:05")+" GMT", 100+10*v)
			}
			f("          <title>%s</title>\n          <authors>%s</authors>\n          <categories>%s</categories>\n",
				x(m.Title), x(joinAuthors(m.Authors)), x(strings.Join(m.Categories, " ")))
			m.optional(f)
			f("          <abstract>  %s\n</abstract>\n        </arXivRaw>\n", x(m.Abstract))
		default: // oai_dc
			f("        <oai_dc:dc xmlns:oai_dc=\"%s\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n", oaiSchemas["oai_dc"][0])
			f("          <dc:title>%s</dc:title>\n", x(m.Title))
			for _, a := range m.Authors {
				fore, key := splitName(a)
				f("          <dc:creator>%s</dc:creator>\n", x(strings.TrimSuffix(key+", "+fore, ", ")))
			}
			for _, c := range m.Categories {
				f("          <dc:subject>%s</dc:subject>\n", x(c))
			}
			f("          <dc:description>%s</dc:description>\n          <dc:date>%s</dc:date>\n", x(m.Abstract), day(m.Created))
			f("          <dc:type>text</dc:type>\n          <dc:identifier>http://arxiv.org/abs/%s</dc:identifier>\n        </oai_dc:dc>\n", x(m.ID))
		}
		f("      </metadata>\n")
	}
	b.WriteString("    </record>")
	return OAIRecord{ID: m.ID, Datestamp: m.Datestamp, Sets: all, Deleted: m.Deleted, XML: b.String()}
}

func (m OAIMeta) optional(f func(string, ...any)) {
	for _, kv := range [][2]string{{"comments", m.Comments}, {"journal-ref", m.JournalRef}, {"doi", m.DOI}, {"license", m.License}} {
		if kv[1] != "" {
			f("          <%s>%s</%s>\n", kv[0], html.EscapeString(kv[1]), kv[0])
		}
	}
}

// splitName splits a full name into forenames and keyname (the last word).
func splitName(name string) (fore, key string) {
	name = strings.TrimSpace(name)
	i := strings.LastIndexByte(name, ' ')
	if i < 0 {
		return "", name
	}
	return name[:i], name[i+1:]
}

// ParseOAIPage reads the records of a ListRecords answer, each kept as it
// is written, with the format its metadata is in ("" for a deleted
// record, which every format lists).
func ParseOAIPage(page []byte) (records []OAIRecord, prefixes []string, err error) {
	var doc struct {
		Records []struct {
			Header struct {
				Status     string   `xml:"status,attr"`
				Identifier string   `xml:"identifier"`
				Datestamp  string   `xml:"datestamp"`
				SetSpecs   []string `xml:"setSpec"`
			} `xml:"header"`
			Metadata struct {
				Inner []struct {
					XMLName xml.Name
				} `xml:",any"`
			} `xml:"metadata"`
		} `xml:"ListRecords>record"`
	}
	if err := xml.Unmarshal(page, &doc); err != nil {
		return nil, nil, fmt.Errorf("sim: OAI-PMH page: %w", err)
	}
	raw := string(page)
	pos := 0
	for i, r := range doc.Records {
		start := strings.Index(raw[pos:], "<record>")
		if start < 0 {
			return nil, nil, errors.New("sim: OAI-PMH page: a record that is not written <record>")
		}
		start += pos
		end := strings.Index(raw[start:], "</record>")
		if end < 0 {
			return nil, nil, fmt.Errorf("sim: OAI-PMH page: record %d is not closed", i)
		}
		end += start + len("</record>")
		pos = end
		d, err := time.Parse(time.DateOnly, strings.TrimSpace(r.Header.Datestamp))
		if err != nil {
			return nil, nil, fmt.Errorf("sim: OAI-PMH page: record %d: datestamp %q: %w", i, r.Header.Datestamp, err)
		}
		id, _ := strings.CutPrefix(strings.TrimSpace(r.Header.Identifier), "oai:arXiv.org:")
		rec := OAIRecord{ID: id, Datestamp: d, Sets: r.Header.SetSpecs, Deleted: r.Header.Status == "deleted", XML: raw[start:end]}
		prefix := ""
		if len(r.Metadata.Inner) > 0 {
			ns := r.Metadata.Inner[0].XMLName.Space
			for f, s := range oaiSchemas {
				if s[0] == ns {
					prefix = f
				}
			}
			if prefix == "" {
				return nil, nil, fmt.Errorf("sim: OAI-PMH page: record %s in metadata format %q, not one of %v", id, ns, OAIFormats)
			}
		}
		records, prefixes = append(records, rec), append(prefixes, prefix)
	}
	return records, prefixes, nil
}
