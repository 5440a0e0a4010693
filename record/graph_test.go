package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestArxivEntryJSON: entries are stored under their snake_case names,
// and entries stored before the names existed still read in full.
func TestArxivEntryJSON(t *testing.T) {
	want := ArxivEntry{ID: "2401.00001", Version: 2, Published: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		Updated: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), Title: "T", Authors: []string{"A B"}, Abstract: "Abs",
		PrimaryCategory: "cs.CL", Categories: []string{"cs.CL", "cs.AI"}, DOI: "10.1/x", JournalRef: "J 1", Comment: "9 pages"}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"primary_category":"cs.CL"`, `"journal_ref":"J 1"`, `"id":"2401.00001"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("marshalled entry lacks %s: %s", key, data)
		}
	}
	legacy := `{"ID":"2401.00001","Version":2,"Published":"2024-01-01T00:00:00Z","Updated":"2024-02-01T00:00:00Z",` +
		`"Title":"T","Authors":["A B"],"Abstract":"Abs","PrimaryCategory":"cs.CL","Categories":["cs.CL","cs.AI"],` +
		`"DOI":"10.1/x","JournalRef":"J 1","Comment":"9 pages"}`
	for name, in := range map[string]string{"snake_case": string(data), "legacy": legacy} {
		var got ArxivEntry
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read %+v, want %+v", name, got, want)
		}
	}
}
