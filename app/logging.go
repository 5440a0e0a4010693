package app

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/groundwork/curate/store"
)

// quietOnFullDisk wraps a run's log handler so that a full disk is told
// once: the errors every piece of work then logs — the same full disk, or
// the cancellation that follows it once the run stops — are dropped, and
// the run's own message says what happened and what to do.
type quietOnFullDisk struct {
	slog.Handler
	stopping *atomic.Bool
}

func (h quietOnFullDisk) Handle(ctx context.Context, r slog.Record) error {
	drop := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok {
			drop = store.IsDiskFull(err) || h.stopping.Load() && errors.Is(err, context.Canceled)
		}
		return !drop
	})
	if drop {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietOnFullDisk) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietOnFullDisk{h.Handler.WithAttrs(attrs), h.stopping}
}

func (h quietOnFullDisk) WithGroup(name string) slog.Handler {
	return quietOnFullDisk{h.Handler.WithGroup(name), h.stopping}
}
