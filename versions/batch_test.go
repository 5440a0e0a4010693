package versions

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/groundwork/curate/record"
)

// heldAPI answers every id it knows, and holds each request until the
// test releases it, so that lookups can be queued behind it.
type heldAPI struct {
	mu      sync.Mutex
	calls   [][]string
	ctxs    []context.Context
	entered chan struct{}
	release chan error
}

func newHeldAPI() *heldAPI {
	return &heldAPI{entered: make(chan struct{}, 16), release: make(chan error)}
}

func (a *heldAPI) Lookup(ctx context.Context, ids []string) (map[string]record.ArxivEntry, error) {
	a.mu.Lock()
	a.calls = append(a.calls, slices.Clone(ids))
	a.ctxs = append(a.ctxs, ctx)
	a.mu.Unlock()
	a.entered <- struct{}{}
	if err := <-a.release; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[string]record.ArxivEntry{}
	for _, id := range ids {
		out[id] = record.ArxivEntry{ID: id}
	}
	return out, nil
}

func (a *heldAPI) requests() [][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// queued waits until n papers' lookups are registered with b (a lookup
// of k papers counts k; those answered no longer count).
func queued(b *batcher, n int) {
	for {
		b.mu.Lock()
		l := 0
		for _, f := range b.flights {
			l += len(f.ctxs)
		}
		b.mu.Unlock()
		if l >= n {
			return
		}
		runtime.Gosched()
	}
}

type answer struct {
	entries map[string]record.ArxivEntry
	err     error
}

func lookupAsync(ctx context.Context, b *batcher, ids ...string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		e, err := b.Lookup(ctx, ids)
		ch <- answer{e, err}
	}()
	return ch
}

func keys(m map[string]record.ArxivEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestBatcherShares(t *testing.T) {
	ctx := context.Background()
	api := newHeldAPI()
	b := newBatcher(api)
	b.max = 4
	first := lookupAsync(ctx, b, "2301.00001")
	<-api.entered // out, waiting for its turn
	var queuedCalls []<-chan answer
	n := 1 // the first's
	for _, ids := range [][]string{
		{"2301.00002", "2301.00003v2"},
		{"2301.00003", "2301.00004"}, // shares a paper with the one before
		{"2301.00005", "2301.00006"}, // the sixth beyond the four a request asks
		{"2301.00001"},               // out already: waits for that answer
	} {
		queuedCalls = append(queuedCalls, lookupAsync(ctx, b, ids...))
		n += len(ids)
		queued(b, n) // in this order
	}
	api.release <- nil
	if a := <-first; a.err != nil || !slices.Equal(keys(a.entries), []string{"2301.00001"}) {
		t.Errorf("first: %v %v", keys(a.entries), a.err)
	}
	<-api.entered
	api.release <- nil
	<-api.entered
	api.release <- nil
	want := [][]string{{"2301.00002", "2301.00003"}, {"2301.00003", "2301.00004"}, {"2301.00005", "2301.00006"}, {"2301.00001"}}
	for i, ch := range queuedCalls {
		if a := <-ch; a.err != nil || !slices.Equal(keys(a.entries), want[i]) {
			t.Errorf("lookup %d: %v %v, want its own entries %v", i, keys(a.entries), a.err, want[i])
		}
	}
	got := fmt.Sprint(api.requests())
	if w := "[[2301.00001] [2301.00002 2301.00003 2301.00004 2301.00005] [2301.00006]]"; got != w {
		t.Errorf("requests %s, want %s (the queued papers share the next, four at most, each asked once)", got, w)
	}
}

func TestBatcherErrorsAndCancels(t *testing.T) {
	ctx := context.Background()
	api := newHeldAPI()
	b := newBatcher(api)
	first := lookupAsync(ctx, b, "2301.00001")
	<-api.entered
	gone, cancel := context.WithCancel(ctx)
	left := lookupAsync(gone, b, "2301.00002")
	queued(b, 2)
	stays := lookupAsync(ctx, b, "2301.00003")
	queued(b, 3)
	cancel()
	if a := <-left; !errors.Is(a.err, context.Canceled) {
		t.Errorf("a cancelled lookup: %v", a.err)
	}
	down := errors.New("503 past its retries")
	api.release <- down
	if a := <-first; !errors.Is(a.err, down) {
		t.Errorf("the request's error: %v", a.err)
	}
	<-api.entered
	api.release <- nil
	if a := <-stays; a.err != nil || !slices.Equal(keys(a.entries), []string{"2301.00003"}) {
		t.Errorf("the lookup beside a cancelled one: %v %v", keys(a.entries), a.err)
	}
	if got := fmt.Sprint(api.requests()); got != "[[2301.00001] [2301.00003]]" {
		t.Errorf("requests %s: the cancelled lookup was asked", got)
	}

	// A request all of whose lookups are gone is cut; a lookup that
	// joined it after it went out is asked again.
	c1, cancel1 := context.WithCancel(ctx)
	only := lookupAsync(c1, b, "2301.00009")
	<-api.entered
	api.mu.Lock()
	reqCtx := api.ctxs[len(api.ctxs)-1]
	api.mu.Unlock()
	joined := lookupAsync(ctx, b, "2301.00009")
	queued(b, 2)
	cancel1()
	<-only
	<-reqCtx.Done()
	api.release <- nil
	<-api.entered
	api.release <- nil
	if a := <-joined; a.err != nil || !slices.Equal(keys(a.entries), []string{"2301.00009"}) {
		t.Errorf("the lookup that joined a cut request: %v %v", keys(a.entries), a.err)
	}
	if got := fmt.Sprint(api.requests()); got != "[[2301.00001] [2301.00003] [2301.00009] [2301.00009]]" {
		t.Errorf("requests %s", got)
	}
}
