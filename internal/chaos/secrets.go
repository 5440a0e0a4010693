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

// ScanFiles calls check on every file under dir, and on what every zstd
// frame in it inflates to (a store's blobs, and a frame inside any other
// file), as far as it inflates: a blob a kill cut short is read up to
// where it stops.
func ScanFiles(dir string, check func(where string, b []byte)) (files, frames int, err error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxInflated), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return 0, 0, err
	}
	defer dec.Close()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		check(p, b)
		for off := 0; ; {
			i := bytes.Index(b[off:], zstdMagic)
			if i < 0 {
				break
			}
			off += i
			if err := dec.Reset(bytes.NewReader(b[off:])); err == nil {
				// What it inflates to before an error (a frame cut short,
				// or the bytes after it) is scanned all the same.
				out, _ := io.ReadAll(io.LimitReader(dec, maxInflated))
				if len(out) > 0 {
					frames++
					check(fmt.Sprintf("%s (zstd frame at %d)", p, off), out)
				}
			}
			off += len(zstdMagic)
		}
		return nil
	})
	return files, frames, err
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
