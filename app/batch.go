package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/groundwork/curate/client/llm"
)

// In batch mode (LLM.Mode llm.ModeBatch) a stage's LLM requests are queued
// by the Batcher, and a target whose answers are not there yet waits
// (pipeline.Wait): neither done nor failed. When nothing else can move,
// the run settles: it submits what it queued, and waits for the batches
// (polling) as long as LLM.Wait allows, then sends the waiting targets
// through their stage again; what is still waiting when the run ends is
// listed (ErrPending), and the next run collects it from the batch
// ledger in the store.

// BatchState is what a run in batch mode left with the provider.
type BatchState struct {
	// Pending are the batches not collected yet, oldest first (of every
	// run on the store).
	Pending []llm.BatchInfo
	// Queued counts requests queued and not submitted when the run ended
	// (the budget was reached, or a submission failed: Err says which);
	// the next run queues them again.
	Queued int
	Err    error
	// Requests counts the batch ledger's requests by stage and state.
	Requests map[string]map[string]int
}

// Settle is the pipeline's Settle in batch mode (and sft's): it submits
// the queued requests and, when batches are pending, waits for them within
// the run's LLM.Wait. It reports whether asking again for what waits can
// get further. Outside batch mode it reports false.
func (a *App) Settle(ctx context.Context, waiting int) bool {
	b := a.Batcher
	if b == nil {
		return false
	}
	queued := b.Queued()
	if err := b.Flush(ctx); err != nil {
		a.batchErr = err
		a.Log.Warn("llm batch submission incomplete; the requests not submitted are queued again by the next run", "queued", b.Queued(), "err", err)
	}
	submitted := queued - b.Queued()
	left, err := b.Poll(ctx)
	if err != nil {
		a.Log.Warn("llm batch poll failed", "err", err)
	}
	// Another pass gets further if a batch was collected since the last
	// one (during the pass or just now): its answers are in the ledger.
	collected := b.Collected() > a.collectedSeen
	a.collectedSeen = b.Collected()
	if collected || left == 0 {
		return collected || submitted > 0
	}
	if a.cfg.LLM.Wait <= 0 {
		return false
	}
	if a.waitUntil.IsZero() {
		a.waitUntil = time.Now().Add(a.cfg.LLM.Wait)
	}
	if !time.Now().Before(a.waitUntil) {
		return false
	}
	a.Log.Info("waiting for LLM batches", "targets", waiting, "batches", left, "at_most", time.Until(a.waitUntil).Round(time.Second))
	wctx, cancel := context.WithDeadline(ctx, a.waitUntil)
	defer cancel()
	if a.cfg.Drain != nil {
		go func() {
			select {
			case <-a.cfg.Drain:
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	err = b.Wait(wctx)
	a.collectedSeen = b.Collected()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			a.Log.Info("stopped waiting for LLM batches: --llm-wait is over", "wait", a.cfg.LLM.Wait)
		}
		return false
	}
	return true
}

// CollectBatches looks at every pending batch once before a run, so that
// every target of the run sees the answers that came in since the last.
func (a *App) CollectBatches(ctx context.Context) {
	if a.Batcher == nil {
		return
	}
	n, err := a.Batcher.Poll(ctx)
	if err != nil {
		a.Log.Warn("llm batch poll failed", "err", err)
	}
	if n > 0 {
		a.Log.Info("LLM batches still pending from earlier runs", "batches", n)
	}
}

// EndBatches submits what is still queued (a run that drained, or that
// stopped settling, leaves requests queued) and returns the state of the
// batches; nil outside batch mode.
func (a *App) EndBatches(ctx context.Context) *BatchState {
	b := a.Batcher
	if b == nil {
		return nil
	}
	if ctx.Err() == nil && b.Queued() > 0 {
		if err := b.Flush(ctx); err != nil {
			a.batchErr = err
			a.Log.Warn("llm batch submission incomplete; the requests not submitted are queued again by the next run", "queued", b.Queued(), "err", err)
		}
	}
	ctx = context.WithoutCancel(ctx)
	bs := &BatchState{Queued: b.Queued(), Err: a.batchErr}
	var err error
	if bs.Pending, err = llm.PendingBatches(ctx, a.Store); err != nil {
		a.Log.Warn("llm batch ledger unreadable", "err", err)
	}
	if bs.Requests, err = a.Store.BatchRequestCounts(ctx); err != nil {
		a.Log.Warn("llm batch ledger unreadable", "err", err)
	}
	return bs
}

// Passes runs pass, which reports how many of its items wait on LLM
// answers in a batch, until none waits: between passes it settles as a
// run does (submits what was queued, waits within LLM.Wait), and it stops
// when that cannot get further. Commands whose work is not a per-target
// stage (sft, topics, pairs) run through it; their answers come from the
// LLM cache on every pass after the first. In sync mode pass runs once.
// It returns the last pass's count, and the batches' state (nil in sync
// mode).
func (a *App) Passes(ctx context.Context, pass func(context.Context) (waiting int, err error)) (int, *BatchState, error) {
	a.CollectBatches(ctx)
	for {
		n, err := pass(ctx)
		if err != nil || n == 0 || a.Batcher == nil || a.draining() || ctx.Err() != nil || !a.Settle(ctx, n) {
			return n, a.EndBatches(ctx), err
		}
	}
}

func (a *App) draining() bool {
	if a.cfg.Drain == nil {
		return false
	}
	select {
	case <-a.cfg.Drain:
		return true
	default:
		return false
	}
}

// PendingError is the ErrPending of a run that ended with n items (what
// names them: "target", "instance", ...) waiting on the batches of bs.
func PendingError(n int, what string, bs *BatchState) error {
	batches := 0
	if bs != nil {
		batches = len(bs.Pending)
	}
	where := "in " + pluralBatches(batches)
	if batches == 0 {
		where = "not submitted yet"
	}
	msg := fmt.Sprintf("%s %s on LLM answers %s: run the same command again later to collect them",
		Plural(n, what), map[bool]string{true: "waits", false: "wait"}[n == 1], where)
	if bs != nil && bs.Queued > 0 {
		why := "the submission failed"
		if errors.Is(bs.Err, llm.ErrBudget) {
			why = "the run's budget is spent"
		}
		msg += fmt.Sprintf(" (%d requests were not submitted: %s; the next run submits them)", bs.Queued, why)
	}
	return Fail(ErrPending, errors.New(msg))
}

func pluralBatches(n int) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}
