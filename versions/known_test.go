package versions_test

import (
	"context"
	"testing"
	"time"

	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/versions"
)

// snapshotOf is a metadata snapshot holding the histories given.
type snapshotOf map[string]record.PaperVersions

func (s snapshotOf) Versions(id string) (record.PaperVersions, error) {
	if v, ok := s[id]; ok {
		return v, nil
	}
	return record.PaperVersions{}, arxivmeta.ErrNotFound
}

// TestKnown: Known gives the history a lookup starts from, without a
// request: the snapshot's, with what a later reading stored; a stored
// one; a target's stored arXiv API entry (known in part from v3 on);
// nothing (not ok) when only a request could tell.
func TestKnown(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	hist := func(id string, asOf time.Time, versions int) record.PaperVersions {
		v := record.PaperVersions{ID: id, From: record.VersionsFromGetRecord, AsOf: asOf}
		for i := range versions {
			v.Versions = append(v.Versions, record.PaperVersion{Version: i + 1, Date: time.Date(2024, time.Month(i+1), 1, 0, 0, 0, 0, time.UTC)})
		}
		return v
	}
	snapAsOf := now.AddDate(0, -2, 0)
	snap := snapshotOf{
		"2401.00001": hist("2401.00001", snapAsOf, 1),
		"2401.00002": hist("2401.00002", snapAsOf, 1),
	}
	for _, tc := range []struct {
		name     string
		id       string
		stored   *record.PaperVersions
		entry    *record.ArxivEntry
		ok       bool
		versions int
	}{
		{name: "in the snapshot", id: "2401.00001", ok: true, versions: 1},
		{name: "stored later than the snapshot", id: "2401.00002", stored: new(hist("2401.00002", now, 2)), ok: true, versions: 2},
		{name: "stored, no snapshot line", id: "2401.00003", stored: new(hist("2401.00003", now.AddDate(0, 0, -1), 3)), ok: true, versions: 3},
		{name: "a target's stored entry, v3", id: "2401.00005", entry: &record.ArxivEntry{ID: "2401.00005", Version: 3,
			Published: time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC), Updated: time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC)}, ok: true, versions: 2},
		{name: "nowhere", id: "2401.00004"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if tc.stored != nil {
				if _, err := record.PaperVersionSets.Put(context.Background(), st, tc.id, tc.stored, nil); err != nil {
					t.Fatal(err)
				}
			}
			if tc.entry != nil {
				meta := record.ArxivMeta{Found: true, CheckedAt: now.Format(time.RFC3339), Entry: tc.entry}
				if _, err := record.ArxivMetas.Put(context.Background(), st, tc.id, &meta, nil); err != nil {
					t.Fatal(err)
				}
			}
			r, err := versions.New(versions.Config{Snapshot: snap, Store: st, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			v, ok, err := r.Known(context.Background(), tc.id+"v2")
			if err != nil || ok != tc.ok || len(v.Versions) != tc.versions {
				t.Errorf("Known(%s): %d versions, ok %v, err %v; want %d, %v", tc.id, len(v.Versions), ok, err, tc.versions, tc.ok)
			}
		})
	}
}
