package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/groundwork/curate/dataset"
	"github.com/klauspost/compress/zstd"
)

// Secret forms: the harness looks for a planted key in the ways an echo
// writes it, independently of curate's own redaction (package redact):
// as is, URL-encoded, JSON- and HTML-escaped, inside base64 at each of its
// three alignments, and the marker every planted key carries.

// plantMark is in every key the harness plants: found anywhere, some part
// of a key got through.
const plantMark = "PLANTED"

// SecretForms returns the ways an echo may write k.
func SecretForms(k string) []string {
	j, _ := json.Marshal(k)
	out := []string{k, url.QueryEscape(k), url.PathEscape(k), string(j[1 : len(j)-1]), strings.ReplaceAll(k, "&", "&amp;")}
	for shift := range 3 {
		sub := k[shift:]
		sub = sub[:len(sub)/3*3]
		out = append(out, base64.RawStdEncoding.EncodeToString([]byte(sub)), base64.RawURLEncoding.EncodeToString([]byte(sub)))
	}
	return append(out, plantMark)
}

// Leak is a planted key found where it must not be.
type Leak struct {
	Where, Form, Context string
}

func (l Leak) String() string {
	return fmt.Sprintf("%s holds %q: …%s…", l.Where, l.Form, l.Context)
}

// FindSecret returns the first form of a key in text (ok false when
// there is none).
func FindSecret(where string, text []byte, keys []string) (Leak, bool) {
	for _, k := range keys {
		for _, f := range SecretForms(k) {
			if i := bytes.Index(text, []byte(f)); i >= 0 {
				ctx := text[max(i-60, 0):min(i+len(f)+30, len(text))]
				return Leak{Where: where, Form: f, Context: strings.ToValidUTF8(string(ctx), "?")}, true
			}
		}
	}
	return Leak{}, false
}

// zstdMagic begins every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxInflated bounds what one zstd frame is inflated to for a scan.
const maxInflated = 256 << 20

// scanner looks at bytes and at what every zstd frame in them inflates
// to (a store's blobs, and a frame inside any other value), as far as it
// inflates: a blob a kill cut short is read up to where it stops.
type scanner struct {
	dec    *zstd.Decoder
	check  func(where string, b []byte)
	frames int
}

func newScanner(check func(where string, b []byte)) (*scanner, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxInflated), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &scanner{dec: dec, check: check}, nil
}

func (s *scanner) close() { s.dec.Close() }

func (s *scanner) scan(where string, b []byte) {
	s.check(where, b)
	for off := 0; ; {
		i := bytes.Index(b[off:], zstdMagic)
		if i < 0 {
			return
		}
		off += i
		if err := s.dec.Reset(bytes.NewReader(b[off:])); err == nil {
			// What it inflates to before an error (a frame cut short, or
			// the bytes after it) is scanned all the same.
			out, _ := io.ReadAll(io.LimitReader(s.dec, maxInflated))
			if len(out) > 0 {
				s.frames++
				s.check(fmt.Sprintf("%s (zstd frame at %d)", where, off), out)
			}
		}
		off += len(zstdMagic)
	}
}

// ScanFiles calls check on every file under dir, and on what every zstd
// frame in it inflates to; it returns how many files and frames it saw.
// A database's file holds a long value in pieces (SQLite's overflow
// pages): ScanLedger reads the ledger's values whole.
func ScanFiles(dir string, check func(where string, b []byte)) (files, frames int, err error) {
	s, err := newScanner(check)
	if err != nil {
		return 0, 0, err
	}
	defer s.close()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		s.scan(p, b)
		return nil
	})
	return files, s.frames, err
}

// ScanLedger calls check on every value of every table of a store's
// ledger database, read whole through SQLite (the ledger's error column,
// the records' metadata, the batches' results), and on what every zstd
// frame in one inflates to; it returns how many values it saw. No curate
// may be writing the store.
func ScanLedger(ctx context.Context, storeDir string, check func(where string, b []byte)) (values int, err error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(storeDir, "ledger.db")+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	s, err := newScanner(check)
	if err != nil {
		return 0, err
	}
	defer s.close()
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1`)
	if err != nil {
		return 0, fmt.Errorf("list the tables of %s: %w", storeDir, err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	for _, t := range tables {
		n, err := scanTable(ctx, db, t, func(where string, b []byte) { s.scan(storeDir+" ledger.db "+where, b) })
		values += n
		if err != nil {
			return values, fmt.Errorf("read table %s of %s: %w", t, storeDir, err)
		}
	}
	return values, nil
}

// scanTable calls scan on every value of table t that is text or bytes,
// named by table, row and column.
func scanTable(ctx context.Context, db *sql.DB, t string, scan func(where string, b []byte)) (int, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for row := 1; rows.Next(); row++ {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			var b []byte
			switch v := v.(type) {
			case string:
				b = []byte(v)
			case []byte:
				b = v
			default:
				continue
			}
			n++
			scan(fmt.Sprintf("%s row %d %s", t, row, cols[i]), b)
		}
	}
	return n, rows.Err()
}

// LedgerItems lists every item of a store's ledger (what curate show
// takes); no curate may be writing it.
func LedgerItems(ctx context.Context, storeDir string) ([]string, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(storeDir, "ledger.db")+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT item FROM ledger ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("read the items of %s: %w", storeDir, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var it string
		if err := rows.Scan(&it); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// DatasetRows returns a published dataset's rows and dropped list as
// JSON (its shards are compressed: a scan of their bytes finds nothing),
// and how many instances it holds.
func DatasetRows(ctx context.Context, out string) ([]byte, int, error) {
	pub, err := dataset.ReadDataset(ctx, out)
	if err != nil {
		return nil, 0, err
	}
	b, err := json.Marshal(pub)
	return b, len(pub.Instances), err
}
