package postknowledge_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/postknowledge"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

var cutoff = time.Date(2025, 3, 10, 17, 30, 0, 0, time.UTC)

func TestPlace(t *testing.T) {
	for _, tt := range []struct {
		date string
		year int
		want postknowledge.Placement
	}{
		{"2025-03-11", 2025, postknowledge.After},
		{"2025-03-10", 2025, postknowledge.Before}, // the cutoff's own day
		{"2025-03-09", 2025, postknowledge.Before},
		{"2024-12-31", 2024, postknowledge.Before},
		{"", 2026, postknowledge.After},
		{"", 2024, postknowledge.Before},
		{"", 2025, postknowledge.Undated},
		{"", 0, postknowledge.Undated},
	} {
		if got := postknowledge.Place(record.CitingPaper{Date: tt.date, Year: tt.year}, cutoff); got != tt.want {
			t.Errorf("date %q year %d: %v, want %v", tt.date, tt.year, got, tt.want)
		}
	}
}

// TestSelect keeps the n most influential papers after the cutoff, in a
// fixed order, counting what it drops; a paper listed twice counts once.
func TestSelect(t *testing.T) {
	p := func(id, date string, infl bool, ic, c int) record.CitingPaper {
		return record.CitingPaper{PaperID: id, Date: date, Influential: infl, InfluentialCitationCount: ic, CitationCount: c}
	}
	papers := []record.CitingPaper{
		p("a", "2025-04-01", false, 9, 100),
		p("b", "2025-05-01", true, 0, 1),
		p("c", "2025-03-10", true, 50, 500), // the cutoff's day: before
		p("d", "2024-01-01", true, 50, 500),
		p("e", "2025-06-01", false, 9, 100), // ties a but later
		p("f", "2025-06-01", false, 20, 3),
		{PaperID: "g", Year: 2025},
		{PaperID: "h", Year: 2026, Influential: true},
		p("b", "2025-05-01", true, 0, 1), // listed twice
	}
	pk := postknowledge.Select(papers, cutoff, 4)
	var got []string
	for _, x := range pk.Papers {
		got = append(got, x.PaperID)
	}
	if want := []string{"b", "h", "f", "a"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if pk.After != 5 || pk.Before != 2 || pk.Undated != 1 || pk.N != 4 || !pk.Cutoff.Equal(cutoff) {
		t.Errorf("counts %+v", pk)
	}
	if all := postknowledge.Select(papers, cutoff, 100); len(all.Papers) != 5 {
		t.Errorf("n past the list: %d kept", len(all.Papers))
	}
	if none := postknowledge.Select(nil, cutoff, 3); none.Papers == nil || len(none.Papers) != 0 {
		t.Errorf("no papers: %+v", none)
	}
}

func client(t *testing.T, url string) *s2.Client {
	t.Helper()
	hc, err := httpx.New(httpx.Config{UserAgent: "test", Logger: slog.New(slog.DiscardHandler)}, s2.ServiceConfig(url, "", time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(s2.ServiceName)
	c, err := s2.New(svc, s2.Options{PageLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCollect asks the simulated S2 for a target's citations: every kept
// paper is dated after the target's v1, the cited-by of a source revised
// after the target (first published before it) is not post-knowledge,
// and one request per page is sent.
func TestCollect(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 40, RevisedSource: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.Serve(t, sim.S2, w)
	c := client(t, srv.URL)
	target := w.Target(3)
	pk, err := postknowledge.Collect(context.Background(), c, target.ArxivID+"v1", target.Published, 2, postknowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := w.S2Citing("ARXIV:" + target.ArxivID)
	if pk.Target != target.ArxivID || pk.Citations != len(raw) || !pk.Complete || pk.Before < 1 || pk.After+pk.Before+pk.Undated != len(raw) || len(pk.Papers) != min(2, pk.After) {
		t.Fatalf("post-knowledge %+v of %d citations", pk, len(raw))
	}
	if pk.After == 0 {
		t.Fatal("no citation after the cutoff: the test proves nothing")
	}
	day := target.Published.Format(time.DateOnly)
	for _, p := range pk.Papers {
		if p.Date <= day || p.Title == "" || p.Abstract == "" || p.DateFrom != record.DateFromS2 {
			t.Errorf("kept %+v, cutoff %s", p, day)
		}
	}
	if n := len(srv.CallsTo(sim.S2CitationsPath("ARXIV:" + target.ArxivID))); n != (len(raw)+2)/3 {
		t.Errorf("%d requests, want one per page of 3", n)
	}

	if _, err := postknowledge.Collect(context.Background(), c, target.ArxivID, target.Published, 0, postknowledge.Options{}); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("n 0: %v", err)
	}
	if _, err := postknowledge.Collect(context.Background(), c, "no id", target.Published, 2, postknowledge.Options{}); err == nil {
		t.Error("a bad id")
	}
	if _, err := postknowledge.Collect(context.Background(), c, "2401.49999", target.Published, 2, postknowledge.Options{}); !errors.Is(err, s2.ErrNotFound) {
		t.Errorf("unknown target: %v", err)
	}
}

// citer answers with fixed citations.
type citer []s2.Citation

func (c citer) Citations(context.Context, string) (*s2.CitationList, error) {
	return &s2.CitationList{Citations: c, Pages: 1}, nil
}

// TestFirstPublished: a citing paper S2 dates after the cutoff but whose
// arXiv v1 came before it is not post-knowledge.
func TestFirstPublished(t *testing.T) {
	ptr := func(s string) *string { return &s }
	mk := func(id, arxivID, date string) s2.Citation {
		p := record.ScholarPaper{PaperID: id, Title: "T " + id, PublicationDate: ptr(date)}
		if arxivID != "" {
			p.ExternalIDs = &record.ScholarIDs{ArXiv: arxivID}
		}
		return s2.Citation{CitingPaper: p}
	}
	cites := citer{mk("journal-later", "2502.00001", "2025-09-01"), mk("really-after", "2504.00002", "2025-09-01"), mk("no-arxiv", "", "2025-09-01")}
	first := func(_ context.Context, id string) (time.Time, error) {
		switch id {
		case "2502.00001":
			return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), nil
		case "2504.00002":
			return time.Date(2025, 4, 2, 0, 0, 0, 0, time.UTC), nil
		}
		return time.Time{}, fmt.Errorf("unknown %s", id)
	}
	pk, err := postknowledge.Collect(context.Background(), cites, "2503.00009", cutoff, 10, postknowledge.Options{FirstPublished: first})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pk.Papers {
		got = append(got, p.PaperID+" "+p.Date+" "+p.DateFrom)
	}
	want := []string{"no-arxiv 2025-09-01 s2", "really-after 2025-04-02 arxiv-v1"}
	slices.Sort(got)
	if !slices.Equal(got, want) || pk.Before != 1 {
		t.Errorf("kept %v (before %d), want %v", got, pk.Before, want)
	}
}
