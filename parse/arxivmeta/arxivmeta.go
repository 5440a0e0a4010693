// Package arxivmeta reads a local copy of arXiv's metadata snapshot: the
// public JSON-lines file (Kaggle's arxiv-metadata-oai-snapshot.json, plain
// or gzip), one object per paper with its "id" and its version history
// ("versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42
// GMT"}, ...]).
//
// The file is a few gigabytes, so it is never loaded whole: Open reads it
// once into an index kept in a directory of the caller's (the store's),
// sorted by paper ID, holding each paper's version history and where its
// line lies; later Opens reuse the index while the file is unchanged (its
// size, modification time and first and last MiB) and build it again when
// it changed. Lookups read the index from disk, a few small reads each.
package arxivmeta

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/klauspost/compress/gzip"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// ErrNotFound is what Versions and Lines wrap for a paper the snapshot
// does not hold: a paper newer than the file, or an ID arXiv never issued.
var ErrNotFound = errors.New("not in the arXiv metadata snapshot")

// ErrNotSnapshot is what Open wraps when the file is not a metadata
// snapshot.
var ErrNotSnapshot = errors.New("not an arXiv metadata snapshot")

// What is expected of the file, for errors.
const expected = `want the JSON-lines snapshot of arXiv's metadata, one paper a line with "id" and "versions" (Kaggle's arxiv-metadata-oai-snapshot.json), plain or gzip`

// Options tune Open.
type Options struct {
	// IndexDir is the directory the index is kept in (created when
	// missing); curate gives its store's. Required.
	IndexDir string
	// Logger receives the index's building and the lines it skipped; nil
	// discards.
	Logger *slog.Logger
	// NoBuild makes Open fail with ErrNotIndexed instead of building a
	// missing or outdated index: for what must write nothing (an
	// estimate).
	NoBuild bool
}

// ErrNotIndexed is what Open wraps under Options.NoBuild when the file
// has no current index.
var ErrNotIndexed = errors.New("the arXiv metadata snapshot is not indexed yet")

// Info describes an opened snapshot.
type Info struct {
	Path       string // the file, as given
	Index      string // the index file
	Compressed bool   // gzip
	Size       int64  // bytes of the file as stored
	// Papers counts the papers indexed; Duplicates the lines of a paper
	// already seen (the last one is kept); Skipped the lines that could
	// not be read (each logged when the index was built).
	Papers, Duplicates, Skipped int
	// AsOf is the latest version date the file holds: a version
	// submitted after it is not in the snapshot.
	AsOf time.Time
	// Built says this Open built the index (the file was new or changed).
	Built bool
}

// Snapshot is an opened metadata snapshot. Its methods are safe for
// concurrent use.
type Snapshot struct {
	info    Info
	idx     *os.File
	n       int   // entries
	versOff int64 // start of the versions section
	msgOff  int64 // start of the messages section
}

// Open opens the snapshot at path with its index, building the index when
// there is none for this file or the file changed since. A file that is
// not a snapshot (its first line is not a paper's object) is an error
// wrapping ErrNotSnapshot that names it and says what is expected.
func Open(ctx context.Context, path string, opts Options) (*Snapshot, error) {
	fail := func(err error) (*Snapshot, error) {
		return nil, fmt.Errorf("arxiv metadata snapshot %s: %w", path, err)
	}
	if opts.IndexDir == "" {
		return fail(errors.New("no index directory"))
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if st.IsDir() {
		return fail(fmt.Errorf("is a directory: %s", expected))
	}
	id, err := identify(f, st)
	if err != nil {
		return fail(err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail(err)
	}
	sum := sha256.Sum256([]byte(abs))
	idxPath := filepath.Join(opts.IndexDir, "arxiv-metadata-"+hex.EncodeToString(sum[:8])+".idx")
	s, err := openIndex(idxPath, id)
	if err != nil {
		// Missing, of another file's state, or damaged: build it again.
		if opts.NoBuild {
			return fail(fmt.Errorf("%w (%v)", ErrNotIndexed, err))
		}
		if !errors.Is(err, os.ErrNotExist) {
			log.InfoContext(ctx, "arxiv metadata index out of date; building it again", slog.String("file", path), slog.String("why", err.Error()))
		}
		if err := os.MkdirAll(opts.IndexDir, 0o755); err != nil {
			return fail(err)
		}
		start := time.Now()
		if err := build(ctx, f, path, idxPath, id, log); err != nil {
			return fail(err)
		}
		if s, err = openIndex(idxPath, id); err != nil {
			return fail(fmt.Errorf("read the index just built: %w", err))
		}
		s.info.Built = true
		log.InfoContext(ctx, "arxiv metadata indexed", slog.String("file", path), slog.Int("papers", s.info.Papers),
			slog.Int("skipped", s.info.Skipped), slog.Duration("took", time.Since(start)))
	}
	s.info.Path = path
	s.info.Index = idxPath
	return s, nil
}

// Check reads the start of the file at path and reports, as Open
// would, a file that is not a metadata snapshot (an error wrapping
// ErrNotSnapshot that names it and says what is expected): empty, a zip
// archive, not gzip when it says it is, or a first line that is not a
// paper's object. It reads a few bytes and writes nothing, so a command
// refuses such a file before anything else.
func Check(path string) error {
	fail := func(err error) error { return fmt.Errorf("arxiv metadata snapshot %s: %w", path, err) }
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if st.IsDir() {
		return fail(fmt.Errorf("is a directory: %s", expected))
	}
	id, err := identify(f, st)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	var r io.Reader = f
	if id.compressed {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fail(fmt.Errorf("%w: gzip: %v (%s)", ErrNotSnapshot, err, expected))
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		raw, rerr := br.ReadBytes('\n')
		if text := bytes.TrimSpace(raw); len(text) > 0 {
			var l line
			if err := json.Unmarshal(text, &l); err != nil || l.ID == nil || l.Versions == nil {
				what := "is not a JSON object"
				switch {
				case err == nil:
					what = `has no "id" and "versions"`
				case text[0] == '[':
					what = "opens a JSON array (the snapshot is one object a line, not one array)"
				}
				return fail(fmt.Errorf("%w: line %d %s (%s)", ErrNotSnapshot, n, what, expected))
			}
			return nil
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return fail(fmt.Errorf("%w: no paper's line in it (%s)", ErrNotSnapshot, expected))
			}
			return fail(fmt.Errorf("%w: %v (%s)", ErrNotSnapshot, rerr, expected))
		}
	}
}

// Info describes the snapshot.
func (s *Snapshot) Info() Info { return s.info }

// Close closes the index.
func (s *Snapshot) Close() error { return s.idx.Close() }

// Versions returns the version history of the paper id names (with or
// without version). A paper the snapshot lacks is an error wrapping
// ErrNotFound; a history that cannot be used (no v1, a version that is not
// vN, a date that does not parse) is an error naming the file's line, and
// wrapping record.ErrNoV1 when v1 is missing.
func (s *Snapshot) Versions(id string) (record.PaperVersions, error) {
	e, err := s.find(id)
	if err != nil {
		return record.PaperVersions{}, err
	}
	where := fmt.Sprintf("arxiv metadata snapshot %s line %d", s.info.Path, e.line)
	if e.flags&flagBad != 0 {
		msg := make([]byte, e.nver)
		if _, err := s.idx.ReadAt(msg, s.msgOff+int64(e.verOff)); err != nil {
			return record.PaperVersions{}, fmt.Errorf("%s: read the index: %w", where, err)
		}
		return record.PaperVersions{}, fmt.Errorf("%s: paper %s: %s", where, e.id(), msg)
	}
	buf := make([]byte, int(e.nver)*versionSize)
	if _, err := s.idx.ReadAt(buf, s.versOff+int64(e.verOff)*versionSize); err != nil {
		return record.PaperVersions{}, fmt.Errorf("%s: read the index: %w", where, err)
	}
	v := record.PaperVersions{ID: e.id(), From: record.VersionsFromSnapshot, AsOf: s.info.AsOf}
	for i := range int(e.nver) {
		b := buf[i*versionSize:]
		v.Versions = append(v.Versions, record.PaperVersion{
			Version: int(binary.LittleEndian.Uint32(b)),
			Date:    time.Unix(int64(binary.LittleEndian.Uint64(b[4:])), 0).UTC(),
		})
	}
	// A line that skips a version number knows that version's date no
	// more than an arXiv API entry does.
	v.Partial = len(v.Missing()) > 0
	if err := v.Check(); err != nil {
		return record.PaperVersions{}, fmt.Errorf("%s: %w", where, err)
	}
	return v, nil
}

// Has reports whether the snapshot holds the paper id names.
func (s *Snapshot) Has(id string) bool {
	_, err := s.find(id)
	return err == nil
}

// Lines calls fn with the line of each paper ids name that the snapshot
// holds (the paper's whole JSON object, for fields the index does not
// keep), in the order the lines stand in the file; ids it lacks are
// returned. A plain file is read where each line lies; a gzip file is
// read once from its start to the last line asked for.
func (s *Snapshot) Lines(ctx context.Context, ids []string, fn func(id string, line []byte) error) (missing []string, err error) {
	var want []entry
	for _, id := range ids {
		e, err := s.find(id)
		if errors.Is(err, ErrNotFound) {
			missing = append(missing, id)
			continue
		}
		if err != nil {
			return missing, err
		}
		want = append(want, e)
	}
	slices.SortFunc(want, func(a, b entry) int { return cmp.Compare(a.offset, b.offset) })
	want = slices.CompactFunc(want, func(a, b entry) bool { return a.offset == b.offset })
	f, err := os.Open(s.info.Path)
	if err != nil {
		return missing, fmt.Errorf("arxiv metadata snapshot %s: %w", s.info.Path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if s.info.Compressed {
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return missing, fmt.Errorf("arxiv metadata snapshot %s: %w", s.info.Path, err)
		}
		defer zr.Close()
		r = zr
	}
	var pos int64
	for _, e := range want {
		if err := ctx.Err(); err != nil {
			return missing, err
		}
		line := make([]byte, e.length)
		if s.info.Compressed {
			if _, err := io.CopyN(io.Discard, r, int64(e.offset)-pos); err != nil {
				return missing, fmt.Errorf("arxiv metadata snapshot %s line %d: %w", s.info.Path, e.line, err)
			}
			_, err = io.ReadFull(r, line)
			pos = int64(e.offset) + int64(e.length)
		} else {
			_, err = f.ReadAt(line, int64(e.offset))
		}
		if err != nil {
			return missing, fmt.Errorf("arxiv metadata snapshot %s line %d: %w", s.info.Path, e.line, err)
		}
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(line, &head) != nil || arxiv.Normalize(head.ID) != e.id() {
			return missing, fmt.Errorf("arxiv metadata snapshot %s line %d: not the line of %s: the file changed since it was opened", s.info.Path, e.line, e.id())
		}
		if err := fn(e.id(), line); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// The index file: a header, the entries sorted by key (fixed width, so a
// lookup is a binary search of reads), each paper's versions, and the
// messages of the histories that cannot be used.
const (
	magic       = "CRAMIDX2"
	headerSize  = 128
	keySize     = 16 // the longest canonical ID: "cond-mat/0001001"
	entrySize   = keySize + 8 + 4 + 4 + 4 + 2 + 2
	versionSize = 4 + 8
	flagBad     = 1 // verOff and nver locate a message, not versions
	identifyLen = 1 << 20
)

// fileID is what tells a file's state: its size and modification time,
// and digests of its first and last MiB (a copy that keeps the time but
// not the content is caught).
type fileID struct {
	size, mtime int64
	head, tail  [32]byte
	compressed  bool
}

func identify(f *os.File, st os.FileInfo) (fileID, error) {
	id := fileID{size: st.Size(), mtime: st.ModTime().UnixNano()}
	head := make([]byte, min(identifyLen, st.Size()))
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, st.Size()), head); err != nil {
		return id, err
	}
	switch {
	case len(head) == 0:
		return id, fmt.Errorf("%w: the file is empty (%s)", ErrNotSnapshot, expected)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return id, fmt.Errorf("%w: it is a zip archive (Kaggle's download): unzip it and give the .json inside, or gzip that", ErrNotSnapshot)
	}
	id.compressed = bytes.HasPrefix(head, []byte{0x1f, 0x8b})
	id.head = sha256.Sum256(head)
	tail := make([]byte, min(identifyLen, st.Size()))
	if _, err := f.ReadAt(tail, st.Size()-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return id, err
	}
	id.tail = sha256.Sum256(tail)
	return id, nil
}

type entry struct {
	key    [keySize]byte // the canonical ID, zero-padded
	offset uint64        // of the line, in the uncompressed stream
	length uint32
	line   uint32
	verOff uint32 // in versions (or bytes of messages, when flagBad)
	nver   uint16 // versions (or message bytes)
	flags  uint16
}

func openIndex(path string, id fileID) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := make([]byte, headerSize)
	if _, err := io.ReadFull(f, h); err != nil {
		f.Close()
		return nil, fmt.Errorf("index %s: header: %w", path, err)
	}
	le := binary.LittleEndian
	switch {
	case string(h[:8]) != magic:
		f.Close()
		return nil, fmt.Errorf("index %s: not an index of this curate", path)
	case int64(le.Uint64(h[8:])) != id.size || int64(le.Uint64(h[16:])) != id.mtime ||
		!bytes.Equal(h[24:56], id.head[:]) || !bytes.Equal(h[56:88], id.tail[:]):
		f.Close()
		return nil, errors.New("the file changed since it was indexed")
	}
	s := &Snapshot{idx: f, n: int(le.Uint32(h[88:])), versOff: int64(le.Uint64(h[112:])), msgOff: int64(le.Uint64(h[120:]))}
	s.info = Info{
		Compressed: h[100] == 1, Size: id.size,
		Papers: s.n, Duplicates: int(le.Uint32(h[92:])), Skipped: int(le.Uint32(h[96:])),
		AsOf: time.Unix(int64(le.Uint64(h[104:])), 0).UTC(),
	}
	st, err := f.Stat()
	if err != nil || st.Size() < s.msgOff || s.versOff != headerSize+int64(s.n)*entrySize {
		f.Close()
		return nil, fmt.Errorf("index %s: damaged", path)
	}
	return s, nil
}

// find looks the paper up in the index.
func (s *Snapshot) find(id string) (entry, error) {
	a, err := arxiv.Parse(id)
	if err != nil {
		return entry{}, fmt.Errorf("arxiv metadata snapshot %s: %w", s.info.Path, err)
	}
	want := a.Canonical()
	var key [keySize]byte
	copy(key[:], want)
	buf := make([]byte, entrySize)
	var ioErr error
	lo, hi := 0, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if _, err := s.idx.ReadAt(buf, headerSize+int64(mid)*entrySize); err != nil {
			ioErr = err
			break
		}
		switch c := bytes.Compare(buf[:keySize], key[:]); {
		case c == 0:
			return decodeEntry(buf), nil
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	if ioErr != nil {
		return entry{}, fmt.Errorf("arxiv metadata snapshot %s: read the index: %w", s.info.Path, ioErr)
	}
	return entry{}, fmt.Errorf("paper %s: %w %s", want, ErrNotFound, s.info.Path)
}

func decodeEntry(b []byte) entry {
	le := binary.LittleEndian
	e := entry{
		offset: le.Uint64(b[keySize:]),
		length: le.Uint32(b[keySize+8:]),
		line:   le.Uint32(b[keySize+12:]),
		verOff: le.Uint32(b[keySize+16:]),
		nver:   le.Uint16(b[keySize+20:]),
		flags:  le.Uint16(b[keySize+22:]),
	}
	copy(e.key[:], b)
	return e
}

// id returns the entry's canonical ID.
func (e entry) id() string { return string(bytes.TrimRight(e.key[:], "\x00")) }

// line is what the index reads of a line.
type line struct {
	ID       *string `json:"id"`
	Versions *[]struct {
		Version string `json:"version"`
		Created string `json:"created"`
	} `json:"versions"`
}

type version struct {
	n    uint32
	unix int64
}

// build reads the file once and writes its index to idxPath (through a
// temporary file, renamed into place, so a reader never sees half of one).
// Only the entries are held in memory (40 bytes a paper); the versions go
// to a temporary file as they are read.
func build(ctx context.Context, f *os.File, path, idxPath string, id fileID, log *slog.Logger) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if id.compressed {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%w: gzip: %v (%s)", ErrNotSnapshot, err, expected)
		}
		defer zr.Close()
		r = zr
	}
	dir := filepath.Dir(idxPath)
	vf, err := os.CreateTemp(dir, ".arxiv-metadata-versions-*.tmp")
	if err != nil {
		return err
	}
	defer func() { vf.Close(); os.Remove(vf.Name()) }()
	vw := bufio.NewWriterSize(vf, 1<<20)
	le := binary.LittleEndian
	vb := make([]byte, versionSize)

	br := bufio.NewReaderSize(r, 1<<20)
	var (
		entries  []entry
		nvers    uint32
		messages []byte
		skipped  int
		asOf     int64
		offset   uint64
		lineNo   uint32
		valid    bool // a paper's line was read: the file is a snapshot
		vs       []version
	)
	skip := func(why string) {
		skipped++
		if skipped <= 5 {
			log.Warn("arxiv metadata line skipped", slog.String("file", path), slog.Int("line", int(lineNo)), slog.String("why", why))
		}
	}
	for {
		raw, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it.
			long := slices.Clone(raw)
			for errors.Is(rerr, bufio.ErrBufferFull) {
				raw, rerr = br.ReadSlice('\n')
				long = append(long, raw...)
			}
			raw = long
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			if !valid {
				return fmt.Errorf("%w: %v (%s)", ErrNotSnapshot, rerr, expected)
			}
			return fmt.Errorf("line %d: %w", lineNo+1, rerr)
		}
		if len(raw) == 0 {
			break
		}
		lineNo++
		start := offset
		offset += uint64(len(raw))
		if lineNo%100000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		text := bytes.TrimSpace(raw)
		if len(text) == 0 {
			continue
		}
		lead := uint64(len(raw) - len(bytes.TrimLeftFunc(raw, unicode.IsSpace)))
		var l line
		jerr := json.Unmarshal(text, &l)
		if jerr != nil || l.ID == nil || l.Versions == nil {
			if !valid {
				what := "is not a JSON object"
				switch {
				case jerr == nil:
					what = `has no "id" and "versions"`
				case text[0] == '[':
					what = "opens a JSON array (the snapshot is one object a line, not one array)"
				}
				return fmt.Errorf("%w: line %d %s (%s)", ErrNotSnapshot, lineNo, what, expected)
			}
			skip("not a paper's JSON object")
			continue
		}
		valid = true
		canon := arxiv.Normalize(*l.ID)
		if canon == "" || len(canon) > keySize {
			skip(fmt.Sprintf("id %q is no arXiv id", *l.ID))
			continue
		}
		e := entry{offset: start + lead, length: uint32(len(text)), line: lineNo}
		copy(e.key[:], canon)
		vs = vs[:0]
		var bad string
		for _, v := range *l.Versions {
			n, err := strconv.Atoi(strings.TrimPrefix(v.Version, "v"))
			if err != nil || n < 1 || n >= 1<<16 || !strings.HasPrefix(v.Version, "v") {
				bad = fmt.Sprintf("version %q is not vN", v.Version)
				break
			}
			t, err := time.Parse("Mon, _2 Jan 2006 15:04:05 MST", strings.TrimSpace(v.Created))
			if err != nil {
				bad = fmt.Sprintf("version %s date %q is not a date as arXiv writes one (Mon, 2 Apr 2007 19:18:42 GMT)", v.Version, v.Created)
				break
			}
			vs = append(vs, version{uint32(n), t.Unix()})
		}
		if len(vs) >= 1<<16 {
			bad = fmt.Sprintf("%d versions", len(vs))
		}
		if bad != "" {
			e.flags = flagBad
			e.verOff, e.nver = uint32(len(messages)), uint16(len(bad))
			messages = append(messages, bad...)
		} else {
			slices.SortStableFunc(vs, func(a, b version) int { return int(a.n) - int(b.n) })
			e.verOff, e.nver = nvers, uint16(len(vs))
			for _, v := range vs {
				le.PutUint32(vb, v.n)
				le.PutUint64(vb[4:], uint64(v.unix))
				vw.Write(vb)
				asOf = max(asOf, v.unix)
			}
			nvers += uint32(len(vs))
		}
		entries = append(entries, e)
		if errors.Is(rerr, io.EOF) {
			break
		}
	}
	if !valid {
		return fmt.Errorf("%w: no paper's line in it (%s)", ErrNotSnapshot, expected)
	}
	if err := vw.Flush(); err != nil {
		return fmt.Errorf("write the index: %w", err)
	}
	// By ID, and of one paper's lines the last: a later line of a paper
	// is its later record.
	slices.SortStableFunc(entries, func(a, b entry) int { return bytes.Compare(a.key[:], b.key[:]) })
	dups := 0
	kept := entries[:0]
	for i, e := range entries {
		if i+1 < len(entries) && entries[i+1].key == e.key {
			dups++
			continue
		}
		kept = append(kept, e)
	}
	entries = kept

	tmp, err := os.CreateTemp(dir, ".arxiv-metadata-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	h := make([]byte, headerSize)
	copy(h, magic)
	le.PutUint64(h[8:], uint64(id.size))
	le.PutUint64(h[16:], uint64(id.mtime))
	copy(h[24:], id.head[:])
	copy(h[56:], id.tail[:])
	le.PutUint32(h[88:], uint32(len(entries)))
	le.PutUint32(h[92:], uint32(dups))
	le.PutUint32(h[96:], uint32(skipped))
	if id.compressed {
		h[100] = 1
	}
	le.PutUint64(h[104:], uint64(asOf))
	versOff := int64(headerSize) + int64(len(entries))*entrySize
	le.PutUint64(h[112:], uint64(versOff))
	le.PutUint64(h[120:], uint64(versOff+int64(nvers)*versionSize))
	w.Write(h)
	b := make([]byte, entrySize)
	for _, e := range entries {
		copy(b, e.key[:])
		le.PutUint64(b[keySize:], e.offset)
		le.PutUint32(b[keySize+8:], e.length)
		le.PutUint32(b[keySize+12:], e.line)
		le.PutUint32(b[keySize+16:], e.verOff)
		le.PutUint16(b[keySize+20:], e.nver)
		le.PutUint16(b[keySize+22:], e.flags)
		w.Write(b)
	}
	if _, err := vf.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.Copy(w, vf); err != nil {
		tmp.Close()
		return fmt.Errorf("write the index: %w", err)
	}
	w.Write(messages)
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write the index: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write the index: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the index: %w", err)
	}
	return os.Rename(tmp.Name(), idxPath)
}
