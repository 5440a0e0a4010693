package arxivmeta_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// readTestdata returns testdata/snapshot.jsonl: hand-written lines in the
// snapshot's shape (fictional papers).
func readTestdata(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snapshot.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t *testing.T, path, indexDir string) *arxivmeta.Snapshot {
	t.Helper()
	s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC1123, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestVersions reads version histories from a plain and a gzip snapshot:
// new- and old-style IDs, asked with and without a version, histories of
// one and of several versions, padded and unpadded days.
func TestVersions(t *testing.T) {
	data := readTestdata(t)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", data}, {"gzip", gz(t, data)}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, write(t, dir, "snap", tc.data), filepath.Join(dir, "index"))
			info := s.Info()
			if !info.Built || info.Compressed != (tc.name == "gzip") || info.Papers != 7 || info.Duplicates != 1 || info.Skipped != 0 {
				t.Errorf("info %+v", info)
			}
			if want := date("Tue, 10 Sep 2024 08:00:00 GMT"); !info.AsOf.Equal(want) {
				t.Errorf("as of %s, want %s (the latest version date)", info.AsOf, want)
			}
			for _, tt := range []struct {
				id   string
				want []record.PaperVersion
			}{
				{"0704.0001", []record.PaperVersion{{Version: 1, Date: date("Mon, 02 Apr 2007 19:18:42 GMT")}, {Version: 2, Date: date("Tue, 24 Jul 2007 20:10:27 GMT")}}},
				{"0704.0001v2", []record.PaperVersion{{Version: 1, Date: date("Mon, 02 Apr 2007 19:18:42 GMT")}, {Version: 2, Date: date("Tue, 24 Jul 2007 20:10:27 GMT")}}},
				{"hep-th/9901001", []record.PaperVersion{{Version: 1, Date: date("Mon, 04 Jan 1999 17:23:40 GMT")}}},
				{"math.GT/0309136", []record.PaperVersion{{Version: 1, Date: date("Mon, 08 Sep 2003 10:00:00 GMT")}, {Version: 2, Date: date("Wed, 12 Nov 2003 11:00:00 GMT")}}},
				{"2401.00001", []record.PaperVersion{{Version: 1, Date: date("Mon, 01 Jan 2024 10:00:00 GMT")}, {Version: 2, Date: date("Fri, 02 Feb 2024 10:00:00 GMT")}, {Version: 3, Date: date("Tue, 10 Sep 2024 08:00:00 GMT")}}},
				// Listed twice: the later line counts.
				{"2402.00002", []record.PaperVersion{{Version: 1, Date: date("Thu, 01 Feb 2024 09:00:00 GMT")}, {Version: 2, Date: date("Mon, 01 Apr 2024 09:00:00 GMT")}}},
			} {
				got, err := s.Versions(tt.id)
				if err != nil {
					t.Errorf("%s: %v", tt.id, err)
					continue
				}
				if got.From != record.VersionsFromSnapshot || !got.AsOf.Equal(info.AsOf) || !slices.Equal(got.Versions, tt.want) {
					t.Errorf("%s: %+v, want %v", tt.id, got, tt.want)
				}
				if !s.Has(tt.id) {
					t.Errorf("%s: Has false", tt.id)
				}
			}
			// Missing, and not an id at all.
			if _, err := s.Versions("2501.99999"); !errors.Is(err, arxivmeta.ErrNotFound) || !strings.Contains(err.Error(), "2501.99999") {
				t.Errorf("missing paper: %v", err)
			}
			if _, err := s.Versions("not-an-id"); err == nil || errors.Is(err, arxivmeta.ErrNotFound) {
				t.Errorf("not an id: %v", err)
			}
		})
	}
}

// TestUnusableHistories: a version list without v1, an empty one, a
// version that is not vN and a date arXiv would not write are errors
// naming the file's line and the paper; other papers are unaffected.
func TestUnusableHistories(t *testing.T) {
	lines := []string{
		`{"id":"2403.00001","versions":[{"version":"v1","created":"Fri, 1 Mar 2024 10:00:00 GMT"}]}`,
		`{"id":"2403.00002","versions":[{"version":"v2","created":"Fri, 1 Mar 2024 10:00:00 GMT"}]}`,
		`{"id":"2403.00003","versions":[]}`,
		`{"id":"2403.00004","versions":[{"version":"one","created":"Fri, 1 Mar 2024 10:00:00 GMT"}]}`,
		`{"id":"2403.00005","versions":[{"version":"v1","created":"2024-03-01"}]}`,
	}
	dir := t.TempDir()
	path := write(t, dir, "snap.json", []byte(strings.Join(lines, "\n")+"\n"))
	s := open(t, path, dir)
	if _, err := s.Versions("2403.00001"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, want string
		noV1     bool
	}{
		{"2403.00002", "line 2: paper 2403.00002: the version list has no v1 (versions [v2])", true},
		{"2403.00003", "line 3: paper 2403.00003: the version list has no v1", true},
		{"2403.00004", `line 4: paper 2403.00004: version "one" is not vN`, false},
		{"2403.00005", `line 5: paper 2403.00005: version v1 date "2024-03-01" is not a date as arXiv writes one`, false},
	} {
		_, err := s.Versions(tt.id)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) || errors.Is(err, record.ErrNoV1) != tt.noV1 {
			t.Errorf("%s: %v, want %q naming %s (ErrNoV1 %v)", tt.id, err, tt.want, path, tt.noV1)
		}
	}
}

// TestNotASnapshot: files that are not a snapshot are refused at Open,
// naming the file and saying what is expected; nothing is indexed.
func TestNotASnapshot(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "the file is empty"},
		{"blank lines", []byte("\n\n  \n"), "no paper's line"},
		{"csv", []byte("id,title\n2401.00001,A paper\n"), "line 1 is not a JSON object"},
		{"json array", []byte(`[{"id":"2401.00001","versions":[]}]` + "\n"), "opens a JSON array"},
		{"other objects", []byte(`{"paperId":"abc","title":"x"}` + "\n"), `line 1 has no "id" and "versions"`},
		{"zip", []byte("PK\x03\x04rest of a zip"), "zip archive"},
		{"gzip of text", gz(t, []byte("hello world\n")), "line 1 is not a JSON object"},
		{"broken gzip", []byte{0x1f, 0x8b, 0x08, 0, 0, 0}, "gzip"},
	} {
		dir := t.TempDir()
		path := write(t, dir, "snap", tt.data)
		s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: filepath.Join(dir, "index")})
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", tt.name)
			continue
		}
		if !errors.Is(err, arxivmeta.ErrNotSnapshot) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrNotSnapshot naming %s and saying %q", tt.name, err, path, tt.want)
		}
		if idx, _ := filepath.Glob(filepath.Join(dir, "index", "*.idx")); len(idx) > 0 {
			t.Errorf("%s: an index was written: %v", tt.name, idx)
		}
	}
	dir := t.TempDir()
	if _, err := arxivmeta.Open(context.Background(), dir, arxivmeta.Options{IndexDir: dir}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := arxivmeta.Open(context.Background(), filepath.Join(dir, "none.json"), arxivmeta.Options{IndexDir: dir}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := arxivmeta.Open(context.Background(), write(t, dir, "s", readTestdata(t)), arxivmeta.Options{}); err == nil {
		t.Error("opened without an index directory")
	}
}

// TestSkippedLines: after the first paper's line, a damaged line is
// skipped and counted, not fatal.
func TestSkippedLines(t *testing.T) {
	data := `{"id":"2403.00001","versions":[{"version":"v1","created":"Fri, 1 Mar 2024 10:00:00 GMT"}]}
{"id":"2403.00002","versions":[{"version":"v1","cre
{"id":"not an id","versions":[]}
{"id":"2403.00003","versions":[{"version":"v1","created":"Sat, 2 Mar 2024 10:00:00 GMT"}]}`
	dir := t.TempDir()
	s := open(t, write(t, dir, "snap", []byte(data)), dir)
	if info := s.Info(); info.Papers != 2 || info.Skipped != 2 {
		t.Errorf("info %+v, want 2 papers and 2 skipped", info)
	}
	if _, err := s.Versions("2403.00003"); err != nil {
		t.Error(err)
	}
	if _, err := s.Versions("2403.00002"); !errors.Is(err, arxivmeta.ErrNotFound) {
		t.Errorf("the damaged paper: %v", err)
	}
}

// TestIndexReuse: the index is built once and reused while the file is
// unchanged; a changed file (appended to, or rewritten with the same size
// and modification time) is indexed again; a damaged index is rebuilt.
func TestIndexReuse(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "index")
	data := readTestdata(t)
	path := write(t, dir, "snap.json", data)
	open(t, path, idx)
	if s := open(t, path, idx); s.Info().Built {
		t.Error("the index of an unchanged file was built again")
	}

	// Appended: a new paper.
	more := append(slices.Clone(data), []byte("\n"+`{"id":"2405.00009","versions":[{"version":"v1","created":"Wed, 1 May 2024 10:00:00 GMT"}]}`+"\n")...)
	write(t, dir, "snap.json", more)
	s := open(t, path, idx)
	if !s.Info().Built || !s.Has("2405.00009") {
		t.Errorf("appended file: built %v, has the new paper %v", s.Info().Built, s.Has("2405.00009"))
	}

	// Same size and time, another content.
	st, _ := os.Stat(path)
	changed := bytes.Replace(more, []byte("2405.00009"), []byte("2405.00008"), 1)
	write(t, dir, "snap.json", changed)
	os.Chtimes(path, st.ModTime(), st.ModTime())
	s = open(t, path, idx)
	if !s.Info().Built || !s.Has("2405.00008") || s.Has("2405.00009") {
		t.Errorf("rewritten file: built %v", s.Info().Built)
	}

	// A damaged index.
	files, _ := filepath.Glob(filepath.Join(idx, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("index files %v, want one", files)
	}
	os.WriteFile(files[0], []byte("CRAMIDX2 truncated"), 0o644)
	if s := open(t, path, idx); !s.Info().Built || !s.Has("2405.00008") {
		t.Error("a damaged index was not rebuilt")
	}
	if tmp, _ := filepath.Glob(filepath.Join(idx, ".*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestLines returns the papers' own lines, in file order, from plain and
// gzip files, and the IDs the snapshot lacks.
func TestLines(t *testing.T) {
	data := readTestdata(t)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", data}, {"gzip", gz(t, data)}} {
		dir := t.TempDir()
		s := open(t, write(t, dir, "snap", tc.data), dir)
		var got []string
		missing, err := s.Lines(context.Background(), []string{"2401.00001", "hep-th/9901001", "2501.99999", "0704.0001v1", "2402.00002"},
			func(id string, line []byte) error {
				var v struct {
					ID    string `json:"id"`
					Title string `json:"title"`
				}
				if err := json.Unmarshal(line, &v); err != nil {
					return fmt.Errorf("%s: %w", id, err)
				}
				got = append(got, id+" "+v.Title)
				return nil
			})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := []string{"0704.0001 Calculation of prompt diphoton production", "hep-th/9901001 Boundary terms for a toy brane",
			"2401.00001 Three versions of one idea", "2402.00002 Listed twice, second"}
		if !slices.Equal(got, want) || !slices.Equal(missing, []string{"2501.99999"}) {
			t.Errorf("%s: lines %q missing %v, want %q", tc.name, got, missing, want)
		}
	}
}

// TestLongLine: a line longer than the reader's buffer is read whole.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("word ", 500000) // 2.5 MB of abstract
	data := fmt.Sprintf(`{"id":"2403.00001","versions":[{"version":"v1","created":"Fri, 1 Mar 2024 10:00:00 GMT"}],"abstract":%q}
{"id":"2403.00002","versions":[{"version":"v1","created":"Sat, 2 Mar 2024 10:00:00 GMT"}]}
`, long)
	dir := t.TempDir()
	s := open(t, write(t, dir, "snap", []byte(data)), dir)
	for _, id := range []string{"2403.00001", "2403.00002"} {
		if _, err := s.Versions(id); err != nil {
			t.Error(err)
		}
	}
	_, err := s.Lines(context.Background(), []string{"2403.00001"}, func(_ string, line []byte) error {
		if !bytes.Contains(line, []byte(long)) || line[len(line)-1] != '}' {
			return errors.New("the long line is not whole")
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}
