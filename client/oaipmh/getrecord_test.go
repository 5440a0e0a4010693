package oaipmh_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/oaipmh"
)

// TestGetRecord reads single records from the simulated repository: the
// licence a record names (or not), a deleted record, a versioned id asked
// for as its paper, and one the repository does not have.
func TestGetRecord(t *testing.T) {
	tests := []struct {
		id, ident string
		license   string
		deleted   bool
		notFound  bool
	}{
		{id: "2603.01234", ident: "oai:arXiv.org:2603.01234", license: "http://creativecommons.org/licenses/by/4.0/"},
		{id: "arXiv:2603.01234v3", ident: "oai:arXiv.org:2603.01234", license: "http://creativecommons.org/licenses/by/4.0/"},
		{id: "2603.00042", ident: "oai:arXiv.org:2603.00042", license: "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"},
		{id: "hep-th/9901001", ident: "oai:arXiv.org:hep-th/9901001"}, // the record names no licence
		{id: "2602.09999", ident: "oai:arXiv.org:2602.09999", deleted: true},
		{id: "2603.99999", ident: "oai:arXiv.org:2603.99999", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			srv := newFake(t)
			c := newClient(t, srv, 0)
			rec, err := c.GetRecord(context.Background(), tt.id)
			switch {
			case tt.notFound:
				var oe *oaipmh.Error
				if !errors.Is(err, oaipmh.ErrIDDoesNotExist) || !errors.As(err, &oe) || oe.Code != oaipmh.CodeIDDoesNotExist || !strings.Contains(err.Error(), tt.ident) {
					t.Errorf("err = %v, want idDoesNotExist naming %s", err, tt.ident)
				}
			case err != nil:
				t.Fatal(err)
			case rec.Identifier != tt.ident || rec.Deleted != tt.deleted:
				t.Errorf("record %+v, want %s deleted %v", rec, tt.ident, tt.deleted)
			case tt.deleted && rec.Meta != nil:
				t.Errorf("deleted record with metadata %+v", rec.Meta)
			case !tt.deleted && (rec.Meta == nil || rec.Meta.License != tt.license):
				t.Errorf("metadata %+v, want licence %q", rec.Meta, tt.license)
			}
			want := url.Values{"verb": {"GetRecord"}, "identifier": {tt.ident}, "metadataPrefix": {"arXiv"}}
			if hits := srv.recorded(); len(hits) != 1 || !reflect.DeepEqual(hits[0].Query(), want) {
				t.Errorf("requests %v, want one with %v", hits, want)
			}
		})
	}
}

// TestGetRecordRefusals: what the repository reports in a 200 body, or
// answers that cannot be the record asked for, are errors; an id that is
// none is refused before any request.
func TestGetRecordRefusals(t *testing.T) {
	const envelope = `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
  <responseDate>2026-03-05T01:02:03Z</responseDate>
  <request verb="GetRecord">https://oaipmh.arxiv.org/oai</request>
  %s
</OAI-PMH>`
	other := `<GetRecord><record><header><identifier>oai:arXiv.org:2603.00042</identifier><datestamp>2026-03-03</datestamp></header>
  <metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>2603.00042</id><created>2026-03-02</created><title>T</title>
  <license>http://creativecommons.org/licenses/by/4.0/</license></arXiv></metadata></record></GetRecord>`
	noMeta := `<GetRecord><record><header><identifier>oai:arXiv.org:2603.01234</identifier><datestamp>2026-03-03</datestamp></header>
  <metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"/></metadata></record></GetRecord>`
	tests := []struct {
		name, body, want string
		code             string
	}{
		{"cannot disseminate", "", "cannotDisseminateFormat", oaipmh.CodeCannotDisseminateFormat},
		{"bad argument", `<error code="badArgument">Parameters provided did not match expected.</error>`, "badArgument", oaipmh.CodeBadArgument},
		{"another paper's record", other, "answered with the record of oai:arXiv.org:2603.00042", ""},
		{"no metadata in arXiv's format", noMeta, "no metadata in arXiv's format", ""},
		{"neither record nor error", `<Identify/>`, "neither one GetRecord record nor an error", ""},
		{"two records", `<GetRecord>` + strings.Repeat(`<record><header><identifier>oai:arXiv.org:2603.01234</identifier><datestamp>2026-03-03</datestamp></header></record>`, 2) + `</GetRecord>`,
			"neither one GetRecord record", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ *http.Request, _ hit, _ int) bool {
				if tt.body == "" {
					serve(t, w, "cannotdisseminateformat.xml")
					return true
				}
				w.Header().Set("Content-Type", "text/xml; charset=utf-8")
				w.Write([]byte(strings.Replace(envelope, "%s", tt.body, 1)))
				return true
			}
			c := newClient(t, srv, 0)
			_, err := c.GetRecord(context.Background(), "2603.01234")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "oai:arXiv.org:2603.01234") {
				t.Fatalf("err = %v, want one naming the identifier and %q", err, tt.want)
			}
			if errors.Is(err, oaipmh.ErrIDDoesNotExist) {
				t.Errorf("%v matches ErrIDDoesNotExist", err)
			}
			var oe *oaipmh.Error
			if tt.code != "" && (!errors.As(err, &oe) || oe.Code != tt.code) {
				t.Errorf("err = %v, want an *Error %s", err, tt.code)
			}
		})
	}

	srv := newFake(t)
	c := newClient(t, srv, 0)
	for _, id := range []string{"", "not-an-id", "2603.1"} {
		if _, err := c.GetRecord(context.Background(), id); err == nil || !strings.Contains(err.Error(), "oaipmh get record") {
			t.Errorf("GetRecord(%q): err = %v, want a refusal", id, err)
		}
	}
	if n := len(srv.recorded()); n != 0 {
		t.Errorf("%d requests for ids that are none, want 0", n)
	}
}
