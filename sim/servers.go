package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Names of the services.
const (
	Arxiv    = "arxiv"     // arxiv.org: GET /html/ID
	Ar5iv    = "ar5iv"     // ar5iv.labs.arxiv.org: GET /html/ID
	S2       = "s2"        // api.semanticscholar.org: /graph/v1/paper/...
	ArxivAPI = "arxiv-api" // export.arxiv.org: GET /api/query?id_list=
	LLM      = "llm"       // OpenAI's API: chat completions, files, batches
	// Anthropic is Anthropic's API: messages and message batches.
	Anthropic = "anthropic"
)

// Services lists the service names in a fixed order.
var Services = []string{Arxiv, Ar5iv, S2, ArxivAPI, LLM, Anthropic, PDFHost, GrobidService, Internal}

// Model is the model name the simulated LLM is meant to be asked for; it
// answers any.
const Model = "sim-1"

// Options configure Start: each service's limits and faults, by name.
// Services not named have no limits and inject no faults.
type Options struct {
	Limits map[string]Limits
	Faults map[string]Faults
	// StrictOpenAI makes the llm service refuse, as OpenAI does, a strict
	// response_format whose schema strict mode does not accept.
	StrictOpenAI bool
	// Robots, by service name, is a robots.txt served at /robots.txt (see
	// ArxivRobots); a service not named answers it 404.
	Robots map[string]string
	// Grobid configures the GROBID service (its Convert is the world's).
	Grobid GrobidConfig
}

// Servers are the simulated services of a World, each listening on its
// own port of 127.0.0.1 (curate keys its rate limits by host).
type Servers struct {
	World    *World
	urls     map[string]string
	services map[string]*Service
	servers  []*http.Server

	openai    *openAIAPI
	anthropic *anthropicAPI
	grobid    *Grobid
}

// Start starts the services over w.
func Start(w *World, opt Options) (*Servers, error) {
	s := &Servers{World: w, urls: map[string]string{}, services: map[string]*Service{}}
	s.openai, s.anthropic = newOpenAIAPI(), newAnthropicAPI()
	s.openai.strict = opt.StrictOpenAI
	gc := opt.Grobid
	gc.Convert = w.convertPDF(cmpOr(gc.Version, "0.8.1"))
	s.grobid = NewGrobid(gc)
	handlers := map[string]handlerFunc{
		Arxiv: w.arxivHandler, Ar5iv: w.ar5ivHandler, S2: w.s2Handler, ArxivAPI: w.atomHandler,
		LLM: s.openai.handle, Anthropic: s.anthropic.handle,
		PDFHost: w.pdfHandler, GrobidService: grobidHandler(s.grobid), Internal: internalHandler,
	}
	var lns []net.Listener
	for _, name := range Services {
		h := handlers[name]
		if body, ok := opt.Robots[name]; ok {
			h = withRobots(body, h)
		}
		svc := newService(name, w.cfg.Seed, h)
		switch name {
		case LLM:
			s.openai.svc = svc
		case Anthropic:
			s.anthropic.svc = svc
		}
		svc.SetLimits(opt.Limits[name])
		svc.SetFaults(opt.Faults[name])
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			s.Close()
			return nil, fmt.Errorf("sim: listen for %s: %w", name, err)
		}
		srv := &http.Server{Handler: svc, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.services[name] = svc
		s.urls[name] = "http://" + ln.Addr().String()
		lns = append(lns, ln)
	}
	s.setOpenAccess() // before any handler runs: the S2 records name the PDF host
	for i, srv := range s.servers {
		go srv.Serve(lns[i])
	}
	return s, nil
}

// URL returns the base URL of a service as curate's flags take it (the
// LLMs' with their /v1), "" for an unknown name.
func (s *Servers) URL(name string) string {
	if (name == LLM || name == Anthropic) && s.urls[name] != "" {
		return s.urls[name] + "/v1"
	}
	return s.urls[name]
}

// Service returns the named service, nil for an unknown name.
func (s *Servers) Service(name string) *Service { return s.services[name] }

// Stats returns every service's counters.
func (s *Servers) Stats() map[string]Stats {
	out := map[string]Stats{}
	for name, svc := range s.services {
		out[name] = svc.Stats()
	}
	return out
}

// Requests returns the number of requests every service received.
func (s *Servers) Requests() int {
	n := 0
	for _, svc := range s.services {
		n += svc.Stats().Requests
	}
	return n
}

// SetFaults replaces the faults of every service: f[name], or none.
func (s *Servers) SetFaults(f map[string]Faults) {
	for name, svc := range s.services {
		svc.SetFaults(f[name])
	}
}

// Reset clears every service's counters and call log.
func (s *Servers) Reset() {
	for _, svc := range s.services {
		svc.Reset()
	}
}

// Flags returns the curate flags that point it at the services and use
// the simulated LLM: --arxiv-base, --ar5iv-base, --s2-base,
// --arxiv-api-base, --llm-base and --llm-model.
func (s *Servers) Flags() []string {
	return []string{
		"--arxiv-base", s.URL(Arxiv), "--ar5iv-base", s.URL(Ar5iv),
		"--s2-base", s.URL(S2), "--arxiv-api-base", s.URL(ArxivAPI),
		"--llm-base", s.URL(LLM), "--llm-model", Model,
	}
}

// Close stops the services at once, closing open connections.
func (s *Servers) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	s.servers = nil
	return errors.Join(errs...)
}

// String lists the services and their URLs.
func (s *Servers) String() string {
	names := make([]string, 0, len(s.urls))
	for n := range s.urls {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, n+"="+s.URL(n))
	}
	return strings.Join(parts, " ")
}
