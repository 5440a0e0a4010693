package demo

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/groundwork/curate/sim"
)

// The demo serves the services that know papers (OAI-PMH for the
// papers' version histories); it has no LLM (the pipeline runs with its
// heuristics) and no GROBID.
var services = []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH}

// hosts maps the real services' host names to service names, for Handler.
var hosts = map[string]string{
	"arxiv.org":               sim.Arxiv,
	"www.arxiv.org":           sim.Arxiv,
	"ar5iv.labs.arxiv.org":    sim.Ar5iv,
	"ar5iv.org":               sim.Ar5iv,
	"api.semanticscholar.org": sim.S2,
	"export.arxiv.org":        sim.ArxivAPI,
	"oaipmh.arxiv.org":        sim.OAIPMH,
}

// Corpus returns the corpus as the services serve it, freshly loaded: a
// sim.Corpus, with the reference list that S2 pages in small steps capped
// as the manifest says. The embedded corpus is checked by the package's
// tests, so failing to load it is a build defect.
func Corpus() (*sim.Corpus, error) {
	c, err := sim.LoadCorpus(FS())
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	m, err := LoadManifest()
	if err != nil {
		return nil, err
	}
	for _, t := range m.Targets {
		if t.S2PageCap > 0 {
			c.SetS2PageCap("ARXIV:"+t.ArxivID, t.S2PageCap)
		}
	}
	return c, nil
}

// Start starts the services (sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI,
// sim.OAIPMH)
// over the corpus, each on its own port of 127.0.0.1, so each has its own
// base URL (the pipeline's HTTP layer keys rate limits and credentials by
// host).
func Start() (*sim.Servers, error) { return StartAt(nil) }

// StartAt starts the services as Start does, each at the address addrs
// names for it when that address is free (127.0.0.1:PORT), else on a free
// port.
func StartAt(addrs map[string]string) (*sim.Servers, error) {
	c, err := Corpus()
	if err != nil {
		return nil, err
	}
	return sim.Start(c, sim.Options{Services: services, Addrs: addrs})
}

// Services names the services Start starts.
func Services() []string { return slices.Clone(services) }

// ServiceHandler returns the handler of one service over the corpus,
// serving paths as the real service does (arXiv and ar5iv: /html/ID; S2:
// /graph/v1/...; arXiv API: /api/query).
func ServiceHandler(name string) (http.Handler, error) {
	c, err := Corpus()
	if err != nil {
		return nil, err
	}
	if _, ok := hostOf(name); !ok {
		return nil, fmt.Errorf("demo: no service %q (have %s)", name, strings.Join(services, ", "))
	}
	return sim.NewService(name, c, sim.Options{})
}

func hostOf(name string) (string, bool) {
	for h, n := range hosts {
		if n == name {
			return h, true
		}
	}
	return "", false
}

// Handler serves all five services from one handler. A request goes to the
// service named by its Host (arxiv.org, ar5iv.labs.arxiv.org,
// api.semanticscholar.org, export.arxiv.org, oaipmh.arxiv.org) or, for any other host, by
// its first path element: base URLs such as http://127.0.0.1:8080/s2 and
// http://127.0.0.1:8080/arxiv-api work. The pipeline keys its rate limits
// by host, so for it Start's separate listeners are the better fit.
func Handler() http.Handler {
	c, err := Corpus()
	if err != nil {
		panic(err) // the corpus is embedded and tested
	}
	handlers := map[string]http.Handler{}
	for _, name := range services {
		h, err := sim.NewService(name, c, sim.Options{})
		if err != nil {
			panic(err)
		}
		handlers[name] = h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if name, ok := hosts[host]; ok {
			handlers[name].ServeHTTP(w, r)
			return
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if h, ok := handlers[first]; ok {
			http.StripPrefix("/"+first, h).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "Groundwork demo services (synthetic corpus). Prefix a path with the service:\n"+
			"  /arxiv/html/ID  /ar5iv/html/ID  /s2/graph/v1/paper/ID  /arxiv-api/api/query?id_list=ID  /oai-pmh/oai?verb=Identify\n")
	})
}
