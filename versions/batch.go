package versions

import (
	"context"
	"slices"
	"sync"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// batcher is an API whose concurrent lookups share requests: while one
// request is out (or waits for its turn at the service's pace, 3s on
// arXiv), the papers asked for queue, and the next request asks for all
// of them, up to arxivapi.MaxLookup; a paper queued or out already is
// not asked again, its lookups wait for that answer. A run's targets
// each ask for a few dozen papers, many shared: asked one target a
// request, a 9,000-target store taking the knowledge cut sends some
// 6,000 requests, five hours at arXiv's pace. No lookup waits for others
// to arrive: the first goes alone at once, and only what queues behind a
// request joins the next.
type batcher struct {
	api API
	max int

	mu      sync.Mutex
	queue   []string           // papers waiting for a request, in arrival order
	flights map[string]*flight // every paper queued or out
	sending bool
}

// flight is one paper's place in a request, and its answer.
type flight struct {
	done  chan struct{}
	ctxs  []context.Context // of the lookups waiting for it
	entry record.ArxivEntry
	ok    bool
	err   error
}

func newBatcher(api API) *batcher {
	return &batcher{api: api, max: arxivapi.MaxLookup, flights: map[string]*flight{}}
}

// Lookup returns the entries of ids, asked together with the papers
// queued beside them. Its error is a shared request's, or ctx's.
func (b *batcher) Lookup(ctx context.Context, ids []string) (map[string]record.ArxivEntry, error) {
	var keys []string
	for _, s := range ids {
		k := s
		if id, err := arxiv.Parse(s); err == nil {
			k = id.Canonical()
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	b.mu.Lock()
	fs := make([]*flight, len(keys))
	for i, k := range keys {
		f := b.flights[k]
		if f == nil {
			f = &flight{done: make(chan struct{})}
			b.flights[k] = f
			b.queue = append(b.queue, k)
		}
		f.ctxs = append(f.ctxs, ctx)
		fs[i] = f
	}
	start := !b.sending && len(b.queue) > 0
	if start {
		b.sending = true
	}
	b.mu.Unlock()
	if start {
		go b.send()
	}
	out := make(map[string]record.ArxivEntry, len(keys))
	for i, f := range fs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			return nil, f.err
		}
		if f.ok {
			out[keys[i]] = f.entry
		}
	}
	return out, nil
}

// send asks for what is queued, a request at a time, until nothing is.
func (b *batcher) send() {
	for {
		ids, fs, ctxs := b.next()
		if ids == nil {
			return
		}
		ctx, stop := anyAlive(ctxs)
		entries, err := b.api.Lookup(ctx, ids)
		cut := err != nil && ctx.Err() != nil
		stop()
		b.mu.Lock()
		for i, k := range ids {
			f := fs[i]
			if cut && alive(f.ctxs) {
				// Cut because the lookups it was asked for are gone, while
				// one that joined since still waits: asked again.
				b.queue = append(b.queue, k)
				continue
			}
			f.entry, f.ok = entries[k]
			f.err = err
			delete(b.flights, k)
			close(f.done)
		}
		b.mu.Unlock()
	}
}

// next takes the next request's papers off the queue, at most b.max,
// failing those whose lookups are all gone, and the contexts of the
// lookups waiting for them. It clears sending when nothing is left.
func (b *batcher) next() ([]string, []*flight, []context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	var fs []*flight
	var ctxs []context.Context
	n := 0
	for _, k := range b.queue {
		if len(ids) == b.max {
			break
		}
		n++
		f := b.flights[k]
		if !alive(f.ctxs) {
			f.err = context.Canceled
			delete(b.flights, k)
			close(f.done)
			continue
		}
		ids, fs, ctxs = append(ids, k), append(fs, f), append(ctxs, f.ctxs...)
	}
	b.queue = slices.Delete(b.queue, 0, n)
	if ids == nil {
		b.sending = false
	}
	return ids, fs, ctxs
}

// alive reports whether one of ctxs is not done.
func alive(ctxs []context.Context) bool {
	return slices.ContainsFunc(ctxs, func(c context.Context) bool { return c.Err() == nil })
}

// anyAlive is a context that ends when every one of ctxs has: a shared
// request is not cut while one of its lookups still waits.
func anyAlive(ctxs []context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctxs[0]))
	var mu sync.Mutex
	left := len(ctxs)
	stops := make([]func() bool, len(ctxs))
	for i, c := range ctxs {
		stops[i] = context.AfterFunc(c, func() {
			mu.Lock()
			left--
			last := left == 0
			mu.Unlock()
			if last {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel()
	}
}
