package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Hash is the lowercase hex SHA-256 of a blob's uncompressed bytes.
type Hash string

// HashOf returns the Hash of data.
func HashOf(data []byte) Hash {
	sum := sha256.Sum256(data)
	return Hash(hex.EncodeToString(sum[:]))
}

func (h Hash) check() error {
	if len(h) != sha256.Size*2 {
		return fmt.Errorf("invalid blob hash %q: want %d hex digits", string(h), sha256.Size*2)
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("invalid blob hash %q: want lowercase hex", string(h))
		}
	}
	return nil
}

func (s *Store) blobPath(h Hash) string {
	return filepath.Join(s.dir, "blobs", string(h[:2]), string(h)+".zst")
}

// PutBlob stores data and returns its hash. A blob that is already stored
// intact is not rewritten; a corrupt one is replaced.
func (s *Store) PutBlob(data []byte) (Hash, error) {
	h := HashOf(data)
	if s.readOnly {
		return "", fmt.Errorf("put blob %s in %s: %w", h, s.dir, ErrReadOnly)
	}
	path := s.blobPath(h)
	if _, err := s.readBlob(h, path); err == nil {
		return h, nil
	}
	if err := writeFileSync(path, s.enc.EncodeAll(data, nil)); err != nil {
		return "", fmt.Errorf("put blob %s: %w", h, err)
	}
	return h, nil
}

// Blob returns the uncompressed bytes of blob h. The error wraps ErrNotFound
// if there is no such blob and ErrCorrupt if it fails to decompress or to
// match h.
func (s *Store) Blob(h Hash) ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("read blob: %w", err)
	}
	return s.readBlob(h, s.blobPath(h))
}

// HasBlob reports whether blob h is stored intact. It reads and verifies the
// whole blob, so that a corrupt blob counts as absent and gets fetched again.
func (s *Store) HasBlob(h Hash) bool {
	_, err := s.Blob(h)
	return err == nil
}

func (s *Store) readBlob(h Hash, path string) ([]byte, error) {
	z, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read blob %s: %w", h, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	data, err := s.dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w: %w", h, ErrCorrupt, err)
	}
	if got := HashOf(data); got != h {
		return nil, fmt.Errorf("read blob %s: %w: content hashes to %s", h, ErrCorrupt, got)
	}
	return data, nil
}

// writeFileSync writes data to path so that after a crash path holds either
// its old content or all of data: temporary file in the same directory,
// write, fsync, close, rename, fsync the directory.
func writeFileSync(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, ".tmp-"+base+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}
