package chaos

import (
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// decodePaths finds the values at its paths, at any depth, past values it
// skips (objects, arrays, arrays of objects holding the same keys), and
// says what it did not find.
func TestDecodePaths(t *testing.T) {
	tests := []struct {
		name, in string
		found    []string
		conv     *record.Conversion
		ledger   int
	}{
		{"both", `{"id":"x","records":{"a":{"value":{"conversion":{"notes":["n"]}}},"document":{"blob":"b","value":{"text":[1,[2,{"conversion":1}]],"conversion":{"truncated":true,"notes":["parse budget"]}}}},"ledger":[{"stage":"fetch"},{"stage":"citegraph"}]}`,
			[]string{"ledger", "records.document.value.conversion"}, &record.Conversion{Truncated: true, Notes: []string{"parse budget"}}, 2},
		{"no document", `{"records":{"raw":{"value":null}},"ledger":[{"stage":"fetch","status":"failed","error":"e"}]}`,
			[]string{"ledger"}, nil, 1},
		{"a document in an array is not on the path", `{"records":[{"document":{"value":{"conversion":{"truncated":true}}}}]}`,
			nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conv *record.Conversion
			var ledger []struct{ Stage string }
			found, err := decodePaths(strings.NewReader(tt.in), map[string]any{
				"records.document.value.conversion": &conv, "ledger": &ledger})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range found {
				got = append(got, p)
			}
			if len(got) > 1 && got[0] > got[1] {
				got[0], got[1] = got[1], got[0]
			}
			if !reflect.DeepEqual(got, tt.found) || !reflect.DeepEqual(conv, tt.conv) || len(ledger) != tt.ledger {
				t.Errorf("found %v, conversion %+v, %d ledger entries; want %v, %+v, %d", got, conv, len(ledger), tt.found, tt.conv, tt.ledger)
			}
		})
	}
	// Not JSON: an error, not a panic.
	if _, err := decodePaths(strings.NewReader(`{"records":{`), map[string]any{"ledger": new(any)}); err == nil {
		t.Error("a cut JSON value read without an error")
	}
}
