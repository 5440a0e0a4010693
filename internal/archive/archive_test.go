package archive_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/internal/archive"
	"github.com/groundwork/curate/parse/arxiv"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// page returns a small page of our own, marked with who it stands for.
func page(t *testing.T, base, mark string) []byte {
	return append(readTestdata(t, base), []byte("<!-- "+mark+" -->\n")...)
}

// writeDir writes files (relative path -> content) under a new directory.
func writeDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type zipEntry struct {
	name  string
	body  []byte
	store bool // no compression
}

// writeZip writes a zip in the ar5iv bulk layout to dir/name.
func writeZip(t *testing.T, dir, name string, entries ...zipEntry) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		method := zip.Deflate
		if e.store {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDirectory(t *testing.T) {
	dir := writeDir(t, map[string][]byte{
		"2401.00001.html":        page(t, "page-new.html", "2401.00001"),
		"2401.00002v2.html":      page(t, "page-new.html", "2401.00002v2"),
		"2401.00002v1.html":      page(t, "page-new.html", "2401.00002v1"),
		"hep-th_9901001.html":    page(t, "page-old.html", "hep-th/9901001"),
		"math.GT_0309136v1.html": page(t, "page-old.html", "math.GT/0309136v1"),
		"2402/2402.00003.html":   page(t, "page-new.html", "2402.00003"),
		"index.html":             []byte("<html>a list of papers</html>"),
		"notes.txt":              []byte("not a page"),
		"2401.00004.pdf":         []byte("%PDF"),
	})
	x, err := archive.Open(archive.Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tests := []struct {
		query, mark, entry string
		version            int
	}{
		{"2401.00001", "2401.00001", "2401.00001.html", 0},
		{"arXiv:2401.00001v3", "2401.00001", "2401.00001.html", 0}, // unnamed version stands in
		{"2401.00002", "2401.00002v2", "2401.00002v2.html", 2},     // the highest named version
		{"2401.00002v1", "2401.00002v1", "2401.00002v1.html", 1},
		{"hep-th/9901001", "hep-th/9901001", "hep-th_9901001.html", 0},
		{"hep-th/9901001v2", "hep-th/9901001", "hep-th_9901001.html", 0},
		{"math/0309136", "math.GT/0309136v1", "math.GT_0309136v1.html", 1},
		{"2402.00003", "2402.00003", "2402/2402.00003.html", 0},
	}
	for _, tt := range tests {
		p, err := x.Lookup(tt.query)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.query, err)
			continue
		}
		if !bytes.Contains(p.Body, []byte("<!-- "+tt.mark+" -->")) || p.Entry != tt.entry || p.ID.Version != tt.version {
			t.Errorf("Lookup(%q) = entry %s (v%d), body for %q; want entry %s (v%d)", tt.query, p.Entry, p.ID.Version, markOf(p.Body), tt.entry, tt.version)
		}
		if p.Archive != dir || p.Kind != archive.KindDir || p.Severity != "" || p.Size != int64(len(p.Body)) {
			t.Errorf("Lookup(%q) provenance %+v", tt.query, p.Location)
		}
	}
	// Another named version is never served for a versioned query.
	for _, q := range []string{"2401.00002v3", "2401.00009", "cond-mat/0001001"} {
		if _, err := x.Lookup(q); !errors.Is(err, archive.ErrNotFound) || !strings.Contains(err.Error(), strings.TrimPrefix(q, "arXiv:")) {
			t.Errorf("Lookup(%q): err %v, want ErrNotFound naming it", q, err)
		}
		if x.Has(q) {
			t.Errorf("Has(%q)", q)
		}
	}
	if _, err := x.Lookup("9999.99999"); err == nil || errors.Is(err, archive.ErrNotFound) || !strings.Contains(err.Error(), "9999.99999") {
		t.Errorf("invalid id: err %v, want a parse error naming it", err)
	}
	if src := x.Sources(); len(src) != 1 || src[0].Pages != 6 || src[0].Skipped != 1 || src[0].Kind != archive.KindDir {
		t.Errorf("sources %+v, want 6 pages and index.html skipped", src)
	}
	if x.Len() != 5 {
		t.Errorf("Len = %d, want 5 papers", x.Len())
	}
}

func markOf(b []byte) string {
	i := bytes.LastIndex(b, []byte("<!-- "))
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(b[i+5:])), "-->"))
}

// TestAr5ivZips builds the three zips of the ar5iv bulk layout from our
// own pages and looks papers up across them.
func TestAr5ivZips(t *testing.T) {
	dir := t.TempDir()
	noProblem := writeZip(t, dir, "ar5iv-04-2024-no-problem.zip",
		zipEntry{name: "202404/"},
		zipEntry{name: "202404/1706/1706.03762.html", body: page(t, "page-new.html", "1706.03762 no-problem")},
		zipEntry{name: "202404/1706/1706.03762/figure1.png", body: []byte("\x89PNG")},
		zipEntry{name: "202404/9901/hep-th9901001.html", body: page(t, "page-old.html", "hep-th/9901001"), store: true},
	)
	warnings := writeZip(t, dir, "ar5iv-04-2024-warnings.zip",
		zipEntry{name: "202404/1706/1706.03762.html", body: page(t, "page-new.html", "1706.03762 warning")},
		zipEntry{name: "202404/1801/1801.00001.html", body: page(t, "page-new.html", "1801.00001 warning")},
	)
	errs := writeZip(t, dir, "ar5iv-04-2024-errors.zip",
		zipEntry{name: "202404/1801/1801.00002/index.html", body: page(t, "page-new.html", "1801.00002 error")},
		zipEntry{name: "202404/astro-ph/0001001/index.html", body: page(t, "page-old.html", "astro-ph/0001001 error")},
		zipEntry{name: "202404/README.html", body: []byte("about")},
	)
	// Given in the worse order: severity still decides between equals.
	x, err := archive.Open(archive.Options{}, errs, warnings, noProblem)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tests := []struct {
		query, mark, archivePath, entry, severity string
	}{
		{"1706.03762", "1706.03762 no-problem", noProblem, "202404/1706/1706.03762.html", archive.SeverityNoProblem},
		{"1706.03762v7", "1706.03762 no-problem", noProblem, "202404/1706/1706.03762.html", archive.SeverityNoProblem},
		{"hep-th/9901001", "hep-th/9901001", noProblem, "202404/9901/hep-th9901001.html", archive.SeverityNoProblem},
		{"1801.00001", "1801.00001 warning", warnings, "202404/1801/1801.00001.html", archive.SeverityWarning},
		{"1801.00002", "1801.00002 error", errs, "202404/1801/1801.00002/index.html", archive.SeverityError},
		{"astro-ph/0001001", "astro-ph/0001001 error", errs, "202404/astro-ph/0001001/index.html", archive.SeverityError},
	}
	for _, tt := range tests {
		p, err := x.Lookup(tt.query)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.query, err)
			continue
		}
		if markOf(p.Body) != tt.mark || p.Archive != tt.archivePath || p.Entry != tt.entry || p.Severity != tt.severity || p.Kind != archive.KindZip {
			t.Errorf("Lookup(%q) = %+v with %q; want %s in %s, %s", tt.query, p.Location, markOf(p.Body), tt.entry, tt.archivePath, tt.severity)
		}
	}
	src := x.Sources()
	if len(src) != 3 || src[0].Severity != archive.SeverityError || src[0].Pages != 2 || src[0].Skipped != 1 || src[2].Pages != 2 {
		t.Errorf("sources %+v", src)
	}
}

func TestZipsInDirectory(t *testing.T) {
	dir := t.TempDir()
	writeZip(t, dir, "ar5iv-04-2024-warnings.zip", zipEntry{name: "x/1801.00001.html", body: page(t, "page-new.html", "zip")})
	if err := os.WriteFile(filepath.Join(dir, "2401.00001.html"), page(t, "page-new.html", "file"), 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := archive.Open(archive.Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for q, want := range map[string]string{"1801.00001": "zip", "2401.00001": "file"} {
		if p, err := x.Lookup(q); err != nil || markOf(p.Body) != want {
			t.Errorf("Lookup(%q): %v %v", q, p, err)
		}
	}
}

func TestIndexReadsNoEntry(t *testing.T) {
	// The index comes from the central directory alone: an entry whose data
	// is damaged is found, and only reading it fails, naming the entry.
	dir := t.TempDir()
	body := page(t, "page-new.html", "damaged")
	p := writeZip(t, dir, "ar5iv-04-2024-no-problem.zip",
		zipEntry{name: "202404/2401/2401.00001.html", body: body, store: true},
		zipEntry{name: "202404/2401/2401.00002.html", body: page(t, "page-new.html", "fine"), store: true},
	)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("Tidal Lattices"))
	data[i] ^= 0x20
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := archive.Open(archive.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if loc, err := x.Locate("2401.00001"); err != nil || loc.Size != int64(len(body)) {
		t.Errorf("Locate: %+v %v", loc, err)
	}
	_, err = x.Lookup("2401.00001")
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "202404/2401/2401.00001.html") || !errors.Is(err, zip.ErrChecksum) {
		t.Errorf("damaged entry: err %v, want a checksum error naming the archive and entry", err)
	}
	if pg, err := x.Lookup("2401.00002"); err != nil || markOf(pg.Body) != "fine" {
		t.Errorf("intact entry: %v", err)
	}
}

func TestWantAndMaxPage(t *testing.T) {
	dir := t.TempDir()
	p := writeZip(t, dir, "pages.zip",
		zipEntry{name: "2401.00001.html", body: page(t, "page-new.html", "a")},
		zipEntry{name: "2401.00002.html", body: page(t, "page-new.html", "b")},
		zipEntry{name: "2401.00003.html", body: bytes.Repeat([]byte("x"), 5000)},
	)
	want := map[string]bool{"2401.00001": true, "2401.00003": true}
	x, err := archive.Open(archive.Options{Want: func(id arxiv.ID) bool { return want[id.Canonical()] }, MaxPage: 4096}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Has("2401.00002") || !x.Has("2401.00001") {
		t.Errorf("Want not applied")
	}
	if s := x.Sources()[0]; s.Pages != 2 || s.Filtered != 1 || s.Severity != "" {
		t.Errorf("source %+v", s)
	}
	if _, err := x.Lookup("2401.00003"); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("oversized page: err %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "list.txt")
	os.WriteFile(txt, []byte("2401.00001\n"), 0o644)
	bad := filepath.Join(dir, "broken.zip")
	os.WriteFile(bad, []byte("PK not really"), 0o644)
	empty := t.TempDir()
	misnamed := writeDir(t, map[string][]byte{"paper.html": []byte("<html></html>")})
	for _, p := range []string{filepath.Join(dir, "missing"), txt, bad, empty, misnamed} {
		_, err := archive.Open(archive.Options{}, p)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Open(%s): err %v, want one naming the path", p, err)
		}
	}
}

func TestConcurrentLookups(t *testing.T) {
	dir := t.TempDir()
	var entries []zipEntry
	for _, id := range []string{"2401.00001", "2401.00002", "2401.00003", "2401.00004"} {
		entries = append(entries, zipEntry{name: "202404/2401/" + id + ".html", body: page(t, "page-new.html", id)})
	}
	x, err := archive.Open(archive.Options{}, writeZip(t, dir, "ar5iv-04-2024-no-problem.zip", entries...))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			id := entries[i%4].name[len("202404/2401/") : len(entries[i%4].name)-len(".html")]
			p, err := x.Lookup(id)
			if err != nil || markOf(p.Body) != id {
				t.Errorf("Lookup(%s): %v", id, err)
			}
		})
	}
	wg.Wait()
}
