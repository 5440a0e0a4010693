package sim

import (
	"cmp"
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
	OAIPMH   = "oai-pmh"   // oaipmh.arxiv.org: GET /oai?verb=ListRecords
	LLM      = "llm"       // OpenAI's API: chat completions, files, batches
	// Anthropic is Anthropic's API: messages and message batches.
	Anthropic = "anthropic"
)

// Services lists the service names in a fixed order.
var Services = []string{Arxiv, Ar5iv, S2, ArxivAPI, OAIPMH, LLM, Anthropic, PDFHost, GrobidService, Internal}

// worldOnly are the services only a World serves: its open-access PDFs,
// the GROBID that converts them, and the internal service no download may
// reach. Start leaves them out for another Literature.
var worldOnly = map[string]bool{PDFHost: true, GrobidService: true, Internal: true}

// Model is the model name the simulated LLM is meant to be asked for; it
// answers any.
const Model = "sim-1"

// A Literature is what the world-backed services serve: the pages of
// arXiv and ar5iv, what Semantic Scholar knows, the arXiv API's entries
// and the OAI-PMH repository's records. A World generates it, a Corpus holds it.
type Literature interface {
	Pages
	S2Source
	Entries
	OAIRecords
}

// Options configure Start and NewService: each service's limits and
// faults, by name. Services not named have no limits and inject no faults.
type Options struct {
	// Services names the services Start starts (default: Services).
	Services []string
	// Seed seeds the fault decisions (default: a World's own seed).
	Seed   uint64
	Limits map[string]Limits
	Faults map[string]Faults
	// StrictOpenAI makes the llm service refuse, as OpenAI does, a strict
	// response_format whose schema strict mode does not accept.
	StrictOpenAI bool
	// Robots, by service name, is a robots.txt served at /robots.txt (see
	// ArxivRobots); a service not named answers it 404.
	Robots map[string]string
	// S2Key, when set, is the only x-api-key the s2 service accepts: a
	// request with another answers 403, one without any is served, as S2
	// serves its keyless pool.
	S2Key string
	// OAIPageSize is the records of an OAI-PMH ListRecords page (default
	// OAIDefaultPageSize).
	OAIPageSize int
	// Grobid configures the GROBID service (its Convert is the world's).
	Grobid GrobidConfig
	// Echo, by service name, makes a service echo the requests it gets
	// (see Echo).
	Echo map[string]Echo
	// Addrs, by service name, is the address a service listens on when it
	// is free (default 127.0.0.1:0, a free port); one that is taken falls
	// back to a free port. The demo asks for its previous run's, so that a
	// store's robots.txt answers, kept by URL, still apply.
	Addrs map[string]string
	// LLMAnswer is the test's answer hook of the LLM services (see
	// LLMAnswer): the answers it gives come before the simulated model's
	// own, made from each request's schema. CurateModel answers curate's
	// own prompts.
	LLMAnswer LLMAnswer
	// LLMKey, when set, is the only API key the LLM services accept (a
	// bearer token for llm, x-api-key for anthropic); a request with
	// another, or none, is refused 401 as the providers refuse it.
	LLMKey string
	// LLMModels are the models the LLM services list at GET /v1/models
	// (default: Model).
	LLMModels []string
}

// Servers are the simulated services of a Literature, each listening on
// its own port of 127.0.0.1 (curate keys its rate limits by host).
type Servers struct {
	// World is the World served, nil for another Literature.
	World    *World
	urls     map[string]string
	services map[string]*Service
	servers  []*http.Server
	grobid   *Grobid
}

// Start starts the services over lit: opt.Services, or all of them (for a
// Literature other than a World, all but the World's own).
func Start(lit Literature, opt Options) (*Servers, error) {
	s := &Servers{urls: map[string]string{}, services: map[string]*Service{}}
	w, isWorld := lit.(*World)
	if isWorld {
		s.World = w
	}
	names := opt.Services
	if names == nil {
		for _, n := range Services {
			if isWorld || !worldOnly[n] {
				names = append(names, n)
			}
		}
	}
	var lns []net.Listener
	fail := func(err error) (*Servers, error) {
		for _, l := range lns {
			l.Close()
		}
		s.Close()
		return nil, err
	}
	for _, name := range names {
		svc, g, err := buildService(name, lit, opt)
		if err != nil {
			return fail(err)
		}
		if g != nil {
			s.grobid = g
		}
		ln, err := net.Listen("tcp", cmp.Or(opt.Addrs[name], "127.0.0.1:0"))
		if err != nil && opt.Addrs[name] != "" {
			ln, err = net.Listen("tcp", "127.0.0.1:0")
		}
		if err != nil {
			return fail(fmt.Errorf("sim: listen for %s: %w", name, err))
		}
		srv := &http.Server{Handler: svc, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.services[name] = svc
		s.urls[name] = "http://" + ln.Addr().String()
		lns = append(lns, ln)
	}
	if isWorld && s.urls[PDFHost] != "" {
		s.setOpenAccess() // before any handler runs: the S2 records name the PDF host
	}
	for i, srv := range s.servers {
		go srv.Serve(lns[i])
	}
	return s, nil
}

// NewService returns the named service (one of Services) over lit, with
// the limits, faults and robots.txt opt gives it; the LLMs answer without
// reading lit. A Service is an http.Handler: serve it on any listener.
func NewService(name string, lit Literature, opt Options) (*Service, error) {
	svc, _, err := buildService(name, lit, opt)
	return svc, err
}

// buildService is NewService, also returning the GROBID state behind the
// grobid service.
func buildService(name string, lit Literature, opt Options) (*Service, *Grobid, error) {
	seed := opt.Seed
	if w, ok := lit.(*World); ok && seed == 0 {
		seed = w.cfg.Seed
	}
	var h handlerFunc
	var openai *openAIAPI
	var anthropic *anthropicAPI
	var grobid *Grobid
	w, isWorld := lit.(*World)
	if worldOnly[name] && !isWorld {
		return nil, nil, fmt.Errorf("sim: service %q needs a World", name)
	}
	switch name {
	case Arxiv:
		h = arxivSite{lit}.serve
	case Ar5iv:
		h = ar5ivSite{lit}.serve
	case S2:
		h = (&s2API{src: lit, key: opt.S2Key}).serve
	case ArxivAPI:
		h = atomAPI{lit}.serve
	case OAIPMH:
		h = oaiAPI{src: lit, pageSize: opt.OAIPageSize}.serve
	case LLM:
		openai = newOpenAIAPI()
		openai.strict = opt.StrictOpenAI
		h = openai.handle
	case Anthropic:
		anthropic = newAnthropicAPI()
		h = anthropic.handle
	case PDFHost:
		h = fromHandler(w.pdfSite())
	case GrobidService:
		gc := opt.Grobid
		gc.Convert = w.convertPDF(cmpOr(gc.Version, "0.8.1"))
		grobid = NewGrobid(gc)
		h = fromHandler(grobid)
	case Internal:
		h = fromHandler(internalSite())
	default:
		return nil, nil, fmt.Errorf("sim: no service %q (have %s)", name, strings.Join(Services, ", "))
	}
	if name == LLM || name == Anthropic {
		h = withModels(name, cmpSlice(opt.LLMModels, []string{Model}), h)
		if opt.LLMKey != "" {
			h = withLLMKey(name, opt.LLMKey, h)
		}
	}
	if body, ok := opt.Robots[name]; ok {
		h = withRobots(NewRobotsFile(http.StatusOK, body), h)
	}
	svc := newService(name, seed, h)
	switch {
	case openai != nil:
		openai.svc, svc.batches, svc.dropResults = svc, openai.book.stats, openai.dropResults
	case anthropic != nil:
		anthropic.svc, svc.batches, svc.dropResults = svc, anthropic.book.stats, anthropic.dropResults
	}
	svc.SetLimits(opt.Limits[name])
	svc.SetFaults(opt.Faults[name])
	svc.SetEcho(opt.Echo[name])
	svc.SetLLMAnswer(opt.LLMAnswer)
	return svc, grobid, nil
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
// --arxiv-api-base, --oai-base (the knowledge cut asks OAI-PMH by
// default; without the service, --oai-versions=false, so that nothing
// asks the real one), --llm-base and --llm-model.
func (s *Servers) Flags() []string {
	oai := []string{"--oai-versions=false"}
	if s.urls[OAIPMH] != "" {
		oai = []string{"--oai-base", s.OAIBase()}
	}
	return append([]string{
		"--arxiv-base", s.URL(Arxiv), "--ar5iv-base", s.URL(Ar5iv),
		"--s2-base", s.URL(S2), "--arxiv-api-base", s.URL(ArxivAPI),
		"--llm-base", s.URL(LLM), "--llm-model", Model,
	}, oai...)
}

// OAIBase is the OAI-PMH repository's base URL as curate's --oai-base
// takes it (its path included); "" when the service is not started.
func (s *Servers) OAIBase() string {
	if s.urls[OAIPMH] == "" {
		return ""
	}
	return s.urls[OAIPMH] + OAIPath
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
