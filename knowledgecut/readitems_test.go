package knowledgecut_test

import (
	"slices"
	"testing"

	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
)

// TestReadItems: a pinned source is read from its pinned version's own
// item, then the version served now's own item, and the paper's key
// last (a target read at v1 replaces what the key holds).
func TestReadItems(t *testing.T) {
	const key = "2401.00001"
	for _, tc := range []struct {
		name string
		mode knowledgecut.Mode
		pin  *record.Pin
		want []string
	}{
		{"not pinned", knowledgecut.Flag, nil, []string{key}},
		{"off", knowledgecut.Off, &record.Pin{Version: 1, Latest: 3}, []string{key}},
		{"pinned at the version served now", knowledgecut.Flag, &record.Pin{Version: 3, Latest: 3}, []string{key + "v3", key}},
		{"pinned before it", knowledgecut.Strict, &record.Pin{Version: 2, Latest: 3}, []string{key + "v2", key + "v3", key}},
		{"first published after the cutoff", knowledgecut.Flag, &record.Pin{FirstAfter: true, Latest: 1}, nil},
	} {
		if got := knowledgecut.ReadItems(tc.mode, key, tc.pin); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
