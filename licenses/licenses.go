// Package licenses records the licence arXiv's metadata gives each paper,
// for the dataset card's licence mix. The one source is arXiv's OAI-PMH
// repository in its own format (metadataPrefix=arXiv, the <license>
// element): a harvest brings the licences of the papers it lists
// (FromRecord, Put), and Lookup asks for the records of the papers no
// harvest brought, one GetRecord request each, at the repository's pace.
//
// Every answer is stored (record.PaperLicenses, under the paper's
// versionless arXiv ID) as soon as it comes, so an interrupted lookup
// resumes where it stopped, and a paper is never asked about twice: a
// record that names no licence is an answer too. Only papers the
// repository had no record of are asked about again, and only when asked
// to (Options.RecheckMissing): their metadata may not have been out yet.
package licenses

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/record"
)

// Name is the lookup's name in logs and in the run's summary.
const Name = "licenses"

// Store is what the lookup needs of a store (*store.Store has it).
type Store interface {
	record.Getter
	record.Putter
}

// RecordGetter reads one paper's OAI-PMH record (*oaipmh.Client).
type RecordGetter interface {
	GetRecord(ctx context.Context, id string) (oaipmh.Record, error)
}

// FromRecord returns what a record in arXiv's format says of its paper's
// licence, checked at at.
func FromRecord(r oaipmh.Record, at time.Time) record.PaperLicense {
	l := record.PaperLicense{Found: true, Deleted: r.Deleted, Source: record.LicenseFromOAIPMH, CheckedAt: at.UTC().Format(time.RFC3339)}
	if r.Meta != nil {
		l.License = r.Meta.License
	}
	return l
}

// NotFound is the record of a paper the repository has no record of.
func NotFound(at time.Time) record.PaperLicense {
	return record.PaperLicense{Source: record.LicenseFromOAIPMH, CheckedAt: at.UTC().Format(time.RFC3339)}
}

// Put stores l as id's licence unless the store already says the same
// (found, licence, deleted): a harvest that lists a paper again every
// night rewrites nothing, and the dataset built from the store stays the
// same. It reports whether it wrote.
func Put(ctx context.Context, st Store, id string, l record.PaperLicense) (bool, error) {
	old, ok, err := record.PaperLicenses.Lookup(ctx, st, id)
	if err != nil {
		return false, fmt.Errorf("licence of %s: %w", id, err)
	}
	if ok && old.Found == l.Found && old.License == l.License && old.Deleted == l.Deleted {
		return false, nil
	}
	if _, err := record.PaperLicenses.Put(ctx, st, id, &l, nil); err != nil {
		return false, fmt.Errorf("store licence of %s: %w", id, err)
	}
	return true, nil
}

// Lookup asks the OAI-PMH repository for the licences the store lacks.
type Lookup struct {
	Store Store
	OAI   RecordGetter
	Log   *slog.Logger // nil discards
	// Now is the clock of CheckedAt (nil: time.Now).
	Now func() time.Time
	// Stop, when closed, ends the lookup before its next request, as the
	// context's end does. It is read before each request, not watched:
	// a goroutine cancelling a context on it may run too late under load,
	// and let one more request out after the stop was asked for.
	Stop <-chan struct{}
}

// Options configure Run.
type Options struct {
	// RecheckMissing asks again about papers the repository had no record
	// of when last asked. A paper whose record names no licence is never
	// asked about again.
	RecheckMissing bool
	// MaxFailuresInARow stops the lookup after this many requests in a row
	// failed (the repository is down, or refuses us): each has already been
	// retried by the HTTP layer (0: 3).
	MaxFailuresInARow int
	// OnPaper, when set, is called as each paper is done with (progress).
	OnPaper func(Result)
}

// Outcomes of a paper in a lookup.
const (
	Stored   = "stored"    // already recorded: no request
	Recorded = "recorded"  // asked; the repository's record is stored
	Missing  = "not_found" // asked; the repository has no record of it (stored as such)
	Failed   = "failed"    // asked; the request failed (nothing stored: the next lookup asks again)
)

// Result is what the lookup did for one paper.
type Result struct {
	ID      string
	Outcome string
	License record.PaperLicense // for Stored, Recorded and Missing
	Err     error               // for Failed
}

// Summary counts a lookup's papers by outcome.
type Summary struct {
	Papers, Stored, Recorded, Missing, Failed int
	// Requests counts the GetRecord requests made: one per paper asked.
	Requests int
	// Failures lists the failed papers' errors.
	Failures []Result
	// Stopped is why the lookup stopped before the end: too many failures
	// in a row, or the context's end; "" when it went through.
	Stopped string
}

// ErrTooManyFailures is the error of a lookup stopped by
// Options.MaxFailuresInARow.
var ErrTooManyFailures = errors.New("licence lookup: too many requests in a row failed")

// Run looks up the licence of each of ids (versionless arXiv IDs, store
// keys) that the store does not record, one request at a time in the
// order given; the pace is the OAI service's. It returns when every paper
// is done, when the context ends (ctx.Err()), when the store cannot be
// read or written, or when MaxFailuresInARow requests in a row failed
// (ErrTooManyFailures); the Summary says how far it got either way. A
// single failed paper is no error: it is counted, and asked about again
// by the next lookup.
func (l *Lookup) Run(ctx context.Context, ids []string, opt Options) (*Summary, error) {
	log := l.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := l.Now
	if now == nil {
		now = time.Now
	}
	maxFails := opt.MaxFailuresInARow
	if maxFails <= 0 {
		maxFails = 3
	}
	sum := &Summary{Papers: len(ids)}
	done := func(r Result) {
		switch r.Outcome {
		case Stored:
			sum.Stored++
		case Recorded:
			sum.Recorded++
		case Missing:
			sum.Missing++
		case Failed:
			sum.Failed++
			sum.Failures = append(sum.Failures, r)
		}
		if opt.OnPaper != nil {
			opt.OnPaper(r)
		}
	}
	inARow := 0
	for _, id := range ids {
		if err := l.stopped(ctx); err != nil {
			sum.Stopped = "interrupted"
			return sum, err
		}
		old, ask, err := l.needs(ctx, id, opt)
		if err != nil {
			return sum, err
		}
		if !ask {
			done(Result{ID: id, Outcome: Stored, License: *old})
			continue
		}
		sum.Requests++
		rec, err := l.OAI.GetRecord(ctx, id)
		var lic record.PaperLicense
		outcome := Recorded
		switch {
		case err == nil:
			lic = FromRecord(rec, now())
		case errors.Is(err, oaipmh.ErrIDDoesNotExist):
			lic, outcome = NotFound(now()), Missing
		case ctx.Err() != nil:
			sum.Stopped = "interrupted"
			return sum, ctx.Err()
		default:
			log.WarnContext(ctx, "licence lookup failed", "id", id, "err", err)
			done(Result{ID: id, Outcome: Failed, Err: err})
			if inARow++; inARow >= maxFails {
				sum.Stopped = fmt.Sprintf("%d requests in a row failed", inARow)
				return sum, fmt.Errorf("%w (%d; the last: %v)", ErrTooManyFailures, inARow, err)
			}
			continue
		}
		inARow = 0
		// Written at once: an interrupted lookup keeps every answer.
		if _, err := Put(context.WithoutCancel(ctx), l.Store, id, lic); err != nil {
			return sum, fmt.Errorf("licence lookup: %w", err)
		}
		log.DebugContext(ctx, "licence recorded", "id", id, "found", lic.Found, "license", lic.License)
		done(Result{ID: id, Outcome: outcome, License: lic})
	}
	return sum, nil
}

// stopped returns the context's error, or context.Canceled once Stop is
// closed.
func (l *Lookup) stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-l.Stop:
		return context.Canceled
	default:
		return nil
	}
}

// Pending returns those of ids that Run would ask about: no licence
// stored, or (with RecheckMissing) stored as not found.
func (l *Lookup) Pending(ctx context.Context, ids []string, opt Options) ([]string, error) {
	var out []string
	for _, id := range ids {
		_, ask, err := l.needs(ctx, id, opt)
		if err != nil {
			return nil, err
		}
		if ask {
			out = append(out, id)
		}
	}
	return out, nil
}

// needs reads id's stored licence and says whether to ask about it.
func (l *Lookup) needs(ctx context.Context, id string, opt Options) (*record.PaperLicense, bool, error) {
	old, ok, err := record.PaperLicenses.Lookup(ctx, l.Store, id)
	if err != nil {
		return nil, false, fmt.Errorf("licence lookup: read %s: %w", id, err)
	}
	return old, !ok || !old.Found && opt.RecheckMissing, nil
}
