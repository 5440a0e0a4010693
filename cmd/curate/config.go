package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/groundwork/curate/arxivapi"
	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/s2"
	"github.com/groundwork/curate/store"
)

// Environment variables read by curate. Keys are only ever read from the
// environment, never from flags, so they stay out of shell history and ps.
const (
	envStore        = "CURATE_STORE"
	envMailto       = "CURATE_MAILTO"
	envArxivBase    = "CURATE_ARXIV_BASE"
	envAr5ivBase    = "CURATE_AR5IV_BASE"
	envArxivAPIBase = "CURATE_ARXIV_API_BASE"
	envS2Base       = "CURATE_S2_BASE"
	envLLMBase      = "CURATE_LLM_BASE"
	envLogLevel     = "CURATE_LOG"
)

// globalOptions are the flags every command that touches the store or a
// remote service shares.
type globalOptions struct {
	store         string
	mailto        string
	arxivBase     string
	ar5ivBase     string
	arxivInterval time.Duration
	timeout       time.Duration
	maxBody       int64
	retries       int
	logLevel      string
	missingTTL    time.Duration
}

// addGlobalFlags registers the shared flags of commands that use the store
// and the network, with defaults from env.
func addGlobalFlags(fs *flag.FlagSet, env *cmdEnv, g *globalOptions) {
	addStoreFlags(fs, env, g)
	addNetFlags(fs, env, g)
}

// addStoreFlags registers --store and --log, all a command that only reads
// the store needs.
func addStoreFlags(fs *flag.FlagSet, env *cmdEnv, g *globalOptions) {
	get := func(k, def string) string { return cmp.Or(env.getenv(k), def) }
	fs.StringVar(&g.store, "store", get(envStore, "./curate-data"), "store directory (env "+envStore+")")
	fs.StringVar(&g.logLevel, "log", get(envLogLevel, "info"), "log level: debug, info, warn, error (env "+envLogLevel+")")
}

// addNetFlags registers the flags of the HTTP layer and the arXiv sites.
func addNetFlags(fs *flag.FlagSet, env *cmdEnv, g *globalOptions) {
	get := func(k, def string) string { return cmp.Or(env.getenv(k), def) }
	fs.StringVar(&g.mailto, "mailto", get(envMailto, ""), "contact address sent in the User-Agent, as arXiv and Semantic Scholar ask (env "+envMailto+")")
	fs.StringVar(&g.arxivBase, "arxiv-base", get(envArxivBase, "https://arxiv.org"), "arXiv base URL (env "+envArxivBase+")")
	fs.StringVar(&g.ar5ivBase, "ar5iv-base", get(envAr5ivBase, "https://ar5iv.labs.arxiv.org"), "ar5iv base URL (env "+envAr5ivBase+")")
	fs.DurationVar(&g.arxivInterval, "arxiv-interval", 3*time.Second, "minimum time between requests to arXiv and to ar5iv (arXiv asks for 3s; 0: none)")
	fs.DurationVar(&g.timeout, "timeout", 60*time.Second, "timeout of one HTTP attempt (more than 0)")
	fs.Int64Var(&g.maxBody, "max-body", 64<<20, "largest response body accepted, in bytes (more than 0)")
	fs.IntVar(&g.retries, "retries", 5, "retries of a failed request (429, 5xx, resets); 0: none")
	fs.DurationVar(&g.missingTTL, "missing-ttl", 7*24*time.Hour, "a paper found without HTML on arXiv and ar5iv is not asked about again for this long (0 or negative: always ask)")
}

// validate checks the shared flags; every command calls it before it
// opens the store or makes a request.
func (g *globalOptions) validate() error {
	if _, err := g.logger(io.Discard); err != nil {
		return err
	}
	if strings.TrimSpace(g.store) == "" {
		return fmt.Errorf("%w: --store is empty: give a directory", errUsage)
	}
	switch {
	case g.arxivInterval < 0:
		return fmt.Errorf("%w: --arxiv-interval %s: want 0 or more", errUsage, g.arxivInterval)
	case g.timeout <= 0:
		return fmt.Errorf("%w: --timeout %s: want more than 0", errUsage, g.timeout)
	case g.maxBody <= 0:
		return fmt.Errorf("%w: --max-body %d: want more than 0 bytes", errUsage, g.maxBody)
	case g.retries < 0:
		return fmt.Errorf("%w: --retries %d: want 0 (no retries) or more", errUsage, g.retries)
	}
	for _, b := range []struct{ flag, url string }{{"--arxiv-base", g.arxivBase}, {"--ar5iv-base", g.ar5ivBase}} {
		if err := checkBaseURL(b.flag, b.url); err != nil {
			return err
		}
	}
	return nil
}

// checkBaseURL refuses a base URL that is not an absolute http(s) URL.
func checkBaseURL(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %s %q: want an http or https URL", errUsage, flag, raw)
	}
	return nil
}

// positive refuses a worker or pool count below 1.
func positive(flag string, n int) error {
	if n < 1 {
		return fmt.Errorf("%w: %s %d: want 1 or more", errUsage, flag, n)
	}
	return nil
}

// logger returns the slog logger for stderr at the chosen level.
func (g *globalOptions) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: --log %q: want debug, info, warn or error", errUsage, g.logLevel)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// openStore opens the store directory, creating it when it does not exist.
func (g *globalOptions) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, g.store)
	if errors.Is(err, store.ErrForeign) {
		return nil, &exitError{code: 2, err: err}
	}
	return st, err
}

// openExistingStore opens the store of a command that only reads it: a
// path without a store is an error (exit 2) and nothing is created there.
func (g *globalOptions) openExistingStore(ctx context.Context) (*store.Store, error) {
	st, err := store.OpenExisting(ctx, g.store)
	if errors.Is(err, store.ErrNoStore) || errors.Is(err, store.ErrForeign) {
		return nil, &exitError{code: 2, err: err}
	}
	return st, err
}

// httpClient builds the HTTP layer with one service per remote site.
func (g *globalOptions) httpClient(log *slog.Logger, extra ...httpx.ServiceConfig) (*httpx.Client, error) {
	services := []httpx.ServiceConfig{
		{Name: "arxiv", BaseURL: g.arxivBase, Interval: g.arxivInterval, MaxInFlight: 1},
		{Name: "ar5iv", BaseURL: g.ar5ivBase, Interval: g.arxivInterval, MaxInFlight: 1},
	}
	services = append(services, extra...)
	return httpx.New(httpx.Config{
		UserAgent: httpx.UserAgent(version, g.mailto),
		Timeout:   g.timeout,
		MaxBody:   g.maxBody,
		RetryMax:  cmp.Or(g.retries, -1), // httpx reads 0 as its default; the flag's 0 means none
		Logger:    log,
	}, services...)
}

// readTargets reads arXiv IDs from a targets file: one per line, blank
// lines and '#' comments ignored; "-" reads standard input.
func readTargets(name string, stdin io.Reader) ([]string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read targets: %w", err)
		}
		defer f.Close()
		r = f
	}
	var ids []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		ids = append(ids, strings.Fields(line)...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read targets %s: %w", name, err)
	}
	return ids, nil
}

// Environment variables holding secrets.
const (
	envS2Key = "S2_API_KEY"
)

// s2Options are the flags of commands that talk to Semantic Scholar and
// the arXiv API.
type s2Options struct {
	s2Base       string
	s2Interval   time.Duration
	s2PageLimit  int
	arxivAPIBase string
}

func addS2Flags(fs *flag.FlagSet, env *cmdEnv, o *s2Options) {
	get := func(k, def string) string { return cmp.Or(env.getenv(k), def) }
	fs.StringVar(&o.s2Base, "s2-base", get(envS2Base, s2.DefaultBaseURL), "Semantic Scholar API base URL (env "+envS2Base+"); the key is read from "+envS2Key)
	fs.DurationVar(&o.s2Interval, "s2-interval", 0, "minimum time between Semantic Scholar requests (0: 1s with a key, 5s without)")
	fs.IntVar(&o.s2PageLimit, "s2-page-limit", s2.DefaultPageLimit, "references asked per page (at most 1000)")
	fs.StringVar(&o.arxivAPIBase, "arxiv-api-base", get(envArxivAPIBase, arxivapi.DefaultBaseURL), "arXiv API base URL for v1 dates and categories (env "+envArxivAPIBase+")")
}

func (o *s2Options) validate() error {
	switch {
	case o.s2Interval < 0:
		return fmt.Errorf("%w: --s2-interval %s: want 0 (the default for the key) or more", errUsage, o.s2Interval)
	case o.s2PageLimit < 1 || o.s2PageLimit > s2.MaxPageLimit:
		return fmt.Errorf("%w: --s2-page-limit %d: want 1 to %d", errUsage, o.s2PageLimit, s2.MaxPageLimit)
	}
	if err := checkBaseURL("--s2-base", o.s2Base); err != nil {
		return err
	}
	return checkBaseURL("--arxiv-api-base", o.arxivAPIBase)
}

// serviceConfigs returns the httpx services for Semantic Scholar and the
// arXiv API; the arXiv API shares arXiv's politeness interval.
func (o *s2Options) serviceConfigs(env *cmdEnv, g *globalOptions) []httpx.ServiceConfig {
	return []httpx.ServiceConfig{
		s2.ServiceConfig(o.s2Base, env.getenv(envS2Key), o.s2Interval),
		arxivapi.ServiceConfig(o.arxivAPIBase, g.arxivInterval),
	}
}

// addTargetsFlag registers --targets.
func addTargetsFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "targets", "", "file of arXiv IDs, one per line, '#' comments ('-' for stdin)")
}

// targetIDs returns the IDs given as arguments and in the targets file, or
// a usage error when there are none.
func targetIDs(env *cmdEnv, fs *flag.FlagSet, targetsFile string, args []string) ([]string, error) {
	ids := append([]string(nil), args...)
	if targetsFile != "" {
		more, err := readTargets(targetsFile, env.stdinReader())
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	if len(ids) == 0 {
		fs.Usage()
		return nil, fmt.Errorf("%w: no arXiv IDs given (arguments or --targets FILE)", errUsage)
	}
	return ids, nil
}
