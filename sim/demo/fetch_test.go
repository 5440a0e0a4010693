package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestFetchStage runs the pipeline's fetch stage against the demo servers:
// every paper with a page is fetched from the site the manifest names, and
// the cited arXiv papers without one end as "no HTML" through ar5iv's 307.
func TestFetchStage(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("demo-test", "team@example.org"),
		RetryMax:     1,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 10 * time.Millisecond,
	},
		httpx.ServiceConfig{Name: "arxiv", BaseURL: s.URL(sim.Arxiv)},
		httpx.ServiceConfig{Name: "ar5iv", BaseURL: s.URL(sim.Ar5iv)},
	)
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := hc.Service("arxiv")
	a5, _ := hc.Service("ar5iv")
	f := &fetch.Fetcher{Arxiv: ax, Ar5iv: a5, Store: st}

	m := manifest(t)
	var ids []string
	for _, p := range m.Papers {
		if p.ArxivID != "" {
			ids = append(ids, p.ArxivID)
		}
	}
	results := f.All(ctx, ids, 4, nil)
	for i, r := range results {
		p := m.Papers[0]
		for _, q := range m.Papers {
			if q.ArxivID == ids[i] {
				p = q
			}
		}
		switch {
		case p.HTML == "" && r.Outcome != fetch.Missing:
			t.Errorf("%s (no page): %s %v", ids[i], r.Outcome, r.Err)
		case p.HTML != "" && (r.Outcome != fetch.Fetched || r.Source != p.HTML):
			t.Errorf("%s: %s from %q (%v), want fetched from %s", ids[i], r.Outcome, r.Source, r.Err, p.HTML)
		case p.HTML != "" && (r.Doc.Title == nil || *r.Doc.Title != p.Title):
			t.Errorf("%s: title %v", ids[i], r.Doc.Title)
		}
	}
}
