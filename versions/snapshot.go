package versions

import (
	"context"
	"log/slog"
	"sync"

	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// SnapshotFile is a metadata snapshot (--arxiv-metadata) opened when a
// run first needs it, its index kept in IndexDir (the store's), so that
// opening a store for anything else neither reads the file nor builds
// the index.
type SnapshotFile struct {
	Path, IndexDir string
	Log            *slog.Logger

	mu sync.Mutex
	s  *arxivmeta.Snapshot
}

// Open opens the file, building its index when it has none (unless
// build is false: an error wrapping arxivmeta.ErrNotIndexed). A file
// that is not a snapshot is an error wrapping arxivmeta.ErrNotSnapshot.
func (f *SnapshotFile) Open(ctx context.Context, build bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s != nil {
		return nil
	}
	s, err := arxivmeta.Open(ctx, f.Path, arxivmeta.Options{IndexDir: f.IndexDir, Logger: f.Log, NoBuild: !build})
	if err != nil {
		return err
	}
	info := s.Info()
	if f.Log != nil {
		f.Log.InfoContext(ctx, "arxiv metadata snapshot", slog.String("file", f.Path), slog.Int("papers", info.Papers),
			slog.Time("as_of", info.AsOf), slog.Bool("indexed_now", info.Built))
	}
	f.s = s
	return nil
}

// Versions is the snapshot's history of the paper id names (see
// arxivmeta.Snapshot.Versions); a file not opened holds nothing.
func (f *SnapshotFile) Versions(id string) (record.PaperVersions, error) {
	f.mu.Lock()
	s := f.s
	f.mu.Unlock()
	if s == nil {
		return record.PaperVersions{}, arxivmeta.ErrNotFound
	}
	return s.Versions(id)
}

// Close closes the index, when it was opened.
func (f *SnapshotFile) Close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s == nil {
		return nil
	}
	err := f.s.Close()
	f.s = nil
	return err
}
