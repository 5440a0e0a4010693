package s2_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// citedWorld is a world in which targets cite earlier ones and a revised
// source cites its target, and the target of it cited most.
func citedWorld(t *testing.T) (*sim.World, sim.Paper, []sim.S2CitingEdge) {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 40, RevisedSource: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	var best sim.Paper
	var bestEdges []sim.S2CitingEdge
	for i := range w.NumTargets() {
		p := w.Target(i)
		raw, _ := w.S2Citing("ARXIV:" + p.ArxivID)
		if len(raw) > len(bestEdges) {
			best, bestEdges = p, nil
			for _, r := range raw {
				var e sim.S2CitingEdge
				if err := json.Unmarshal(r, &e); err != nil {
					t.Fatal(err)
				}
				bestEdges = append(bestEdges, e)
			}
		}
	}
	if len(bestEdges) < 3 {
		t.Fatalf("the most cited target has %d citations: too few to page", len(bestEdges))
	}
	return w, best, bestEdges
}

// TestCitations pages through a target's citations on the simulated S2:
// every citing paper once, in S2's order, with the fields asked for.
func TestCitations(t *testing.T) {
	w, target, want := citedWorld(t)
	srv := simtest.Serve(t, sim.S2, w)
	c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: 2}})
	list, err := c.Citations(context.Background(), s2.ArxivPaperID(target.ArxivID))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Citations) != len(want) || !list.Complete() || list.Pages != (len(want)+1)/2 {
		t.Fatalf("%d citations on %d pages (complete %v), want %d on %d", len(list.Citations), list.Pages, list.Complete(), len(want), (len(want)+1)/2)
	}
	influential := 0
	for i, got := range list.Citations {
		cp, wp := got.CitingPaper, want[i].CitingPaper
		if cp.PaperID != *wp.PaperID || cp.Title != wp.Title || cp.PublicationDate == nil || *cp.PublicationDate != *wp.PublicationDate ||
			cp.Abstract == nil || cp.CitationCount == nil || cp.ArxivID() == "" || got.IsInfluential != want[i].IsInfluential {
			t.Errorf("citation %d: %+v, want %+v", i, got, want[i])
		}
		if got.IsInfluential {
			influential++
		}
	}
	if influential == 0 || influential == len(want) {
		t.Errorf("%d of %d citations influential: the test needs both kinds", influential, len(want))
	}
	for _, call := range srv.CallsTo(sim.S2CitationsPath("ARXIV:" + target.ArxivID)) {
		if f := call.Query().Get("fields"); f != s2.CitationFields {
			t.Errorf("fields %q, want %q", f, s2.CitationFields)
		}
	}
	if _, err := c.Citations(context.Background(), "ARXIV:2401.49999"); !errors.Is(err, s2.ErrNotFound) || !strings.Contains(err.Error(), "2401.49999") {
		t.Errorf("unknown paper: %v", err)
	}
	// A paper nobody cites: one page, empty.
	last := w.Target(w.NumTargets() - 1)
	list, err = c.Citations(context.Background(), s2.ArxivPaperID(last.ArxivID))
	if err != nil || len(list.Citations) != 0 || list.Pages != 1 || !list.Complete() {
		t.Errorf("uncited paper: %+v %v", list, err)
	}
}

// TestCitationsThrottled: S2's 429 with Retry-After on a citations page is
// waited out and the page asked again.
func TestCitationsThrottled(t *testing.T) {
	w, target, want := citedWorld(t)
	srv := simtest.Serve(t, sim.S2, w)
	path := sim.S2CitationsPath("ARXIV:" + target.ArxivID)
	srv.Script(path, sim.TooManyRequests.WithRetryAfter("1"), 1)
	c, _ := newClient(t, srv.URL, setup{})
	list, err := c.Citations(context.Background(), s2.ArxivPaperID(target.ArxivID))
	if err != nil || len(list.Citations) != len(want) {
		t.Fatalf("%+v %v", list, err)
	}
	calls := srv.CallsTo(path)
	if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests {
		t.Fatalf("calls %+v, want a 429 then the page", calls)
	}
	if gap := calls[1].Start.Sub(calls[0].Start); gap < time.Second {
		t.Errorf("asked again after %s, want >= 1s (Retry-After)", gap)
	}
}

// citingPage builds a citations page of n citing papers numbered from
// offset, with next when given.
func citingPage(offset, n int, next *int) []byte {
	type paper struct {
		PaperID string `json:"paperId"`
		Title   string `json:"title"`
	}
	type edge struct {
		IsInfluential bool  `json:"isInfluential"`
		CitingPaper   paper `json:"citingPaper"`
	}
	page := struct {
		Offset int    `json:"offset"`
		Next   *int   `json:"next,omitempty"`
		Data   []edge `json:"data"`
	}{Offset: offset, Next: next, Data: []edge{}}
	for i := offset; i < offset+n; i++ {
		page.Data = append(page.Data, edge{IsInfluential: i%2 == 0, CitingPaper: paper{PaperID: fmt.Sprintf("c%05d", i), Title: fmt.Sprintf("Citing %d", i)}})
	}
	b, _ := json.Marshal(page)
	return b
}

// TestCitationsPaging: what S2 gets wrong in paging is told apart: an
// empty page before the end, a next that does not advance, a list past
// the 10,000-item window, an answer without data.
func TestCitationsPaging(t *testing.T) {
	tests := []struct {
		name    string
		page    func(offset, limit int) string
		count   int
		empty   bool
		capped  bool
		wantErr string
	}{
		{"empty page with next", func(o, l int) string {
			if o == 0 {
				return string(citingPage(0, 2, ptr(2)))
			}
			return `{"offset": 2, "next": 4, "data": []}`
		}, 2, true, false, ""},
		{"next does not advance", func(o, l int) string { return string(citingPage(o, l, ptr(o))) }, 0, false, false, "does not advance"},
		{"endless", func(o, l int) string { return string(citingPage(o, l, ptr(o+l))) }, 9999, false, true, ""},
		{"no data", func(o, l int) string { return `{"offset": 0}` }, 0, false, false, "no data"},
		{"data null", func(o, l int) string { return `{"offset": 0, "data": null}` }, 0, false, false, "no data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, n int) {
				if refuse(w, h) {
					return
				}
				if n > 30 {
					t.Error("the client keeps asking")
					return
				}
				o, l := offsetLimit(t, h)
				testutil.WriteJSON(w, 200, []byte(tt.page(o, l)))
			})
			c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: map[bool]int{true: 1000, false: 2}[tt.capped]}})
			list, err := c.Citations(context.Background(), "CorpusId:7")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "CorpusId:7") {
					t.Errorf("err %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Citations) != tt.count || list.EmptyPage != tt.empty || list.Capped != tt.capped || list.Complete() == (tt.empty || tt.capped) {
				t.Errorf("%d citations, empty page %v, capped %v", len(list.Citations), list.EmptyPage, list.Capped)
			}
			for _, h := range srv.Requests() {
				if o, l := offsetLimit(t, h); o+l >= 10000 || l > 1000 {
					t.Errorf("request offset %d limit %d breaks the window", o, l)
				}
				if !strings.HasSuffix(h.Path, "/citations") {
					t.Errorf("request %s", h.Path)
				}
			}
		})
	}
}

// TestCitationRecorded decodes the recorded citation item of
// ../shared/fixtures.
func TestCitationRecorded(t *testing.T) {
	var c s2.Citation
	if err := json.Unmarshal(fixture(t, "citation_item_contextsWithIntent_influential.json"), &c); err != nil {
		t.Fatal(err)
	}
	p := c.CitingPaper
	if !c.IsInfluential || len(c.Contexts) != 4 || p.PaperID != "bdcbc589c8d1e4dd0c6572630f8511557406ad2f" ||
		p.PublicationDate == nil || *p.PublicationDate != "2023-02-01" || p.Venue != "IEEE Robotics and Automation Letters" || p.Abstract == nil {
		t.Errorf("recorded citation: %+v", c)
	}
}
