package demo

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Names of the services, the keys of Servers.URLs and ServiceHandler's
// argument.
const (
	Arxiv    = "arxiv"     // arxiv.org: /html/ID
	Ar5iv    = "ar5iv"     // ar5iv.labs.arxiv.org: /html/ID
	S2       = "s2"        // api.semanticscholar.org: /graph/v1/...
	ArxivAPI = "arxiv-api" // export.arxiv.org: /api/query
)

// Services lists the service names.
var Services = []string{Arxiv, Ar5iv, S2, ArxivAPI}

// hosts maps the real services' host names to service names, for Handler.
var hosts = map[string]string{
	"arxiv.org":               Arxiv,
	"www.arxiv.org":           Arxiv,
	"ar5iv.labs.arxiv.org":    Ar5iv,
	"ar5iv.org":               Ar5iv,
	"api.semanticscholar.org": S2,
	"export.arxiv.org":        ArxivAPI,
}

// ServiceHandler returns the handler of one service, serving paths as the
// real service does (arXiv and ar5iv: /html/ID; S2: /graph/v1/...; arXiv
// API: /api/query).
func ServiceHandler(name string) (http.Handler, error) {
	s, err := loadStore()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	switch name {
	case Arxiv:
		return arxivHandler{s}, nil
	case Ar5iv:
		return ar5ivHandler{s}, nil
	case S2:
		return s2Handler{s}, nil
	case ArxivAPI:
		return atomHandler{s}, nil
	}
	return nil, fmt.Errorf("demo: no service %q (have %s)", name, strings.Join(Services, ", "))
}

// Handler serves all four services from one handler. A request goes to the
// service named by its Host (arxiv.org, ar5iv.labs.arxiv.org,
// api.semanticscholar.org, export.arxiv.org) or, for any other host, by
// its first path element: base URLs such as http://127.0.0.1:8080/s2 and
// http://127.0.0.1:8080/arxiv-api work. The pipeline keys its rate limits
// by host, so for it Start's separate listeners are the better fit.
func Handler() http.Handler {
	mustStore()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if name, ok := hosts[host]; ok {
			h, _ := ServiceHandler(name)
			h.ServeHTTP(w, r)
			return
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		for _, name := range Services {
			if first == name {
				h, _ := ServiceHandler(name)
				http.StripPrefix("/"+name, h).ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "Groundwork demo services (synthetic corpus). Prefix a path with the service:\n"+
			"  /arxiv/html/ID  /ar5iv/html/ID  /s2/graph/v1/paper/ID  /arxiv-api/api/query?id_list=ID\n")
	})
}

// Servers are the four services listening on 127.0.0.1, each on its own
// port, so each has its own base URL (the pipeline's HTTP layer keys rate
// limits and credentials by host).
type Servers struct {
	// URLs maps service names (Arxiv, Ar5iv, S2, ArxivAPI) to base URLs
	// such as "http://127.0.0.1:41234".
	URLs map[string]string

	servers []*http.Server
}

// URL returns the base URL of a service, "" for an unknown name.
func (s *Servers) URL(name string) string { return s.URLs[name] }

// Start starts the services on random ports of 127.0.0.1.
func Start() (*Servers, error) {
	s := &Servers{URLs: map[string]string{}}
	for _, name := range Services {
		h, err := ServiceHandler(name)
		if err != nil {
			s.Close()
			return nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("demo: listen for %s: %w", name, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.URLs[name] = "http://" + ln.Addr().String()
		go srv.Serve(ln)
	}
	return s, nil
}

// Close stops the services at once, closing open connections.
func (s *Servers) Close() error {
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.servers = nil
	return errors.Join(errs...)
}

// String lists the services and their URLs.
func (s *Servers) String() string {
	names := make([]string, 0, len(s.URLs))
	for n := range s.URLs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", n, s.URLs[n])
	}
	return b.String()
}
