package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/targetlist"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// What the commands that only look at a store (status, show, stats) get:
// each opens the store read-only, so it works while a run holds its lock,
// and changes nothing, not even an empty or older ledger.

// StatusInterrupted counts, in a StoreStatus, items a run left "running"
// that no run is working on any more (the next run redoes them).
const StatusInterrupted = "interrupted"

// Entry is a ledger entry as the commands print it.
type Entry struct {
	Item      string    `json:"item"`
	Stage     string    `json:"stage"`
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts"`
	Error     string    `json:"error,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	RunID     string    `json:"run_id"`
}

func entries(es []store.Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = Entry{e.Item, e.Stage, e.Status, e.Attempts, e.Error, e.UpdatedAt, e.RunID}
	}
	return out
}

// StoreStatus is what a store holds: items per stage and status, the
// failures, suspects and waiting items, the LLM batches, the last run.
type StoreStatus struct {
	Store string `json:"store"`
	// Running names the process holding the store's lock, if any: without
	// one, items left "running" belong to a run that ended without
	// finishing them and are counted as StatusInterrupted.
	Running  string                    `json:"running,omitempty"`
	Stages   map[string]map[string]int `json:"stages"`
	Failures []Entry                   `json:"failures"`
	// Suspect lists the targets held back as implausible, with why.
	Suspect []Entry `json:"suspect"`
	// Waiting lists the items whose stage waits on LLM answers in a
	// provider's batch (ledger status pending).
	Waiting []Entry `json:"waiting"`
	// Batches are the LLM batches not yet collected, oldest first;
	// BatchRequests counts the batch ledger's requests by stage and state.
	Batches       []BatchEntry              `json:"llm_batches"`
	BatchRequests map[string]map[string]int `json:"llm_batch_requests"`
	LastRun       json.RawMessage           `json:"last_run,omitempty"`
	// Order lists the stages of Stages in pipeline order, then any others
	// alphabetically.
	Order []string `json:"-"`
}

// BatchEntry is a pending LLM batch as status prints it.
type BatchEntry struct {
	ID        string    `json:"id"`
	Remote    string    `json:"remote,omitempty"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	State     string    `json:"state"`
	Requests  int       `json:"requests"`
	Submitted time.Time `json:"submitted"`
	AgeSec    int64     `json:"age_seconds"`
}

// Status reads what the store in dir holds, in the table's stage order.
func Status(ctx context.Context, dir string) (*StoreStatus, error) {
	st, err := OpenStoreReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	s := &StoreStatus{Store: st.Dir(), Failures: []Entry{}, Suspect: []Entry{}, Waiting: []Entry{}, Batches: []BatchEntry{}}
	if s.Stages, err = st.Counts(ctx); err != nil {
		return nil, err
	}
	held, holder := st.LockHeld()
	if held {
		s.Running = holder
	} else {
		for _, c := range s.Stages {
			if n := c[store.StatusRunning]; n > 0 {
				c[StatusInterrupted] += n
				delete(c, store.StatusRunning)
			}
		}
	}
	s.Order = stageOrder(s.Stages)
	for _, name := range s.Order {
		for _, l := range []struct {
			status string
			to     *[]Entry
		}{{store.StatusFailed, &s.Failures}, {store.StatusSuspect, &s.Suspect}, {store.StatusPending, &s.Waiting}} {
			es, err := st.ByStatus(ctx, name, l.status)
			if err != nil {
				return nil, err
			}
			*l.to = append(*l.to, entries(es)...)
		}
	}
	pending, err := llm.PendingBatches(ctx, st)
	if err != nil {
		return nil, err
	}
	for _, b := range pending {
		s.Batches = append(s.Batches, BatchEntry{ID: b.ID, Remote: b.Remote, Provider: b.Provider, Model: b.Model, State: b.State,
			Requests: b.Requests, Submitted: b.Created.UTC(), AgeSec: int64(b.Age.Seconds())})
	}
	if s.BatchRequests, err = st.BatchRequestCounts(ctx); err != nil {
		return nil, err
	}
	if v, err := st.Value(ctx, RunSummaryKey); err == nil {
		s.LastRun = v
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return s, nil
}

// LastRun decodes the summary of the store's last run, if it has one.
func (s *StoreStatus) LastRunRecord() (*RunRecord, bool) {
	if len(s.LastRun) == 0 {
		return nil, false
	}
	var rec RunRecord
	if err := json.Unmarshal(s.LastRun, &rec); err != nil || rec.Summary == nil {
		return nil, false
	}
	return &rec, true
}

// stageOrder lists the stages of counts in the table's order, then any
// others alphabetically.
func stageOrder(counts map[string]map[string]int) []string {
	names := Names()
	var out []string
	for _, n := range names {
		if _, ok := counts[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range counts {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// ShownRecord is one stored record: JSON records inline, byte records
// (raw pages) by size and hash.
type ShownRecord struct {
	Blob      string            `json:"blob"`
	Bytes     int               `json:"bytes,omitempty"`
	UpdatedAt time.Time         `json:"updated_at"`
	Meta      map[string]string `json:"meta,omitempty"`
	Value     json.RawMessage   `json:"value,omitempty"`
}

// ShownItem is what the store holds for a paper: its records by kind and
// its ledger entries.
type ShownItem struct {
	ID      string                 `json:"id"`
	Records map[string]ShownRecord `json:"records"`
	Ledger  []Entry                `json:"ledger"`
}

// ShowKeys turns the papers a user names (arXiv IDs in any form
// --targets-from reads, or store items such as s2:PAPERID) into store
// keys; one that is neither is ErrUsage.
func ShowKeys(ids []string) ([]string, error) {
	keys := make([]string, len(ids))
	for i, in := range ids {
		id, err := targetlist.ParseValue(in)
		switch {
		case err == nil:
			keys[i] = record.Key(id)
		case strings.HasPrefix(in, "s2:") || strings.HasPrefix(in, "title:") || strings.HasPrefix(in, "llm:"):
			keys[i] = in
		default:
			return nil, fmt.Errorf("%w: %q is not an arXiv ID (nor a store item such as s2:PAPERID)", ErrUsage, in)
		}
	}
	return keys, nil
}

// Show passes each paper ids names to item, in order, with what the store
// in dir holds for it (ids as ShowKeys reads them); with raw, it passes
// the stored page as served instead (page). Papers the store holds
// nothing for are named in the error, wrapping store.ErrNotFound.
func Show(ctx context.Context, dir string, ids []string, raw bool, item func(*ShownItem) error, page func([]byte) error) error {
	keys, err := ShowKeys(ids)
	if err != nil {
		return err
	}
	st, err := OpenStoreReadOnly(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	var missing []string
	for i, key := range keys {
		if raw {
			data, _, err := record.RawPages.Get(ctx, st, key)
			if err != nil {
				return fmt.Errorf("raw page of %s: %w", ids[i], err)
			}
			if err := page(data); err != nil {
				return err
			}
			continue
		}
		it := &ShownItem{ID: key, Records: map[string]ShownRecord{}}
		recs, err := st.Records(ctx, key)
		if err != nil {
			return fmt.Errorf("records of %s: %w", ids[i], err)
		}
		for _, r := range recs {
			data, err := st.Blob(r.Blob)
			if err != nil {
				return fmt.Errorf("%s record of %s: %w", r.Kind, ids[i], err)
			}
			sr := ShownRecord{Blob: string(r.Blob), UpdatedAt: r.UpdatedAt, Meta: r.Meta}
			if json.Valid(data) {
				sr.Value = data
			} else {
				sr.Bytes = len(data)
			}
			it.Records[r.Kind] = sr
		}
		es, err := st.Entries(ctx, key)
		if err != nil {
			return fmt.Errorf("ledger of %s: %w", ids[i], err)
		}
		it.Ledger = entries(es)
		if len(recs) == 0 && len(es) == 0 {
			missing = append(missing, ids[i])
			continue
		}
		if err := item(it); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the store %s holds nothing for %s: %w", st.Dir(), strings.Join(missing, ", "), store.ErrNotFound)
	}
	return nil
}

// LabelStats are the label distributions of a store's idea cards.
type LabelStats struct {
	Store string
	Cards int
	Stats summarize.LabelStats
}

// Labels returns the opportunity and paradigm label distributions of the
// idea cards in the store in dir, of kind (record.CardGold,
// record.CardSource, or "" for both) and written by model ("" for any).
func Labels(ctx context.Context, dir, kind, model string) (*LabelStats, error) {
	if kind != "" && kind != record.CardGold && kind != record.CardSource {
		return nil, fmt.Errorf("%w: --kind %q: want %s or %s", ErrUsage, kind, record.CardGold, record.CardSource)
	}
	st, err := OpenStoreReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	stored, err := record.StoredCards(ctx, st)
	if err != nil {
		return nil, err
	}
	var cards []record.Card
	for _, sc := range stored {
		if (kind == "" || sc.CardKind == kind) && (model == "" || sc.Card.Model == model) {
			cards = append(cards, sc.Card)
		}
	}
	if len(cards) == 0 {
		if len(stored) == 0 {
			return nil, fmt.Errorf("stats labels: %s holds no idea cards (run curate summarize first)", st.Dir())
		}
		return nil, fmt.Errorf("stats labels: none of the %d idea cards in %s is of kind %q and model %q", len(stored), st.Dir(), kind, model)
	}
	return &LabelStats{Store: st.Dir(), Cards: len(cards), Stats: summarize.Stats(cards)}, nil
}
