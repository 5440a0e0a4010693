package versions

import (
	"context"
	"sync"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// batcher is an API whose concurrent lookups share requests: while one
// request is out (or waits for its turn at the service's pace, 3s on
// arXiv), the lookups that arrive queue, and the next request asks for
// all of them, up to arxivapi.MaxLookup papers. A run's targets each ask
// for a few dozen papers; asked one target a request, a 9,000-target run
// sends some 6,000 requests, an hour and a half of arXiv's pace per
// thousand. No lookup waits for others to arrive: the first goes alone
// at once, and only what queues behind a request joins the next.
type batcher struct {
	api API
	max int

	mu      sync.Mutex
	queue   []*batchCall
	sending bool
}

// batchCall is one Lookup waiting for its answer.
type batchCall struct {
	ctx     context.Context
	ids     []string // canonical, distinct
	done    chan struct{}
	entries map[string]record.ArxivEntry
	err     error
}

func newBatcher(api API) *batcher {
	return &batcher{api: api, max: arxivapi.MaxLookup}
}

// Lookup returns the entries of ids, asked together with the lookups
// queued beside it. Its error is the shared request's, or ctx's.
func (b *batcher) Lookup(ctx context.Context, ids []string) (map[string]record.ArxivEntry, error) {
	c := &batchCall{ctx: ctx, done: make(chan struct{})}
	seen := make(map[string]bool, len(ids))
	for _, s := range ids {
		k := s
		if id, err := arxiv.Parse(s); err == nil {
			k = id.Canonical()
		}
		if !seen[k] {
			seen[k] = true
			c.ids = append(c.ids, k)
		}
	}
	if len(c.ids) == 0 {
		return map[string]record.ArxivEntry{}, nil
	}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start {
		go b.send()
	}
	select {
	case <-c.done:
		return c.entries, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send asks for what is queued, a request at a time, until the queue is
// empty.
func (b *batcher) send() {
	for {
		calls, ids := b.next()
		if calls == nil {
			return
		}
		ctx, stop := anyAlive(calls)
		entries, err := b.api.Lookup(ctx, ids)
		stop()
		for _, c := range calls {
			if err == nil {
				c.entries = make(map[string]record.ArxivEntry, len(c.ids))
				for _, k := range c.ids {
					if e, ok := entries[k]; ok {
						c.entries[k] = e
					}
				}
			}
			c.err = err
			close(c.done)
		}
	}
}

// next takes the calls of the next request off the queue: in their
// order, as many as fit in b.max papers (the first whatever its size),
// leaving out those whose context is done. It clears sending and
// returns nil when nothing is left.
func (b *batcher) next() ([]*batchCall, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var calls []*batchCall
	var ids []string
	in := map[string]bool{}
	rest := b.queue[:0]
	for _, c := range b.queue {
		if c.ctx.Err() != nil {
			c.err = c.ctx.Err()
			close(c.done)
			continue
		}
		var add []string
		for _, k := range c.ids {
			if !in[k] {
				add = append(add, k)
			}
		}
		if len(calls) > 0 && len(ids)+len(add) > b.max {
			rest = append(rest, c)
			continue
		}
		for _, k := range add {
			in[k] = true
		}
		calls, ids = append(calls, c), append(ids, add...)
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	if calls == nil {
		b.sending = false
	}
	return calls, ids
}

// anyAlive is a context that ends when every call's context has: a
// shared request is not cut while one of its lookups still waits.
func anyAlive(calls []*batchCall) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(calls[0].ctx))
	var mu sync.Mutex
	alive := len(calls)
	stops := make([]func() bool, len(calls))
	for i, c := range calls {
		stops[i] = context.AfterFunc(c.ctx, func() {
			mu.Lock()
			alive--
			last := alive == 0
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
