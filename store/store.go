package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/groundwork/curate/internal/atomicdir"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

var (
	// ErrNotFound is returned when a record, ledger entry, value or blob
	// does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt is returned when a blob is unreadable, fails its hash or is
	// missing although a record points at it.
	ErrCorrupt = errors.New("corrupt blob")
	// ErrLocked is returned by [Store.Lock] when another process holds the
	// store.
	ErrLocked = errors.New("store is locked by another process")
)

// maxKeyLen bounds item ids, kinds, stages and value keys.
const maxKeyLen = 512

// timeLayout is fixed-width UTC, so that the text columns sort by time and
// read well in the sqlite3 shell.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Store is an open store directory. Its methods are safe for concurrent use.
type Store struct {
	dir   string
	runID string
	w     *sql.DB // a single connection: writers queue in Go, not in SQLite's busy handler
	r     *sql.DB // read-only pool; WAL lets these read while w writes
	enc   *zstd.Encoder
	dec   *zstd.Decoder
}

// Open opens the store in dir, creating the directory tree and the ledger if
// they do not exist and migrating a ledger written by an older version.
func Open(ctx context.Context, dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if err := makeTree(abs); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s := &Store{dir: abs, runID: newRunID()}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	// The _pragma values run on every new pooled connection; busy_timeout
	// comes first so that switching to WAL waits for other processes too.
	// _txlock=immediate takes the write lock at BEGIN, so read-then-write
	// transactions cannot fail with SQLITE_BUSY on upgrade.
	path := (&url.URL{Path: filepath.ToSlash(filepath.Join(abs, "ledger.db"))}).EscapedPath()
	s.w, err = sql.Open("sqlite", "file:"+path+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open store %s: ledger: %w", abs, err)
	}
	s.w.SetMaxOpenConns(1)
	if err := migrate(ctx, s.w, len(migrations)); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s.r, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open store %s: ledger: %w", abs, err)
	}
	s.r.SetMaxOpenConns(4)

	// EncodeAll and DecodeAll are safe for concurrent use; zero frames keep
	// even an empty blob a valid, checksummed zstd file.
	s.enc, err = zstd.NewWriter(nil, zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("open store %s: zstd encoder: %w", abs, err)
	}
	s.dec, err = zstd.NewReader(nil)
	if err != nil {
		return nil, fmt.Errorf("open store %s: zstd decoder: %w", abs, err)
	}
	ok = true
	return s, nil
}

// Close closes the ledger. It does not release a lock taken with
// [Store.Lock].
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.enc != nil {
		errs = append(errs, s.enc.Close())
	}
	if s.dec != nil {
		s.dec.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.dir, err)
	}
	return nil
}

// Dir returns the absolute path of the store directory.
func (s *Store) Dir() string { return s.dir }

// RunID returns the id this Store writes into ledger entries: the UTC time
// of Open and a random suffix, e.g. "20260801T120000Z-3fa29c1e".
func (s *Store) RunID() string { return s.runID }

func newRunID() string {
	var b [4]byte
	rand.Read(b[:]) // never returns an error
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// makeTree creates dir, dir/blobs and the 256 blob prefix directories, and
// syncs the parents so the directories survive a crash.
func makeTree(dir string) error {
	blobs := filepath.Join(dir, "blobs")
	for i := range 256 {
		if err := os.MkdirAll(filepath.Join(blobs, fmt.Sprintf("%02x", i)), 0o755); err != nil {
			return err
		}
	}
	if err := syncDir(blobs); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a directory's entries durable (after a rename into it).
func syncDir(dir string) error { return atomicdir.SyncDir(dir) }

// checkKey reports why s cannot be used as an item id, kind, stage or key
// (named by what), or nil if it can.
func checkKey(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > maxKeyLen:
		return fmt.Errorf("%s %.40q… is %d bytes, over %d", what, s, len(s), maxKeyLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains a control character", what, s)
		}
	}
	return nil
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }
