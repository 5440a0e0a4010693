package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func openTest(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

type doc struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Refs  []string `json:"refs,omitempty"`
}

func TestRecordRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	tests := []struct {
		item, kind string
		v          doc
		meta       map[string]string
	}{
		{"2507.11127", "document", doc{ID: "2507.11127", Title: "A"}, map[string]string{"source": "arxiv"}},
		{"2507.11127", "edges", doc{ID: "2507.11127", Refs: []string{"x", "y"}}, nil},
		{"hep-th/9901001", "document", doc{ID: "hep-th/9901001", Title: "Old style"}, map[string]string{}},
		{"topic:quantum gravity", "card:gold", doc{Title: "ünïcödé ✓"}, map[string]string{"model": "m", "tokens": "12"}},
	}
	for _, tt := range tests {
		h, err := s.PutJSON(ctx, tt.item, tt.kind, tt.v, tt.meta)
		if err != nil {
			t.Fatal(err)
		}
		var got doc
		rec, err := s.GetJSON(ctx, tt.item, tt.kind, &got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.v) {
			t.Errorf("GetJSON(%q, %q) = %+v, want %+v", tt.item, tt.kind, got, tt.v)
		}
		wantMeta := tt.meta
		if len(wantMeta) == 0 {
			wantMeta = nil
		}
		if rec.Item != tt.item || rec.Kind != tt.kind || rec.Blob != h || !reflect.DeepEqual(rec.Meta, wantMeta) {
			t.Errorf("GetJSON(%q, %q) record = %+v, want blob %s, meta %v", tt.item, tt.kind, rec, h, wantMeta)
		}
		if time.Since(rec.UpdatedAt) > time.Minute || rec.UpdatedAt.Location() != time.UTC {
			t.Errorf("GetJSON(%q, %q) UpdatedAt = %v, want about now, UTC", tt.item, tt.kind, rec.UpdatedAt)
		}
	}

	// Raw bytes, and a replacement of an existing record.
	raw := []byte("<html><body>v1</body></html>")
	if _, err := s.PutBytes(ctx, "2507.11127", "raw", raw, nil); err != nil {
		t.Fatal(err)
	}
	raw2 := []byte("<html><body>v2</body></html>")
	h2, err := s.PutBytes(ctx, "2507.11127", "raw", raw2, map[string]string{"etag": "x"})
	if err != nil {
		t.Fatal(err)
	}
	got, rec, err := s.GetBytes(ctx, "2507.11127", "raw")
	if err != nil || !bytes.Equal(got, raw2) || rec.Blob != h2 || rec.Meta["etag"] != "x" {
		t.Errorf("GetBytes after replace = %q, %+v, %v; want %q, blob %s", got, rec, err, raw2, h2)
	}

	recs, err := s.Records(ctx, "2507.11127")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if want := []string{"document", "edges", "raw"}; !slices.Equal(kinds, want) {
		t.Errorf("Records kinds = %v, want %v", kinds, want)
	}
	items, err := s.Items(ctx, "document")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"2507.11127", "hep-th/9901001"}; !slices.Equal(items, want) {
		t.Errorf("Items(document) = %v, want %v", items, want)
	}
	if items, err := s.Items(ctx, "nothing"); err != nil || len(items) != 0 {
		t.Errorf("Items(nothing) = %v, %v; want none", items, err)
	}

	var d doc
	if _, err := s.GetJSON(ctx, "2507.11127", "selections", &d); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJSON of absent record: err = %v, want ErrNotFound", err)
	}
	if _, err := s.PutJSON(ctx, "x", "bad", func() {}, nil); err == nil {
		t.Error("PutJSON of a func: want an error")
	}
}

func TestPutBlobIdempotent(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", []byte{}},
		{"small", []byte("hello")},
		{"html", htmlLike(rand.New(rand.NewPCG(1, 2)), 200_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := s.PutBlob(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if h != HashOf(tt.data) {
				t.Fatalf("PutBlob hash = %s, want %s", h, HashOf(tt.data))
			}
			path := s.blobPath(h)
			if want := filepath.Join(s.Dir(), "blobs", string(h[:2]), string(h)+".zst"); path != want {
				t.Fatalf("blob path = %s, want %s", path, want)
			}
			// Backdate the file so that a rewrite shows even on coarse clocks.
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			h2, err := s.PutBlob(tt.data)
			if err != nil || h2 != h {
				t.Fatalf("second PutBlob = %s, %v; want %s", h2, err, h)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.ModTime().Equal(old) {
				t.Errorf("second PutBlob rewrote the blob: mtime %v, want %v", fi.ModTime(), old)
			}
			got, err := s.Blob(h)
			if err != nil || !bytes.Equal(got, tt.data) {
				t.Errorf("Blob = %d bytes, %v; want %d bytes", len(got), err, len(tt.data))
			}
			if !s.HasBlob(h) {
				t.Error("HasBlob = false after PutBlob")
			}
			entries, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".tmp-") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
	if len(s.enc.EncodeAll([]byte("x"), nil)) == 0 {
		t.Error("encoder produced nothing")
	}
}

func TestBlobAbsentAndInvalid(t *testing.T) {
	s := openTest(t, t.TempDir())
	absent := HashOf([]byte("never stored"))
	if _, err := s.Blob(absent); !errors.Is(err, ErrNotFound) {
		t.Errorf("Blob(absent) err = %v, want ErrNotFound", err)
	}
	if s.HasBlob(absent) {
		t.Error("HasBlob(absent) = true")
	}
	for _, h := range []Hash{"", "../../etc/passwd", Hash(strings.Repeat("A", 64)), Hash(strings.Repeat("a", 63))} {
		if _, err := s.Blob(h); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Blob(%q) err = %v, want an invalid hash error", h, err)
		}
		if s.HasBlob(h) {
			t.Errorf("HasBlob(%q) = true", h)
		}
	}
}

func TestCorruptBlob(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		damage  func(path string) error
		wantErr error // from Blob; GetJSON always reports ErrCorrupt
	}{
		{"flip byte", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x40
			return os.WriteFile(p, b, 0o644)
		}, ErrCorrupt},
		{"flip last byte", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)-1] ^= 0x01
			return os.WriteFile(p, b, 0o644)
		}, ErrCorrupt},
		{"truncate half", func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()/2)
		}, ErrCorrupt},
		{"truncate to zero", func(p string) error { return os.Truncate(p, 0) }, ErrCorrupt},
		{"replace with another blob", func(p string) error {
			return os.WriteFile(p, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x01, 0x09, 0x00, 0x00, 0x78}, 0o644)
		}, ErrCorrupt},
		{"delete", os.Remove, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			v := doc{ID: "2507.11127", Title: string(htmlLike(rand.New(rand.NewPCG(3, 4)), 20_000))}
			h, err := s.PutJSON(ctx, "2507.11127", "document", v, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.damage(s.blobPath(h)); err != nil {
				t.Fatal(err)
			}
			_, err = s.Blob(h)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Blob err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), string(h)) {
				t.Errorf("Blob err = %v, want it to name %s", err, h)
			}
			if s.HasBlob(h) {
				t.Error("HasBlob = true for a damaged blob")
			}
			var got doc
			if _, err := s.GetJSON(ctx, "2507.11127", "document", &got); !errors.Is(err, ErrCorrupt) {
				t.Errorf("GetJSON err = %v, want ErrCorrupt", err)
			}
			// Fetching again repairs the blob in place.
			if _, err := s.PutJSON(ctx, "2507.11127", "document", v, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetJSON(ctx, "2507.11127", "document", &got); err != nil || !reflect.DeepEqual(got, v) {
				t.Errorf("GetJSON after re-put: err = %v, equal = %v", err, reflect.DeepEqual(got, v))
			}
		})
	}
}

func TestItemIDs(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "curate-data")
	s := openTest(t, dir)

	valid := []string{
		"2507.11127",
		"hep-th/9901001",
		"math.GT/0309136v2",
		"../../etc/passwd",
		"/etc/passwd",
		`..\..\windows`,
		"topic:large language models",
		"s2:0123456789abcdef",
		"ünïcödé",
		strings.Repeat("x", maxKeyLen),
	}
	for _, item := range valid {
		if _, err := s.PutBytes(ctx, item, "raw", []byte("page of "+item), nil); err != nil {
			t.Errorf("PutBytes(%q): %v", item, err)
			continue
		}
		if err := s.SetStatus(ctx, item, "fetch", StatusDone, ""); err != nil {
			t.Errorf("SetStatus(%q): %v", item, err)
		}
		got, _, err := s.GetBytes(ctx, item, "raw")
		if err != nil || string(got) != "page of "+item {
			t.Errorf("GetBytes(%q) = %q, %v", item, got, err)
		}
	}
	items, err := s.Items(ctx, "raw")
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values(valid)); !slices.Equal(items, want) {
		t.Errorf("Items = %q, want %q", items, want)
	}

	invalid := []string{"", "a\x00b", "line\nbreak", "tab\there", "del\x7f", "\xff\xfe", strings.Repeat("x", maxKeyLen+1)}
	for _, item := range invalid {
		if _, err := s.PutBytes(ctx, item, "raw", []byte("x"), nil); err == nil {
			t.Errorf("PutBytes(%q): want an error", item)
		}
		if _, _, err := s.GetBytes(ctx, item, "raw"); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("GetBytes(%q) err = %v, want an invalid id error", item, err)
		}
		if err := s.SetStatus(ctx, item, "fetch", StatusDone, ""); err == nil {
			t.Errorf("SetStatus(%q): want an error", item)
		}
		if err := s.SetValue(ctx, item, []byte("x")); err == nil {
			t.Errorf("SetValue(%q): want an error", item)
		}
	}
	if _, err := s.PutBytes(ctx, "ok", "", []byte("x"), nil); err == nil {
		t.Error("PutBytes with empty kind: want an error")
	}
	if err := s.SetStatus(ctx, "ok", "bad\nstage", StatusDone, ""); err == nil {
		t.Error("SetStatus with control character in stage: want an error")
	}

	// Nothing outside the store directory, and only blobs and the ledger in it.
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "curate-data" {
		t.Errorf("parent of store holds %v, want only curate-data", entries)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case strings.HasPrefix(rel, "ledger.db"):
		case strings.HasPrefix(rel, "blobs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".zst") && len(rel) == len("blobs/ab/")+64+len(".zst"):
		default:
			t.Errorf("unexpected file %s in store", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLedger(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	const item, stage = "2507.11127", "fetch"

	if _, err := s.Status(ctx, item, stage); !errors.Is(err, ErrNotFound) {
		t.Errorf("Status of absent entry: err = %v, want ErrNotFound", err)
	}
	steps := []struct {
		status, errMsg string
		wantAttempts   int
	}{
		{StatusPending, "", 0},
		{StatusRunning, "", 1},
		{StatusFailed, "http 503", 1},
		{StatusRunning, "", 2},
		{StatusDone, "", 2},
		{StatusSkipped, "", 2},
	}
	for _, st := range steps {
		if err := s.SetStatus(ctx, item, stage, st.status, st.errMsg); err != nil {
			t.Fatal(err)
		}
		e, err := s.Status(ctx, item, stage)
		if err != nil {
			t.Fatal(err)
		}
		want := Entry{Item: item, Stage: stage, Status: st.status, Attempts: st.wantAttempts, Error: st.errMsg, RunID: s.RunID(), UpdatedAt: e.UpdatedAt}
		if e != want {
			t.Errorf("after SetStatus(%s, %q): Status = %+v, want %+v", st.status, st.errMsg, e, want)
		}
	}
	if err := s.SetStatus(ctx, item, stage, "finished", ""); err == nil {
		t.Error("SetStatus with unknown status: want an error")
	}
	if _, err := s.ByStatus(ctx, stage, "finished"); err == nil {
		t.Error("ByStatus with unknown status: want an error")
	}

	for _, st := range []string{"parse", "classify", "card:gold"} {
		if err := s.SetStatus(ctx, item, st, StatusPending, ""); err != nil {
			t.Fatal(err)
		}
	}
	es, err := s.Entries(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	for _, e := range es {
		stages = append(stages, e.Stage)
	}
	if want := []string{"card:gold", "classify", "fetch", "parse"}; !slices.Equal(stages, want) {
		t.Errorf("Entries stages = %v, want %v", stages, want)
	}
	if s.RunID() == "" {
		t.Error("RunID is empty")
	}
}

func TestCounts(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	set := map[string][]string{ // status → items, in stage fetch
		StatusDone:    {"a", "b", "c"},
		StatusFailed:  {"d"},
		StatusPending: {"e", "f"},
	}
	for status, items := range set {
		for _, item := range items {
			if err := s.SetStatus(ctx, item, "fetch", status, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, item := range []string{"a", "b"} {
		if err := s.SetStatus(ctx, item, "parse", StatusRunning, ""); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int{
		"fetch": {StatusDone: 3, StatusFailed: 1, StatusPending: 2},
		"parse": {StatusRunning: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}

	tests := []struct {
		stage, status string
		want          []string
	}{
		{"fetch", StatusDone, []string{"a", "b", "c"}},
		{"fetch", StatusPending, []string{"e", "f"}},
		{"fetch", StatusSkipped, nil},
		{"parse", StatusRunning, []string{"a", "b"}},
		{"nosuchstage", StatusDone, nil},
	}
	for _, tt := range tests {
		es, err := s.ByStatus(ctx, tt.stage, tt.status)
		if err != nil {
			t.Fatal(err)
		}
		var items []string
		for _, e := range es {
			items = append(items, e.Item)
		}
		if !slices.Equal(items, tt.want) {
			t.Errorf("ByStatus(%s, %s) = %v, want %v", tt.stage, tt.status, items, tt.want)
		}
	}

	empty := openTest(t, t.TempDir())
	if got, err := empty.Counts(ctx); err != nil || len(got) != 0 {
		t.Errorf("Counts of empty store = %v, %v; want empty", got, err)
	}
}

func TestValue(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	if _, err := s.Value(ctx, "last_harvest"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Value of absent key: err = %v, want ErrNotFound", err)
	}
	tests := []struct {
		key   string
		value []byte
	}{
		{"last_harvest", []byte("2026-07-31")},
		{"last_harvest", []byte("2026-08-01")},
		{"run:" + s.RunID(), []byte(`{"fetched":12,"failed":1}`)},
		{"binary", []byte{0, 1, 2, 0xff}},
		{"empty", []byte{}},
		{"nil", nil},
	}
	for _, tt := range tests {
		if err := s.SetValue(ctx, tt.key, tt.value); err != nil {
			t.Fatal(err)
		}
		got, err := s.Value(ctx, tt.key)
		if err != nil || !bytes.Equal(got, tt.value) {
			t.Errorf("Value(%q) = %q, %v; want %q", tt.key, got, err, tt.value)
		}
	}
}

func TestConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	const workers, writes = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range writes {
				item := fmt.Sprintf("%d.%05d", w, i)
				var err error
				switch i % 3 {
				case 0:
					_, err = s.PutJSON(ctx, item, "document", doc{ID: item}, map[string]string{"w": strconv.Itoa(w)})
				case 1:
					err = s.SetStatus(ctx, item, "fetch", StatusRunning, "")
				case 2:
					_, err = s.PutBlob([]byte(item))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	items, err := s.Items(ctx, "document")
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := workers * ((writes + 2) / 3)
	if len(items) != wantDocs {
		t.Errorf("%d document records, want %d", len(items), wantDocs)
	}
	counts, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := counts["fetch"][StatusRunning], workers*((writes+1)/3); got != want {
		t.Errorf("%d running entries, want %d", got, want)
	}
}

// TestReadWhileWriting opens the store twice, as a second process (curate
// status) would, and reads while the first writes.
func TestReadWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writer := openTest(t, dir)
	reader := openTest(t, dir)
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			item := fmt.Sprintf("2507.%05d", i)
			if _, err := writer.PutJSON(ctx, item, "document", doc{ID: item}, nil); err != nil {
				done <- err
				return
			}
			if err := writer.SetStatus(ctx, item, "parse", StatusDone, ""); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	last := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		items, err := reader.Items(ctx, "document")
		if err != nil {
			t.Fatalf("read while writing: %v", err)
		}
		if len(items) < last {
			t.Fatalf("reader saw %d items after %d", len(items), last)
		}
		last = len(items)
		if last > 0 {
			var d doc
			if _, err := reader.GetJSON(ctx, items[last-1], "document", &d); err != nil {
				t.Fatalf("read while writing: %v", err)
			}
		}
		if _, err := reader.Counts(ctx); err != nil {
			t.Fatalf("read while writing: %v", err)
		}
	}
	counts, err := reader.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts["parse"][StatusDone] != n {
		t.Errorf("reader sees %d done, want %d", counts["parse"][StatusDone], n)
	}
}

func TestMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := makeTree(dir); err != nil {
		t.Fatal(err)
	}
	// Write a store as schema version 1 left it: no kv table, no indexes.
	db, err := sql.Open("sqlite", filepath.Join(dir, "ledger.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"id":"2507.11127","title":"Old"}`)
	h := HashOf(payload)
	if err := writeFileSync(filepath.Join(dir, "blobs", string(h[:2]), string(h)+".zst"), mustZstd(t, payload)); err != nil {
		t.Fatal(err)
	}
	now := formatTime(time.Now())
	if _, err := db.Exec(`INSERT INTO records VALUES ('2507.11127', 'document', ?, ?, '{"source":"arxiv"}')`, string(h), now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO ledger VALUES ('2507.11127', 'fetch', 'done', 1, '', ?, 'oldrun')`, now); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openTest(t, dir)
	var d doc
	rec, err := s.GetJSON(ctx, "2507.11127", "document", &d)
	if err != nil || d.Title != "Old" || rec.Meta["source"] != "arxiv" {
		t.Errorf("GetJSON after migration = %+v, %+v, %v", d, rec, err)
	}
	e, err := s.Status(ctx, "2507.11127", "fetch")
	if err != nil || e.Status != StatusDone || e.RunID != "oldrun" {
		t.Errorf("Status after migration = %+v, %v", e, err)
	}
	if err := s.SetValue(ctx, "k", []byte("v")); err != nil {
		t.Errorf("SetValue after migration: %v", err)
	}
	var version string
	if err := s.r.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(len(migrations)); version != want {
		t.Errorf("schema_version = %s, want %s", version, want)
	}
	var indexes int
	if err := s.r.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('ledger_stage_status', 'records_kind')`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 2 {
		t.Errorf("%d of 2 indexes after migration", indexes)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if _, err := s.w.Exec(`UPDATE meta SET value = ? WHERE key = 'schema_version'`, strconv.Itoa(len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("Open of a newer store: err = %v, want a schema version error", err)
	}
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBytes(ctx, "a", "raw", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if got, _, err := s2.GetBytes(ctx, "a", "raw"); err != nil || string(got) != "x" {
		t.Errorf("GetBytes after reopen = %q, %v", got, err)
	}
	if s2.RunID() == s.RunID() {
		t.Errorf("two Opens share run id %s", s.RunID())
	}
}

func mustZstd(t *testing.T, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// htmlLike returns about n bytes of LaTeXML-flavoured HTML with varied words,
// so compression ratios resemble real arXiv pages rather than a repeated
// string.
func htmlLike(r *rand.Rand, n int) []byte {
	words := strings.Fields(`the of and a to in is we that for model data on with
		as this are by be results method learning our which from can network theorem
		equation proof let where training figure table section values neural graph`)
	var b bytes.Buffer
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Paper</title></head><body><article class="ltx_document">`)
	for b.Len() < n {
		fmt.Fprintf(&b, `<section id="S%d" class="ltx_section"><h2 class="ltx_title ltx_title_section">`, r.IntN(20))
		for range 3 + r.IntN(5) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		fmt.Fprintf(&b, `</h2><div id="p%d" class="ltx_para"><p class="ltx_p">`, r.IntN(10000))
		for range 40 + r.IntN(80) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(12) == 0 {
				fmt.Fprintf(&b, ` <math alttext="x_{%d}" class="ltx_Math"><mi>x</mi></math>`, r.IntN(100))
			}
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, `<cite class="ltx_cite">[<a href="#bib.bib%d" class="ltx_ref">%d</a>]</cite></p></div></section>`, r.IntN(60), r.IntN(60))
	}
	b.WriteString(`</article></body></html>`)
	return b.Bytes()[:n]
}

func BenchmarkPutBlob(b *testing.B) {
	s := openTest(b, b.TempDir())
	data := htmlLike(rand.New(rand.NewPCG(5, 6)), 1<<20)
	b.SetBytes(int64(len(data)))
	var zsize int64
	i := 0
	for b.Loop() {
		copy(data, fmt.Sprintf("<!-- %012d -->", i)) // a new blob every time
		i++
		h, err := s.PutBlob(data)
		if err != nil {
			b.Fatal(err)
		}
		if zsize == 0 {
			fi, err := os.Stat(s.blobPath(h))
			if err != nil {
				b.Fatal(err)
			}
			zsize = fi.Size()
		}
	}
	b.ReportMetric(float64(zsize)/float64(len(data)), "ratio")
}

func BenchmarkPutJSON(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, b.TempDir())
	r := rand.New(rand.NewPCG(7, 8))
	v := doc{Title: string(htmlLike(r, 4000))}
	for i := range 50 {
		v.Refs = append(v.Refs, fmt.Sprintf("2401.%05d", i))
	}
	i := 0
	for b.Loop() {
		v.ID = fmt.Sprintf("2507.%05d", i)
		i++
		if _, err := s.PutJSON(ctx, v.ID, "document", v, map[string]string{"source": "arxiv"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPragmas checks that the DSN settings reach every pooled connection.
func TestPragmas(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	tests := []struct {
		name string
		db   *sql.DB
		want map[string]string
	}{
		{"writer", s.w, map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "synchronous": "1", "query_only": "0"}},
		{"reader", s.r, map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "query_only": "1"}},
	}
	for _, tt := range tests {
		// Hold several connections at once so the pool opens more than one.
		var conns []*sql.Conn
		for range 3 {
			c, err := tt.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			if tt.db == s.w {
				break // the writer pool has one connection
			}
		}
		for i, c := range conns {
			for pragma, want := range tt.want {
				var got string
				if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s connection %d: PRAGMA %s = %s, want %s", tt.name, i, pragma, got, want)
				}
			}
		}
		for _, c := range conns {
			c.Close()
		}
	}
	if _, err := s.r.ExecContext(ctx, `INSERT INTO kv VALUES ('k', x'00', '')`); err == nil {
		t.Error("write through the read pool succeeded")
	}
}

// An item begun with Begin counts an attempt only when End says work was
// done: a rerun that reuses what is stored leaves the count alone.
func TestBeginEndAttempts(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	steps := []struct {
		worked bool
		status string
		want   int
	}{
		{true, StatusDone, 1},
		{false, StatusDone, 1},
		{false, StatusDone, 1},
		{true, StatusFailed, 2},
		{true, StatusDone, 3},
	}
	for i, step := range steps {
		if err := s.Begin(ctx, "2401.00001", "citegraph"); err != nil {
			t.Fatal(err)
		}
		if e, err := s.Status(ctx, "2401.00001", "citegraph"); err != nil || e.Status != StatusRunning {
			t.Fatalf("step %d: after Begin: %+v, %v", i, e, err)
		}
		if err := s.End(ctx, "2401.00001", "citegraph", step.status, "", step.worked); err != nil {
			t.Fatal(err)
		}
		e, err := s.Status(ctx, "2401.00001", "citegraph")
		if err != nil || e.Status != step.status || e.Attempts != step.want {
			t.Errorf("step %d: %+v, %v; want %s after %d attempts", i, e, err, step.status, step.want)
		}
	}
	if err := s.End(ctx, "2401.00001", "citegraph", "bogus", "", true); err == nil {
		t.Error("End accepted an unknown status")
	}
}
