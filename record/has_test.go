package record_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Has answers false only for a record that is absent (a lost one
// included, on a healed store); any other failure to read is an error, so
// that no caller takes it for absence and asks again without a word.
func TestHas(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := &record.ArxivMeta{Found: true, CheckedAt: "2026-12-01T00:00:00Z"}
	h, err := record.ArxivMetas.Put(ctx, st, "2501.00001", meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.ArxivMetas.Put(ctx, st, "2501.00002", &record.ArxivMeta{CheckedAt: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	check := func(name, item string, want bool, wantErr bool) {
		t.Helper()
		ok, err := record.ArxivMetas.Has(ctx, st, item)
		if ok != want || (err != nil) != wantErr {
			t.Errorf("%s: Has = %v, %v; want %v, error %v", name, ok, err, want, wantErr)
		}
	}
	check("stored", "2501.00001", true, false)
	check("absent", "2501.99999", false, false)
	blob := string(h)
	if err := os.Remove(filepath.Join(dir, "blobs", blob[:2], blob+".zst")); err != nil {
		t.Fatal(err)
	}
	check("lost, not healed", "2501.00001", false, true)
	st.Heal(nil)
	check("lost, healed", "2501.00001", false, false)
	check("another, stored", "2501.00002", true, false)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	check("unreadable (a closed store)", "2501.00002", false, true)
}
