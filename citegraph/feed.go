package citegraph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/record"
)

// DefaultFlushAfter is how many further targets the feed walks before it
// sends the batch a waiting target needs: its batches then carry the
// missing fields of at least that many targets' references (one request
// where there were that many), and a target waits at most that many
// references requests for its batch.
const DefaultFlushAfter = 32

// DefaultFeedWorkers is how many references requests the feed has in
// flight: enough to keep Semantic Scholar's limiter busy when an answer
// takes longer than its interval.
const DefaultFeedWorkers = 4

// The feed gets a run's Semantic Scholar and arXiv API answers ahead of
// the stage and in the fewest requests: the targets' own records from
// /paper/batch, 500 a request; each target's references (one request per
// page); the fields the edges lack from /paper/batch calls that gather
// the cited papers of many targets, up to 500 IDs a call, each paper
// asked once per run (and never when a stored record holds it); the
// arXiv API entries, 100 a request. It walks the targets in the run's
// order, independently of the fetch stage (the references need no page),
// and stores every answer as it comes, so a crash loses at most the batch
// in flight. Build waits for its target's answers and then links them
// without a request.
type feed struct {
	r          *Runner
	keys       []string
	index      map[string]int
	flushAfter int
	workers    int
	refresh    bool
	drain      <-chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	metaOnce  []sync.Once // per chunk of s2.MaxBatch keys
	metaErr   []error
	arxivDone []chan struct{} // per chunk of arxivapi.MaxLookup keys
	arxivErr  error

	flushMu sync.Mutex // one batch at a time

	mu      sync.Mutex
	st      []keyState
	pending []string         // paper IDs for the next batch, in the order queued
	waiting map[string][]int // paper ID -> keys waiting for its answer
	// memo says which target's stored batch answers hold a paper's answer
	// ("" when S2 answered null); fresh holds the answers of this run
	// until that target's record is written.
	memo     map[string]string
	fresh    map[string]*record.ScholarPaper
	memoOnce sync.Once
	memoErr  error
	steps    int // targets walked
	walked   bool
}

// keyState is the feed's progress on one target.
type keyState struct {
	done      chan struct{} // closed when its answers are stored (or err set)
	err       error
	requested bool // a request was made for it this run
	demanded  bool // Build is waiting for it
	queuedAt  int  // steps when its fill was queued
	want      int  // paper IDs still unanswered
	ids       []string
	filled    record.S2Filled
	stored    bool // its batch answers were written this run
	skipped   bool // Runner.Skip: left to Build
}

// settle drops the fresh answer of a paper once the target holding it
// has its record written, and forgets a paper whose holder failed before
// writing it (a later target asks again); f.mu is held.
func (f *feed) settle(id string) {
	h, ok := f.memo[id]
	if !ok || h == "" {
		delete(f.fresh, id)
		return
	}
	i, ok := f.index[h]
	if !ok {
		delete(f.fresh, id) // read from the store
		return
	}
	st := &f.st[i]
	select {
	case <-st.done:
		if !st.stored {
			if _, fresh := f.fresh[id]; fresh {
				// Its holder failed: this run's answer was never written.
				delete(f.memo, id)
			}
		}
		delete(f.fresh, id)
	default:
		// Its holder waits for other papers: the answer stays here.
	}
}

// Feed starts getting the answers of keys (store keys) ahead of Build,
// which then waits for them instead of asking itself; stop ends the feed
// (keys it has not finished are then asked by Build as without a feed)
// and reports the arXiv API lookup's error, if any (targets without an
// entry take their date from their ID). Keys outside the feed are built
// as without one. Once drain is closed no more targets are walked (those
// walked are finished). There is one feed at a time per Runner.
func (s *Runner) Feed(ctx context.Context, keys []string, drain <-chan struct{}) (stop func() error) {
	keys = slices.Clone(keys)
	f := &feed{r: s, keys: keys, index: make(map[string]int, len(keys)), refresh: s.Refresh, drain: drain,
		flushAfter: s.FlushAfter, workers: s.FeedWorkers,
		waiting: map[string][]int{}, memo: map[string]string{}, fresh: map[string]*record.ScholarPaper{}, st: make([]keyState, len(keys))}
	if f.flushAfter <= 0 {
		f.flushAfter = DefaultFlushAfter
	}
	if f.workers <= 0 {
		f.workers = DefaultFeedWorkers
	}
	for i, k := range keys {
		f.index[k] = i
		f.st[i].done = make(chan struct{})
	}
	n := (len(keys) + s2.MaxBatch - 1) / s2.MaxBatch
	f.metaOnce, f.metaErr = make([]sync.Once, n), make([]error, n)
	f.arxivDone = make([]chan struct{}, (len(keys)+arxivapi.MaxLookup-1)/arxivapi.MaxLookup)
	for i := range f.arxivDone {
		f.arxivDone[i] = make(chan struct{})
	}
	f.ctx, f.cancel = context.WithCancel(ctx)
	s.feedMu.Lock()
	s.feed = f
	s.feedMu.Unlock()
	f.wg.Go(f.lookupArxiv)
	f.wg.Go(f.walk)
	return func() error {
		f.cancel()
		f.wg.Wait()
		s.feedMu.Lock()
		if s.feed == f {
			s.feed = nil
		}
		s.feedMu.Unlock()
		return f.arxivErr
	}
}

func (s *Runner) currentFeed() *feed {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	return s.feed
}

// lookupArxiv stores the arXiv API entries of the keys, a chunk at a
// time in the run's order, marking each chunk done for wait.
func (f *feed) lookupArxiv() {
	defer func() {
		for _, c := range f.arxivDone {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	}()
	for i, chunk := range chunks(f.keys, arxivapi.MaxLookup) {
		if err := f.r.lookupArxiv(f.ctx, chunk, f.refresh); err != nil && f.arxivErr == nil {
			// The rest are still asked: one failed chunk must not take the
			// metadata of every later target with it.
			f.arxivErr = err
		}
		close(f.arxivDone[i])
	}
}

func chunks(keys []string, n int) [][]string {
	var out [][]string
	for c := range slices.Chunk(keys, n) {
		out = append(out, c)
	}
	return out
}

// walk asks for every key's references in order, f.workers at a time,
// queues the fields their edges lack and sends the batches.
func (f *feed) walk() {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range f.workers {
		wg.Go(func() {
			for i := range jobs {
				f.step(i)
			}
		})
	}
walk:
	for i := range f.keys {
		select {
		case jobs <- i:
		case <-f.drain:
			break walk
		case <-f.ctx.Done():
			break walk
		}
	}
	close(jobs)
	wg.Wait()
	f.mu.Lock()
	f.walked = true
	f.mu.Unlock()
	f.flush(f.ctx, true)
	f.finish(f.ctx.Err())
}

// finish ends every key not done yet with err (the feed stopped).
func (f *feed) finish(err error) {
	if err == nil {
		err = errors.New("semantic scholar feed ended before this target")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.st {
		f.end(i, fmt.Errorf("citegraph %s: %w", f.keys[i], err))
	}
}

// end marks key i done with err (nil: its answers are stored); f.mu is
// held. A key already done is left as it is.
func (f *feed) end(i int, err error) {
	st := &f.st[i]
	select {
	case <-st.done:
		return
	default:
	}
	st.err, st.filled, st.ids = err, nil, nil
	close(st.done)
}

// step walks key i: its S2 record (from the batch of its chunk), its
// references, and the fields they lack (answered now from what the run
// already has, or queued).
func (f *feed) step(i int) {
	key, ctx := f.keys[i], f.ctx
	if f.r.Skip != nil && f.r.Skip(ctx, key) {
		f.mu.Lock()
		f.st[i].skipped = true
		f.end(i, nil)
		f.mu.Unlock()
		return
	}
	if f.r.S2 == nil {
		// No Semantic Scholar: edges come from the bibliography alone,
		// and only the arXiv lookup runs ahead.
		f.mu.Lock()
		f.steps++
		f.end(i, nil)
		f.mu.Unlock()
		return
	}
	fail := func(err error) {
		f.mu.Lock()
		f.end(i, fmt.Errorf("citegraph %s: %w", key, err))
		f.mu.Unlock()
	}
	if !f.refresh && f.r.present(ctx, key, record.S2Papers.Name(), record.S2References.Name(), record.S2Batches.Name()) {
		// Everything stored: nothing to read here (Build reads it).
		f.mu.Lock()
		f.steps++
		f.end(i, nil)
		f.mu.Unlock()
		return
	}
	if err := f.meta(ctx, i/s2.MaxBatch); err != nil {
		fail(err)
		return
	}
	paper, _, err := record.S2Papers.Get(ctx, f.r.Store, key)
	if err != nil {
		fail(err)
		return
	}
	refs, req, err := f.r.s2References(ctx, key, paper.Paper, f.refresh)
	if req {
		f.mu.Lock()
		f.st[i].requested = true
		f.mu.Unlock()
	}
	if err != nil {
		fail(err)
		return
	}
	filled := false
	if refs.List != nil && !f.refresh {
		if filled, err = record.S2Batches.Has(ctx, f.r.Store, key); err != nil {
			fail(fmt.Errorf("read the stored S2 batch answer of %s: %w", key, err))
			return
		}
	}
	if refs.List == nil || filled {
		// Nothing to fill (no list), or filled already.
		f.mu.Lock()
		f.steps++
		f.end(i, nil)
		f.mu.Unlock()
		return
	}
	if err := f.queue(ctx, i, FillIDs(refs.List)); err != nil {
		fail(err)
		return
	}
	f.mu.Lock()
	f.steps++
	due := len(f.pending) >= s2.MaxBatch || f.overdue()
	f.mu.Unlock()
	if due {
		f.flush(ctx, false)
	}
}

// overdue reports whether a demanded key has waited f.flushAfter steps
// for its batch; f.mu is held.
func (f *feed) overdue() bool {
	for _, id := range f.pending {
		for _, i := range f.waiting[id] {
			if st := &f.st[i]; st.demanded && f.steps-st.queuedAt >= f.flushAfter {
				return true
			}
		}
	}
	return false
}

// meta stores the S2 records of chunk c's keys (one batch request) unless
// they are stored.
func (f *feed) meta(ctx context.Context, c int) error {
	f.metaOnce[c].Do(func() {
		chunk := f.keys[c*s2.MaxBatch : min((c+1)*s2.MaxBatch, len(f.keys))]
		var ids, want []string
		for _, k := range chunk {
			if !f.refresh && f.r.present(ctx, k, record.S2Papers.Name()) || f.r.Skip != nil && f.r.Skip(ctx, k) {
				continue
			}
			want = append(want, k)
			ids = append(ids, s2.ArxivPaperID(k))
		}
		if len(ids) == 0 {
			return
		}
		papers, err := f.r.S2.Batch(ctx, ids, strings.Split(targetFields, ",")...)
		if err != nil {
			f.metaErr[c] = fmt.Errorf("semantic scholar records of %d targets: %w", len(ids), err)
			return
		}
		f.mu.Lock()
		for _, k := range want {
			f.st[f.index[k]].requested = true
		}
		f.mu.Unlock()
		for j, k := range want {
			rec := record.S2Paper{Found: papers[j] != nil, Paper: papers[j]}
			if _, err := record.S2Papers.Put(ctx, f.r.Store, k, &rec, nil); err != nil {
				f.metaErr[c] = err
				return
			}
		}
	})
	return f.metaErr[c]
}

// queue takes the paper IDs key i's edges need filled: those the run has
// answered already are taken from there, the others wait for a batch. A
// key with nothing left to wait for is stored and done at once.
func (f *feed) queue(ctx context.Context, i int, ids []string) error {
	if len(ids) > 0 && !f.refresh {
		if err := f.loadMemo(ctx); err != nil {
			return err
		}
	}
	f.mu.Lock()
	st := &f.st[i]
	st.ids, st.filled, st.queuedAt = ids, record.S2Filled{}, f.steps
	held := map[string][]string{} // holder key -> paper IDs it holds
	for _, id := range ids {
		if holder, ok := f.memo[id]; ok {
			if p, ok := f.fresh[id]; ok {
				if p != nil {
					st.filled[id] = p
				}
			} else if holder != "" {
				held[holder] = append(held[holder], id)
			}
			continue
		}
		st.want++
		if _, ok := f.waiting[id]; !ok {
			f.pending = append(f.pending, id)
		}
		f.waiting[id] = append(f.waiting[id], i)
	}
	f.mu.Unlock()
	for holder, pids := range held {
		rec, _, err := record.S2Batches.Get(ctx, f.r.Store, holder)
		if err != nil {
			return fmt.Errorf("the batch answers stored for %s: %w", holder, err)
		}
		f.mu.Lock()
		for _, id := range pids {
			if p := (*rec)[id]; p != nil {
				st.filled[id] = p
			}
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	ready := st.want == 0
	f.mu.Unlock()
	if ready {
		return f.store(ctx, []int{i})
	}
	return nil
}

// loadMemo notes, once, which stored batch answers of the run's targets
// hold which papers, so a paper answered in an earlier run is not asked
// again.
func (f *feed) loadMemo(ctx context.Context) error {
	f.memoOnce.Do(func() {
		for _, k := range f.keys {
			rec, ok, err := record.S2Batches.Lookup(ctx, f.r.Store, k)
			if err != nil {
				f.memoErr = err
				return
			}
			if !ok {
				continue
			}
			f.mu.Lock()
			for id, p := range *rec {
				if _, seen := f.memo[id]; !seen && p != nil {
					f.memo[id] = k
				}
			}
			f.mu.Unlock()
		}
	})
	return f.memoErr
}

// flush sends the pending paper IDs, s2.MaxBatch a request (with all
// false, only full batches and overdue ones), and stores the keys they
// complete.
func (f *feed) flush(ctx context.Context, all bool) {
	f.flushMu.Lock()
	defer f.flushMu.Unlock()
	for ctx.Err() == nil {
		f.mu.Lock()
		if len(f.pending) == 0 || !all && len(f.pending) < s2.MaxBatch && !f.overdue() {
			f.mu.Unlock()
			return
		}
		n := min(len(f.pending), s2.MaxBatch)
		ids := slices.Clone(f.pending[:n])
		f.pending = f.pending[n:]
		f.mu.Unlock()

		papers, err := f.r.S2.Batch(ctx, ids, f.r.fillFields()...)
		f.mu.Lock()
		var ready []int
		for j, id := range ids {
			if err == nil {
				// Answered: later targets take it from here, not from S2.
				f.memo[id], f.fresh[id] = f.keys[f.waiting[id][0]], papers[j]
				if papers[j] == nil {
					f.memo[id] = ""
				}
			}
			for _, i := range f.waiting[id] {
				st := &f.st[i]
				st.requested = true
				if err != nil {
					f.end(i, fmt.Errorf("citegraph %s: fill what its edges lack: %w", f.keys[i], err))
					continue
				}
				if st.filled == nil {
					continue // ended
				}
				if papers[j] != nil {
					st.filled[id] = papers[j]
				}
				if st.want--; st.want == 0 {
					ready = append(ready, i)
				}
			}
			delete(f.waiting, id)
		}
		f.mu.Unlock()
		if err := f.store(ctx, ready); err != nil {
			f.mu.Lock()
			for _, i := range ready {
				f.end(i, fmt.Errorf("citegraph %s: %w", f.keys[i], err))
			}
			f.mu.Unlock()
		}
		f.mu.Lock()
		for _, id := range ids {
			f.settle(id)
		}
		f.mu.Unlock()
	}
}

// store writes the batch answers of keys that have all of them and marks
// them done; the papers become the memo's for later keys.
func (f *feed) store(ctx context.Context, keys []int) error {
	for _, i := range keys {
		f.mu.Lock()
		st := &f.st[i]
		filled := st.filled
		f.mu.Unlock()
		if filled == nil {
			continue // ended meanwhile
		}
		if _, err := record.S2Batches.Put(ctx, f.r.Store, f.keys[i], &filled, nil); err != nil {
			return err
		}
		f.mu.Lock()
		st.stored = true
		ids := st.ids
		f.end(i, nil)
		for _, id := range ids {
			if _, ok := f.memo[id]; !ok {
				f.memo[id] = ""
				if filled[id] != nil {
					f.memo[id] = f.keys[i]
				}
			}
			f.settle(id)
		}
		f.mu.Unlock()
	}
	return nil
}

// wait waits until the feed has key's answers stored; ok is false when
// the feed does not cover key. A demanded key whose batch waits only on
// more targets being walked is sent at once when the walk is over.
func (f *feed) wait(ctx context.Context, key string) (requested, ok bool, err error) {
	i, ok := f.index[key]
	if !ok {
		return false, false, nil
	}
	select {
	case <-f.arxivDone[i/arxivapi.MaxLookup]:
	case <-ctx.Done():
		return false, true, ctx.Err()
	}
	f.mu.Lock()
	st := &f.st[i]
	st.demanded = true
	walked := f.walked
	f.mu.Unlock()
	if walked {
		f.flush(ctx, true)
	}
	select {
	case <-st.done:
	case <-ctx.Done():
		return false, true, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st.skipped {
		return false, false, nil
	}
	return st.requested, true, st.err
}

// present reports whether key has records of every kind, from the
// ledger alone (the blobs are not read: a damaged one is found, and asked
// for again, when Build reads it).
func (s *Runner) present(ctx context.Context, key string, kinds ...string) bool {
	recs, err := s.Store.Records(ctx, key)
	if err != nil {
		return false
	}
	have := map[string]bool{}
	for _, r := range recs {
		have[r.Kind] = true
	}
	for _, k := range kinds {
		if !have[k] {
			return false
		}
	}
	return true
}

// lookupArxiv stores the arXiv API entries of keys that lack one (all of
// them with refresh), one request per arxivapi.MaxLookup keys.
func (s *Runner) lookupArxiv(ctx context.Context, keys []string, refresh bool) error {
	if s.ArxivAPI == nil {
		return nil
	}
	var want []string
	for _, k := range keys {
		if !refresh {
			// Only an absent entry (a lost one included, healed) is asked
			// for: another read error is the lookup's, not a reason to ask.
			_, ok, err := record.ArxivMetas.Lookup(ctx, s.Store, k)
			if err != nil {
				return fmt.Errorf("look up the arXiv entry of %s: read the stored one: %w", k, err)
			}
			if ok {
				continue
			}
		}
		want = append(want, k)
	}
	// One request per chunk, each stored before the next is asked, so a
	// crash loses at most the chunk in flight.
	for chunk := range slices.Chunk(want, arxivapi.MaxLookup) {
		entries, err := s.ArxivAPI.Lookup(ctx, chunk)
		if err != nil {
			return err
		}
		for _, k := range chunk {
			e, ok := entries[k]
			rec := record.ArxivMeta{Found: ok, CheckedAt: time.Now().UTC().Format(time.RFC3339)}
			if ok {
				rec.Entry = &e
			}
			if _, err := record.ArxivMetas.Put(ctx, s.Store, k, &rec, nil); err != nil {
				return err
			}
		}
	}
	return nil
}
