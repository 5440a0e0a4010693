package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
	// ErrNoStore is returned by [OpenExisting] when the directory holds no
	// store.
	ErrNoStore = errors.New("no curate store")
	// ErrForeign is returned when the directory's ledger.db is a SQLite
	// database that curate did not write: it is never migrated or changed.
	ErrForeign = errors.New("not a curate ledger")
)

// applicationID marks a SQLite file as a curate ledger (PRAGMA
// application_id; "CURA").
const applicationID = 0x43555241

// maxKeyLen bounds item ids, kinds, stages and value keys.
const maxKeyLen = 512

// timeLayout is fixed-width UTC, so that the text columns sort by time and
// read well in the sqlite3 shell.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Store is an open store directory. Its methods are safe for concurrent use.
type Store struct {
	dir      string
	runID    string
	readOnly bool
	heal     *healing // nil: a lost record is an error only
	w        *sql.DB  // a single connection: writers queue in Go, not in SQLite's busy handler
	r        *sql.DB  // read-only pool; WAL lets these read while w writes
	enc      *zstd.Encoder
	dec      *zstd.Decoder
}

// Open opens the store in dir, creating the directory tree and the ledger if
// they do not exist and migrating a ledger written by an older version. A
// ledger.db that another program wrote is refused (ErrForeign) untouched.
func Open(ctx context.Context, dir string) (*Store, error) { return open(ctx, dir, true) }

// OpenExisting opens the store in dir as Open does, but creates nothing: a
// directory without a ledger is ErrNoStore. Commands that only look at a
// store (status, show, stats) use it, so a mistyped --store creates no
// store there.
func OpenExisting(ctx context.Context, dir string) (*Store, error) { return open(ctx, dir, false) }

// ErrReadOnly is returned by PutBlob and Lock of a store opened with
// [OpenReadOnly] (its ledger refuses writes itself).
var ErrReadOnly = errors.New("store is open read-only")

// OpenReadOnly opens the store in dir for reading only, as commands that
// only look at a store (status) need: nothing in the directory is created,
// migrated or changed (SQLite's -wal and -shm files aside, which any reader
// of a WAL database shares), and every writing method fails (the ledger's
// connections are read-only; PutBlob and Lock return ErrReadOnly). A directory without a ledger is ErrNoStore; an empty
// ledger.db (a store whose first open stopped before it was set up) reads
// as a store with nothing in it; a ledger of an older schema is refused,
// saying that a command that writes the store migrates it.
func OpenReadOnly(ctx context.Context, dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	ledger := filepath.Join(abs, "ledger.db")
	fi, err := os.Stat(ledger)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open store %s: %w there (no ledger.db)", abs, ErrNoStore)
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if err := checkLedger(ctx, ledger); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s := &Store{dir: abs, runID: newRunID(), readOnly: true}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if fi.Size() == 0 || emptyBeforeJournal(ledger) {
		// Nothing to read: an empty ledger of the current schema, in
		// memory (one connection: each would have its own). A ledger
		// whose first write was cut is empty once rolled back, which a
		// command that writes the store does.
		s.r, err = sql.Open("sqlite", "file::memory:")
		if err == nil {
			s.r.SetMaxOpenConns(1)
			err = migrate(ctx, s.r, len(migrations))
		}
		if err == nil {
			_, err = s.r.ExecContext(ctx, "PRAGMA query_only = 1")
		}
	} else {
		s.r, err = sql.Open("sqlite", "file:"+sqlitePath(ledger)+"?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
		if err == nil {
			s.r.SetMaxOpenConns(4)
			err = checkSchema(ctx, s.r)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: ledger: %w", abs, err)
	}
	s.w = s.r // a write through it fails: the connections are read-only
	s.dec, err = zstd.NewReader(nil)
	if err != nil {
		return nil, fmt.Errorf("open store %s: zstd decoder: %w", abs, err)
	}
	ok = true
	return s, nil
}

// checkSchema refuses a ledger whose schema is not this curate's.
func checkSchema(ctx context.Context, db *sql.DB) error {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch n, err := strconv.Atoi(v); {
	case err != nil:
		return fmt.Errorf("schema_version %q: %w", v, err)
	case n > len(migrations):
		return fmt.Errorf("schema version %d is newer than this curate supports (%d); use a newer curate", n, len(migrations))
	case n < len(migrations):
		return fmt.Errorf("schema version %d is older than this curate's (%d): a command that writes the store (curate run, curate fetch) migrates it; this one only reads", n, len(migrations))
	}
	return nil
}

func open(ctx context.Context, dir string, create bool) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	ledger := filepath.Join(abs, "ledger.db")
	if !create {
		if _, err := os.Stat(ledger); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open store %s: %w there (no ledger.db)", abs, ErrNoStore)
		}
	}
	if err := checkLedger(ctx, ledger); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
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
	path := sqlitePath(ledger)
	s.w, err = sql.Open("sqlite", "file:"+path+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open store %s: ledger: %w", abs, err)
	}
	s.w.SetMaxOpenConns(1)
	if err := migrate(ctx, s.w, len(migrations)); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return nil, fmt.Errorf("open store %s: mark ledger: %w", abs, err)
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
	if s.w != nil && s.w != s.r {
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

func sqlitePath(file string) string {
	return (&url.URL{Path: filepath.ToSlash(file)}).EscapedPath()
}

// checkLedger returns nil when path is absent, empty, or a curate ledger
// (marked by applicationID, or, from before the mark, holding curate's
// tables), and an error wrapping ErrForeign otherwise. It reads through a
// read-only connection, so a foreign database is never changed (not even
// switched to WAL).
func checkLedger(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory: %w", path, ErrForeign)
	case fi.Size() == 0:
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+sqlitePath(path)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer db.Close()
	var id int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil {
		if hotJournal(err) {
			if emptyBeforeJournal(path) {
				// A new ledger whose first write (the switch to WAL)
				// was cut by a kill: empty once rolled back, as the
				// writing open's connection does first.
				return nil
			}
			return fmt.Errorf("%s has a rollback journal left by a program stopped while writing it (%s-journal), which a read-only check cannot roll back, and curate never leaves one on a ledger that holds anything: open it with that program, or sqlite3, to roll it back: %w", path, path, err)
		}
		if !notADatabase(err) {
			// A full disk (no room for the -shm file), an I/O error: the
			// file may well be curate's.
			return fmt.Errorf("read %s: %w", path, err)
		}
		return fmt.Errorf("%s is not a SQLite database curate can read (%v): %w", path, err, ErrForeign)
	}
	switch id {
	case applicationID:
		return nil
	case 0:
	default:
		return fmt.Errorf("%s belongs to another program (application_id %#x): %w", path, id, ErrForeign)
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if len(tables) == 0 {
		return nil // a new, empty database
	}
	// A ledger from before the mark: curate's tables and schema version.
	if tables["meta"] && tables["records"] && tables["ledger"] {
		var v string
		if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s holds tables curate did not create and no curate mark: %w", path, ErrForeign)
}

// hotJournal reports whether err is SQLite refusing a read-only
// connection a database whose hot rollback journal must be rolled back
// first (SQLITE_READONLY_ROLLBACK).
func hotJournal(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code() == 776
}

// journalMagic begins every SQLite rollback journal's header.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// emptyBeforeJournal reports whether the database at path has a rollback
// journal beside it whose database held no page before the write it
// journals (the header's initial size, bytes 16 to 19; SQLite's file
// format, "The Rollback Journal"): rolled back, the database is empty.
// curate's ledger only ever has one during its first write, the switch
// to WAL.
func emptyBeforeJournal(path string) bool {
	f, err := os.Open(path + "-journal")
	if err != nil {
		return false
	}
	defer f.Close()
	h := make([]byte, 20)
	if _, err := io.ReadFull(f, h); err != nil {
		return false
	}
	return bytes.Equal(h[:8], journalMagic) && binary.BigEndian.Uint32(h[16:20]) == 0
}

// notADatabase reports whether err is SQLite saying a file is no database
// it can read (SQLITE_NOTADB, SQLITE_CORRUPT) rather than failing to read
// it.
func notADatabase(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return true // not SQLite's error: nothing says the file is readable
	}
	c := coded.Code() & 0xff
	return c == 26 || c == 11
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
