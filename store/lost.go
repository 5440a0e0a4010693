package store

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// LostError is a record whose row the ledger holds but whose blob is
// missing or damaged: the blob was written (rows come after their blobs)
// and has since been lost. It wraps ErrCorrupt, and ErrNotFound too when
// the store heals (Heal): the record then reads as absent, so the stage
// that needs it asks for it again (a robots.txt, a Semantic Scholar
// answer, a page, arXiv metadata) or makes it again, and the new record
// replaces the row. A reader that cannot ask (the dataset, built from the
// store alone) checks ErrCorrupt first and fails, naming the record.
type LostError struct {
	Item, Kind string
	Blob       Hash
	// Why says what is wrong with the blob: missing, or the read's error.
	Why    error
	healed bool
}

func (e *LostError) Error() string {
	return fmt.Sprintf("the stored %s record of %q is lost or damaged (blob %s: %v)", e.Kind, e.Item, e.Blob, e.Why)
}

func (e *LostError) Unwrap() []error {
	if e.healed {
		return []error{ErrCorrupt, ErrNotFound}
	}
	return []error{ErrCorrupt}
}

// errMissing is a LostError's Why for a blob that is not there (not
// ErrNotFound: the record is not absent, its blob is).
var errMissing = errors.New("missing")

// healing is what Heal sets: where lost records are logged, once each.
type healing struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

// Heal makes the store read every lost or damaged record as absent as
// well (a LostError wrapping ErrNotFound besides ErrCorrupt), logging each
// once on log. Commands that run the stages, which ask for what is absent
// again, heal; a command that only reads a store does not, and fails on a
// lost record. Call it before the store is used.
func (s *Store) Heal(log *slog.Logger) {
	s.heal = &healing{log: log, seen: map[string]bool{}}
}

// lost returns the error of rec's lost blob, logging it the first time.
func (s *Store) lost(rec Record, why error) error {
	e := &LostError{Item: rec.Item, Kind: rec.Kind, Blob: rec.Blob, Why: why}
	h := s.heal
	if h == nil {
		return e
	}
	e.healed = true
	h.mu.Lock()
	first := !h.seen[string(rec.Blob)+" "+rec.Kind+" "+rec.Item]
	h.seen[string(rec.Blob)+" "+rec.Kind+" "+rec.Item] = true
	h.mu.Unlock()
	if first && h.log != nil {
		h.log.Warn("a stored record is lost or damaged: it is asked for again, or made again, where it is needed",
			"item", rec.Item, "kind", rec.Kind, "blob", string(rec.Blob), "reason", why.Error(), "store", s.dir)
	}
	return e
}
