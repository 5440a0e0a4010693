package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/licenses"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// LicenseOptions configure LookupLicenses.
type LicenseOptions = licenses.Options

// LookupLicenses asks arXiv's OAI-PMH repository (the App needs
// Config.OAIBase) for the licence of each of keys that the store does not
// record, one GetRecord request a paper at the OAI service's pace (one
// every Net.ArxivInterval), storing each answer as it comes: a lookup
// stopped part way resumes where it stopped. A paper recorded before,
// whether with a licence, with a record that names none, or (unless
// opt.RecheckMissing) as unknown to the repository, costs no request.
//
// The error classifies the outcome like Run's: nil; ErrIncomplete when
// papers failed (they are asked again next time) or the lookup stopped
// after failures in a row; ErrInterrupted; ErrCannotRun when the disk
// filled.
func (a *App) LookupLicenses(ctx context.Context, keys []string, opt LicenseOptions) (*licenses.Summary, error) {
	if a.OAI == nil {
		return nil, Fail(ErrUsage, errors.New("licence lookup: no OAI-PMH base URL configured"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a.draining() {
		return nil, ErrInterrupted
	}
	if a.cfg.Drain != nil {
		// Nothing to finish: each answer is stored as it comes. The
		// watcher ends a request in flight; the lookup itself reads Drain
		// before each request (Lookup.Stop), so none starts after it.
		go func() {
			select {
			case <-a.cfg.Drain:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	l := &licenses.Lookup{Store: a.Store, OAI: a.OAI, Log: a.Log, Stop: a.cfg.Drain}
	pending, err := l.Pending(ctx, keys, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	var interval time.Duration
	if svc, err := a.HTTP.Service(oaipmh.ServiceName); err == nil {
		interval = svc.Interval()
	}
	a.Log.Info("looking up licences in arXiv's OAI-PMH metadata", "targets", len(keys), "to_ask", len(pending),
		"recorded", len(keys)-len(pending), "takes_about", (time.Duration(len(pending)) * interval).Round(time.Second).String())
	sum, err := l.Run(ctx, keys, opt)
	switch {
	case err != nil && (ctx.Err() != nil || a.draining()):
		return sum, ErrInterrupted
	case err != nil && store.IsDiskFull(err):
		return sum, a.diskFull(err)
	case errors.Is(err, licenses.ErrTooManyFailures):
		return sum, Fail(ErrIncomplete, err)
	case err != nil:
		return sum, err
	case sum.Failed > 0:
		return sum, Fail(ErrIncomplete, fmt.Errorf("%s failed; the next lookup asks again", Plural(sum.Failed, "licence lookup")))
	}
	return sum, nil
}

// Licenses returns the recorded licences of the instances' targets, as
// dataset.WriteOptions.Licenses takes them: the licence URL, or "" when
// the target's arXiv metadata names none; a target without a usable
// record (none stored, not found, deleted) is left out, so the card
// counts it as not recorded.
func Licenses(ctx context.Context, st record.Getter, res *dataset.Result) (map[string]string, error) {
	out := map[string]string{}
	err := res.Each(func(in *record.Instance) error {
		id := in.Target.ArxivID
		l, ok, err := record.PaperLicenses.Lookup(ctx, st, id)
		if err != nil {
			return fmt.Errorf("dataset: licence of %s: %w", id, err)
		}
		if ok && l.Known() {
			out[id] = l.License
		}
		return nil
	})
	return out, err
}
