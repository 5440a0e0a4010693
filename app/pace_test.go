package app

import (
	"context"
	"testing"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/fetch"
)

// --arxiv-interval paces every arXiv service alike, 0 included ("none",
// as the flag says): the arXiv API and OAI-PMH read 0 as their 3s
// default, so with the knowledge cut on by default a 150-target run at
// --arxiv-interval 0 waited 3s for each of its ~100 version lookups.
func TestArxivIntervalPacesEveryArxivService(t *testing.T) {
	for _, interval := range []time.Duration{0, time.Millisecond, 3 * time.Second} {
		cfg := Config{
			Version: "test", Store: t.TempDir(), Lock: true,
			Net:     Net{ArxivBase: "http://127.0.0.1:9", Ar5ivBase: "http://127.0.0.1:9", ArxivInterval: interval, Timeout: 5 * time.Second},
			S2:      S2{Base: "http://127.0.0.1:9", ArxivAPIBase: "http://127.0.0.1:9", PageLimit: 100},
			LLM:     LLM{Heuristic: true},
			OAIBase: "http://127.0.0.1:9/oai",
		}
		a, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{fetch.ServiceArxiv, fetch.ServiceAr5iv, arxivapi.ServiceName, oaipmh.ServiceName} {
			svc, err := a.HTTP.Service(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := svc.Configured(); got != interval {
				t.Errorf("--arxiv-interval %s: %s paced %s apart", interval, name, got)
			}
		}
		a.Close()
	}
}
