package sim

import (
	"maps"
	"sync"
)

// BatchStats is what a simulated batch API was asked: the batches
// created, the lines they held, the polls, and how often each custom_id
// was submitted, so tests can check that no request was submitted twice.
type BatchStats struct {
	Batches     int
	Lines       int
	Polls       int
	Submissions map[string]int // custom_id -> batches it was submitted in
}

type batchBook struct {
	mu sync.Mutex
	st BatchStats
}

func newBatchBook() batchBook { return batchBook{st: BatchStats{Submissions: map[string]int{}}} }

func (b *batchBook) submitted(_ string, ids []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.Batches++
	b.st.Lines += len(ids)
	for _, id := range ids {
		b.st.Submissions[id]++
	}
}

func (b *batchBook) poll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.Polls++
}

func (b *batchBook) stats() BatchStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.st
	s.Submissions = maps.Clone(b.st.Submissions)
	return s
}

// BatchStats returns what the batch API of service name (LLM or
// Anthropic) was asked.
func (s *Servers) BatchStats(name string) BatchStats {
	if svc := s.services[name]; svc != nil {
		return svc.BatchStats()
	}
	return BatchStats{}
}

// BatchStats returns what the service's batch API was asked (the LLMs;
// zero for the others).
func (s *Service) BatchStats() BatchStats {
	if s.batches == nil {
		return BatchStats{}
	}
	return s.batches()
}

// DropBatchResults makes service name (LLM or Anthropic) forget the
// results of the batches that have ended, as the providers do after a
// while (Anthropic keeps them 29 days): asking for them gets a 404.
func (s *Servers) DropBatchResults(name string) {
	if svc := s.services[name]; svc != nil && svc.dropResults != nil {
		svc.dropResults()
	}
}

// dropResults forgets the output files of the batches that have ended.
func (a *openAIAPI) dropResults() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.batches {
		for _, id := range []*string{b.OutputFileID, b.ErrorFileID} {
			if id != nil {
				delete(a.files, *id)
			}
		}
	}
}

// dropResults forgets the results of the batches that have ended.
func (a *anthropicAPI) dropResults() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.batches {
		if b.results != nil {
			b.results, b.gone = nil, true
		}
	}
}
