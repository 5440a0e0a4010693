package cli

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/redact"
	"github.com/groundwork/curate/internal/targetlist"
	"github.com/groundwork/curate/summarize"
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
	envS2Key        = "S2_API_KEY"
	envLLMBase      = "CURATE_LLM_BASE"
	envLLMModel     = "CURATE_LLM_MODEL"
	envLLMPrices    = "CURATE_PRICES"
	envLLMMode      = "CURATE_LLM_MODE"
	envLogLevel     = "CURATE_LOG"
)

// Each flag group below registers its flags (AddFlags), checks them before
// anything is opened, requested or written (validate: an invalid value is
// named with what is allowed, and no zero or negative value is silently
// replaced), and becomes its part of app.Config.

// storeFlags: --store and --log, all a command that only reads the store
// needs.
type storeFlags struct {
	store    string
	logLevel string
}

func (f *storeFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	fs.StringVar(&f.store, "store", cmp.Or(env.Getenv(envStore), "./curate-data"), "store directory (env "+envStore+")")
	fs.StringVar(&f.logLevel, "log", cmp.Or(env.Getenv(envLogLevel), "info"), "log level: debug, info, warn, error (env "+envLogLevel+")")
}

func (f *storeFlags) validate() error {
	if _, err := f.logger(io.Discard); err != nil {
		return err
	}
	if strings.TrimSpace(f.store) == "" {
		return fmt.Errorf("%w: --store is empty: give a directory", errUsage)
	}
	return nil
}

// logger returns the slog logger for w (stderr) at the chosen level.
func (f *storeFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: --log %q: want debug, info, warn or error", errUsage, f.logLevel)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// netFlags: the HTTP layer and the arXiv sites.
type netFlags struct {
	mailto        string
	arxivBase     string
	ar5ivBase     string
	arxivInterval time.Duration
	timeout       time.Duration
	maxBody       int64
	retries       int
	missingTTL    time.Duration
	// ignoreCrawlDelay lets --arxiv-interval stand under a longer
	// robots.txt Crawl-delay.
	ignoreCrawlDelay bool
	htmlArchives     pathsFlag
}

// pathsFlag is a repeatable flag of paths, each taken whole (a path may
// hold a comma).
type pathsFlag []string

func (l *pathsFlag) String() string { return strings.Join(*l, " ") }

func (l *pathsFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func (f *netFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	get := func(k, def string) string { return cmp.Or(env.Getenv(k), def) }
	fs.StringVar(&f.mailto, "mailto", get(envMailto, ""), "contact address sent in the User-Agent, as arXiv and Semantic Scholar ask (env "+envMailto+")")
	fs.StringVar(&f.arxivBase, "arxiv-base", get(envArxivBase, "https://arxiv.org"), "arXiv base URL (env "+envArxivBase+")")
	fs.StringVar(&f.ar5ivBase, "ar5iv-base", get(envAr5ivBase, "https://ar5iv.labs.arxiv.org"), "ar5iv base URL (env "+envAr5ivBase+")")
	fs.DurationVar(&f.arxivInterval, "arxiv-interval", 3*time.Second, "minimum time between requests to arXiv and to ar5iv (arXiv asks for 3s; 0: none)")
	fs.DurationVar(&f.timeout, "timeout", 60*time.Second, "time one HTTP request may wait on the server, over all its attempts: a retry has what the earlier attempts left, and a timed-out attempt is not retried (more than 0)")
	fs.Int64Var(&f.maxBody, "max-body", 64<<20, "largest response body accepted, in bytes (more than 0)")
	fs.IntVar(&f.retries, "retries", 5, "retries of a failed request (429, 5xx, resets); 0: none")
	fs.DurationVar(&f.missingTTL, "missing-ttl", 7*24*time.Hour, "a paper found without HTML on arXiv and ar5iv is not asked about again for this long (0 or negative: always ask)")
	fs.BoolVar(&f.ignoreCrawlDelay, "ignore-crawl-delay", false, "keep --arxiv-interval even when a host's robots.txt asks for a longer Crawl-delay (arxiv.org asks for 15s); warns once per host")
	fs.Var(&f.htmlArchives, "html-archive", "local HTML pages asked before any request: a directory of saved pages (ID.html, old-style IDs with / as _) or ar5iv bulk zip files (repeatable)")
}

func (f *netFlags) validate() error {
	switch {
	case f.arxivInterval < 0:
		return fmt.Errorf("%w: --arxiv-interval %s: want 0 or more", errUsage, f.arxivInterval)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --timeout %s: want more than 0", errUsage, f.timeout)
	case f.maxBody <= 0:
		return fmt.Errorf("%w: --max-body %d: want more than 0 bytes", errUsage, f.maxBody)
	case f.retries < 0:
		return fmt.Errorf("%w: --retries %d: want 0 (no retries) or more", errUsage, f.retries)
	}
	for _, b := range []struct{ flag, url string }{{"--arxiv-base", f.arxivBase}, {"--ar5iv-base", f.ar5ivBase}} {
		if err := checkBaseURL(b.flag, b.url); err != nil {
			return err
		}
	}
	for _, p := range f.htmlArchives {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			return fmt.Errorf("%w: --html-archive %s: %v", errUsage, p, err)
		case !fi.IsDir() && !strings.EqualFold(filepath.Ext(p), ".zip"):
			return fmt.Errorf("%w: --html-archive %s: want a directory of saved pages or a .zip file", errUsage, p)
		}
	}
	return nil
}

func (f *netFlags) config(env *Env) app.Net {
	return app.Net{Mailto: f.mailto, ArxivBase: f.arxivBase, Ar5ivBase: f.ar5ivBase, ArxivInterval: f.arxivInterval,
		Timeout: f.timeout, MaxBody: f.maxBody, Retries: f.retries, MissingTTL: f.missingTTL,
		IgnoreCrawlDelay: f.ignoreCrawlDelay, HTMLArchives: f.htmlArchives, Secrets: secrets(env.Getenv), Dial: env.Dial}
}

// keyEnv are the variables that hold API keys, and proxyEnv those that may
// carry a proxy's credentials (http://user:password@host). Every such
// value is redacted from what the services send back, whichever service
// it is for: a shared proxy or gateway may echo any of them.
var (
	keyEnv   = []string{envS2Key, "LLM_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
	proxyEnv = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}
)

// secrets returns the credentials in the environment.
func secrets(getenv func(string) string) []string {
	var out []string
	for _, k := range keyEnv {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			out = append(out, v)
		}
	}
	for _, k := range proxyEnv {
		if u, err := url.Parse(getenv(k)); err == nil {
			out = append(out, redact.UserInfo(u)...)
		}
	}
	return out
}

// s2Flags: Semantic Scholar and the arXiv API.
type s2Flags struct {
	base         string
	interval     time.Duration
	pageLimit    int
	arxivAPIBase string
}

func (f *s2Flags) AddFlags(fs *flag.FlagSet, env *Env) {
	get := func(k, def string) string { return cmp.Or(env.Getenv(k), def) }
	fs.StringVar(&f.base, "s2-base", get(envS2Base, s2.DefaultBaseURL), "Semantic Scholar API base URL (env "+envS2Base+"); the key is read from "+envS2Key)
	fs.DurationVar(&f.interval, "s2-interval", 0, "minimum time between Semantic Scholar requests (0: 1s with a key, 5s without)")
	fs.IntVar(&f.pageLimit, "s2-page-limit", s2.DefaultPageLimit, "references asked per page (1 to 1000)")
	fs.StringVar(&f.arxivAPIBase, "arxiv-api-base", get(envArxivAPIBase, arxivapi.DefaultBaseURL), "arXiv API base URL for v1 dates and categories (env "+envArxivAPIBase+")")
}

func (f *s2Flags) validate() error {
	switch {
	case f.interval < 0:
		return fmt.Errorf("%w: --s2-interval %s: want 0 (the default for the key) or more", errUsage, f.interval)
	case f.pageLimit < 1 || f.pageLimit > s2.MaxPageLimit:
		return fmt.Errorf("%w: --s2-page-limit %d: want 1 to %d", errUsage, f.pageLimit, s2.MaxPageLimit)
	}
	if err := checkBaseURL("--s2-base", f.base); err != nil {
		return err
	}
	return checkBaseURL("--arxiv-api-base", f.arxivAPIBase)
}

func (f *s2Flags) config(env *Env) app.S2 {
	return app.S2{Base: f.base, Key: env.Getenv(envS2Key), Interval: f.interval, PageLimit: f.pageLimit, ArxivAPIBase: f.arxivAPIBase}
}

// llmFlags: the model behind the LLM stages.
type llmFlags struct {
	backend        string // "heuristic" or "endpoint"; "" picks endpoint when a base URL is set
	base           string
	provider       string // "" infers it from the base URL
	dialect        string // "" infers it from the provider and base URL
	model          string
	concurrency    int
	rpm            int
	tpm            int
	timeout        time.Duration
	attemptTimeout time.Duration
	structured     bool
	promptCache    bool
	cacheTTL       string
	prices         string
	modelsFile     string // --models: rows over the shipped model table
	fallback       string // --llm-fallback-model
	mode           string
	wait           time.Duration
	pollInterval   time.Duration
	batchTokens    int64
}

// providerBases are the default API roots of the providers, for
// --llm-provider without --llm-base.
func providerBase(provider string) string {
	switch provider {
	case llm.ProviderOpenAI:
		return "https://api.openai.com/v1"
	case llm.ProviderAnthropic:
		return "https://api.anthropic.com/v1"
	}
	return ""
}

func (f *llmFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	get := func(k, def string) string { return cmp.Or(env.Getenv(k), def) }
	fs.StringVar(&f.backend, "llm", "", "LLM backend: heuristic (offline, deterministic) or endpoint (an API at --llm-base); default endpoint when --llm-base is set, else heuristic")
	fs.StringVar(&f.base, "llm-base", get(envLLMBase, ""), "LLM API root with its version path, e.g. https://api.openai.com/v1, https://api.anthropic.com/v1 or http://127.0.0.1:8000/v1 (env "+envLLMBase+"); the key is read from ANTHROPIC_API_KEY for Anthropic, else LLM_API_KEY or OPENAI_API_KEY")
	fs.StringVar(&f.provider, "llm-provider", "", "LLM API: openai, anthropic (native Messages API) or compatible (vLLM, Ollama, llama.cpp, LiteLLM); default inferred from --llm-base")
	fs.StringVar(&f.dialect, "llm-schema-dialect", "", "structured output the endpoint takes: "+dialectList()+"; default from the provider, and ollama on port 11434")
	fs.StringVar(&f.model, "llm-model", get(envLLMModel, ""), "model name (env "+envLLMModel+")")
	fs.IntVar(&f.concurrency, "llm-concurrency", 4, "LLM requests in flight (1 or more)")
	fs.IntVar(&f.rpm, "llm-rpm", 0, "LLM requests per minute (0: no limit)")
	fs.IntVar(&f.tpm, "llm-tpm", 0, "LLM tokens per minute (0: no limit)")
	fs.DurationVar(&f.timeout, "llm-timeout", 10*time.Minute, "time one LLM call may take from its first attempt, retries and follow-ups included (more than 0)")
	fs.DurationVar(&f.attemptTimeout, "llm-attempt-timeout", llm.DefaultAttemptTimeout, "time one HTTP attempt of an LLM call may take before it is retried (a hung or trickling answer)")
	fs.BoolVar(&f.structured, "llm-json-schema", true, "send the answer's JSON schema as the endpoint's structured output (a schema the endpoint rejects is sent as an instruction instead)")
	fs.BoolVar(&f.promptCache, "llm-prompt-cache", true, "mark the static prompt blocks for the provider's prompt cache (Anthropic cache_control, OpenAI prompt_cache_key)")
	fs.StringVar(&f.cacheTTL, "llm-prompt-cache-ttl", "", "Anthropic prompt cache lifetime: 5m or 1h (default: 5m in sync mode, 1h on batch lines, whose requests may run an hour apart); writes are priced by lifetime, and a target's paper is marked for its gold card only at 5m, where the write pays for one read")
	fs.StringVar(&f.mode, "llm-mode", get(envLLMMode, llm.ModeSync), "sync (one request per answer) or batch (the provider's batch API at half price, openai and anthropic only: answers come within 24 h; targets waiting on them are listed and the run exits 75; run again to collect) (env "+envLLMMode+")")
	fs.DurationVar(&f.wait, "llm-wait", 0, "in batch mode, how long the run waits in all for its batches, polling, before it exits with targets still waiting (0: submit and exit; the next run collects)")
	fs.DurationVar(&f.pollInterval, "llm-poll-interval", 30*time.Second, "in batch mode, the least time between two looks at a pending batch (more than 0)")
	fs.Int64Var(&f.batchTokens, "llm-batch-max-tokens", 0, "in batch mode, the provider's queue limit: the most input tokens the model's pending batches may hold (OpenAI's batch queue limit for your tier); what would pass it waits for earlier batches (0: no limit)")
	fs.StringVar(&f.prices, "price", get(envLLMPrices, ""), "prices that override the model table's, dollars per million tokens: \"MODEL=input/output[/cached_input[/cache_write[/cache_write_1h]]],...\" (cached input defaults to the input price, five-minute cache writes to 1.25× it, one-hour writes to 2×; batch calls cost half) or a JSON file (env "+envLLMPrices+"); the table (curate models) prices the models it knows")
	fs.StringVar(&f.modelsFile, "models", "", "a model table file (JSON, the shape `curate models --json` prints) whose rows override or add to the shipped table: what a model takes, its cache minimum, window, largest output and prices")
	fs.StringVar(&f.fallback, "llm-fallback-model", "", "a model asked, on the same endpoint, for an answer the model refused (a refusal stop reason); without it a refusal fails the target, named")
}

func dialectList() string {
	var names []string
	for _, d := range llm.Dialects() {
		names = append(names, string(d))
	}
	return strings.Join(names, ", ")
}

func (f *llmFlags) validate() error {
	heuristic, err := f.heuristic()
	if err != nil {
		return err
	}
	switch {
	case f.concurrency < 1:
		return fmt.Errorf("%w: --llm-concurrency %d: want 1 or more", errUsage, f.concurrency)
	case f.rpm < 0:
		return fmt.Errorf("%w: --llm-rpm %d: want 0 (no limit) or more", errUsage, f.rpm)
	case f.tpm < 0:
		return fmt.Errorf("%w: --llm-tpm %d: want 0 (no limit) or more", errUsage, f.tpm)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --llm-timeout %s: want more than 0", errUsage, f.timeout)
	case f.attemptTimeout <= 0:
		return fmt.Errorf("%w: --llm-attempt-timeout %s: want more than 0", errUsage, f.attemptTimeout)
	case !slices.Contains(llm.Modes(), f.mode):
		return fmt.Errorf("%w: --llm-mode %q: want %s", errUsage, f.mode, strings.Join(llm.Modes(), " or "))
	case f.wait < 0:
		return fmt.Errorf("%w: --llm-wait %s: want 0 (submit and exit) or more", errUsage, f.wait)
	case f.wait > 0 && f.mode != llm.ModeBatch:
		return fmt.Errorf("%w: --llm-wait %s: only --llm-mode batch waits for answers", errUsage, f.wait)
	case f.pollInterval <= 0:
		return fmt.Errorf("%w: --llm-poll-interval %s: want more than 0", errUsage, f.pollInterval)
	case f.batchTokens < 0:
		return fmt.Errorf("%w: --llm-batch-max-tokens %d: want 0 (no limit) or more", errUsage, f.batchTokens)
	case f.batchTokens > 0 && f.mode != llm.ModeBatch:
		return fmt.Errorf("%w: --llm-batch-max-tokens %d: only --llm-mode batch submits batches", errUsage, f.batchTokens)
	}
	if f.mode == llm.ModeBatch {
		if heuristic {
			return fmt.Errorf("%w: --llm-mode batch needs an LLM endpoint (--llm-base and --llm-model); the heuristic backend answers at once", errUsage)
		}
		if p := cmp.Or(f.provider, llm.InferProvider(f.base)); !llm.HasBatchAPI(p) {
			return fmt.Errorf("%w: --llm-mode batch: provider %s has no batch API (openai or anthropic; give --llm-provider for a proxy of either)", errUsage, p)
		}
	}
	if !heuristic {
		if err := checkBaseURL("--llm-base", f.base); err != nil {
			return err
		}
	}
	if _, err := f.table(); err != nil {
		return err
	}
	_, err = f.loadPrices()
	return err
}

// table returns the model table: the shipped one with --models' rows.
func (f *llmFlags) table() (*llm.Models, error) {
	m := llm.DefaultModels()
	if f.modelsFile == "" {
		return m, nil
	}
	rows, err := llm.LoadModels(f.modelsFile)
	if err != nil {
		return nil, fmt.Errorf("%w: --models %s: %v", errUsage, f.modelsFile, err)
	}
	return m.With(rows...), nil
}

// allPrices is --price over the model table's prices of the model and
// the fallback model.
func (f *llmFlags) allPrices() (llm.Prices, error) {
	p, err := f.loadPrices()
	if err != nil {
		return nil, err
	}
	t, err := f.table()
	if err != nil {
		return nil, err
	}
	return t.PricesFor(cmp.Or(f.provider, llm.InferProvider(f.base)), p, f.model, f.fallback), nil
}

// heuristic reports whether the heuristic backend is chosen.
func (f *llmFlags) heuristic() (bool, error) {
	switch f.provider {
	case "", llm.ProviderCompatible:
	case llm.ProviderOpenAI, llm.ProviderAnthropic:
		f.base = cmp.Or(f.base, providerBase(f.provider))
	default:
		return false, fmt.Errorf("%w: --llm-provider %q: want %s", errUsage, f.provider, strings.Join(llm.Providers(), ", "))
	}
	if f.dialect != "" && !slices.Contains(llm.Dialects(), llm.Dialect(f.dialect)) {
		return false, fmt.Errorf("%w: --llm-schema-dialect %q: want %s", errUsage, f.dialect, dialectList())
	}
	if f.cacheTTL != "" && f.cacheTTL != "5m" && f.cacheTTL != "1h" {
		return false, fmt.Errorf("%w: --llm-prompt-cache-ttl %q: want 5m or 1h", errUsage, f.cacheTTL)
	}
	switch f.backend {
	case llm.HeuristicModel:
		return true, nil
	case "endpoint", "openai":
		if f.base == "" {
			return false, fmt.Errorf("%w: --llm endpoint needs --llm-base (or %s)", errUsage, envLLMBase)
		}
		if f.model == "" {
			return false, fmt.Errorf("%w: --llm endpoint needs --llm-model (or %s)", errUsage, envLLMModel)
		}
		return false, nil
	case "":
		if f.base == "" {
			return true, nil
		}
		if f.model == "" {
			return false, fmt.Errorf("%w: --llm-base is set but no --llm-model (or %s)", errUsage, envLLMModel)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: --llm %q: want heuristic or endpoint", errUsage, f.backend)
}

// loadPrices reads --price: a table or a JSON file.
func (f *llmFlags) loadPrices() (llm.Prices, error) {
	if f.prices == "" {
		return nil, nil
	}
	if _, err := os.Stat(f.prices); err == nil {
		p, err := llm.LoadPrices(f.prices)
		if err != nil {
			return nil, fmt.Errorf("%w: --price %s: %v", errUsage, f.prices, err)
		}
		return p, nil
	}
	p, err := llm.ParsePrices(f.prices)
	if err != nil {
		return nil, fmt.Errorf("%w: --price: %v", errUsage, err)
	}
	return p, nil
}

// client returns the endpoint's configuration (app.Open adds the store,
// meter and logger).
func (f *llmFlags) client(env *Env) llm.Config {
	provider := cmp.Or(f.provider, llm.InferProvider(f.base))
	table, _ := f.table()
	prices, _ := f.allPrices()
	return llm.Config{
		Models: table, Prices: prices, FallbackModel: f.fallback,
		BaseURL: f.base, Provider: provider, Dialect: llm.Dialect(f.dialect), Model: f.model,
		APIKey:           llm.APIKeyForProvider(provider, env.Getenv),
		StructuredOutput: f.structured, NoPromptCache: !f.promptCache, PromptCacheTTL: f.cacheTTL,
		Concurrency: f.concurrency, RequestsPerMinute: f.rpm, TokensPerMinute: f.tpm,
		Timeout: f.timeout, AttemptTimeout: f.attemptTimeout, Drain: env.Drain,
	}
}

// config is the LLM part of app.Config; validate has run.
func (f *llmFlags) config(env *Env) app.LLM {
	heuristic, _ := f.heuristic()
	prices, _ := f.allPrices()
	return app.LLM{Heuristic: heuristic, Client: f.client(env), Prices: prices, Mode: f.mode, Wait: f.wait, PollInterval: f.pollInterval, BatchMaxTokens: f.batchTokens}
}

// pdfFlags: open-access PDFs of sources without an arXiv page, converted
// by a GROBID service (the pdfs stage, on with --grobid only).
type pdfFlags struct {
	grobid   string
	capacity int
	timeout  time.Duration
	hosts    string
	maxSize  int64
	interval time.Duration
}

// defaultHosts stands for oapdf's built-in allow-list in --pdf-hosts.
const defaultHosts = "default"

// defaultPDFFlags are the PDF flags' defaults, for commands that set the
// flags themselves (the demo).
func defaultPDFFlags() pdfFlags {
	return pdfFlags{capacity: grobid.DefaultCapacity, timeout: grobid.DefaultTimeout, hosts: defaultHosts,
		maxSize: oapdf.DefaultMaxSize, interval: oapdf.DefaultInterval}
}

func (f *pdfFlags) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.StringVar(&f.grobid, "grobid", "", "GROBID service (e.g. http://localhost:8070) that converts the open-access PDFs of sources without an arXiv page into full text; without it no PDF is fetched")
	fs.IntVar(&f.capacity, "grobid-capacity", grobid.DefaultCapacity, "PDFs sent to GROBID at once: the server's concurrency setting (grobid.yaml; 10 by default)")
	fs.DurationVar(&f.timeout, "grobid-timeout", grobid.DefaultTimeout, "time one GROBID conversion may take, its retries included (more than 0; long PDFs take minutes)")
	fs.StringVar(&f.hosts, "pdf-hosts", defaultHosts, "comma-separated hosts (host or host:port) PDFs may be downloaded from; default stands for the built-in list of open-access hosts (ACL Anthology, OpenReview, PMC, publishers' open-access sites), e.g. default,repo.example.org")
	fs.Int64Var(&f.maxSize, "pdf-max-size", oapdf.DefaultMaxSize, "largest PDF downloaded, in bytes (more than 0)")
	fs.DurationVar(&f.interval, "pdf-interval", oapdf.DefaultInterval, "minimum time between requests to one PDF host (more than 0)")
}

// validate checks every PDF flag, with --grobid or without: a mistake is
// named now rather than on the day --grobid is added.
func (f *pdfFlags) validate() error {
	if f.grobid != "" {
		if err := checkBaseURL("--grobid", f.grobid); err != nil {
			return err
		}
	}
	switch {
	case f.capacity < 1:
		return fmt.Errorf("%w: --grobid-capacity %d: want 1 or more", errUsage, f.capacity)
	case f.timeout <= 0:
		return fmt.Errorf("%w: --grobid-timeout %s: want more than 0", errUsage, f.timeout)
	case f.maxSize <= 0 || f.maxSize > grobid.MaxPDF:
		return fmt.Errorf("%w: --pdf-max-size %d: want 1 to %d bytes", errUsage, f.maxSize, grobid.MaxPDF)
	case f.interval <= 0:
		return fmt.Errorf("%w: --pdf-interval %s: want more than 0", errUsage, f.interval)
	}
	if _, err := oapdf.New(oapdf.Config{UserAgent: "curate", Hosts: f.hostList()}); err != nil {
		return fmt.Errorf("%w: --pdf-hosts: %v", errUsage, err)
	}
	return nil
}

// hostList expands --pdf-hosts: nil for the default list alone.
func (f *pdfFlags) hostList() []string {
	list := splitList(f.hosts)
	if len(list) == 1 && list[0] == defaultHosts {
		return nil
	}
	var out []string
	for _, h := range list {
		if h == defaultHosts {
			out = append(out, oapdf.DefaultHosts()...)
			continue
		}
		out = append(out, h)
	}
	if out == nil {
		out = []string{} // "" is an empty list, which oapdf refuses
	}
	return out
}

func (f *pdfFlags) config(env *Env) app.PDF {
	if f.grobid == "" {
		return app.PDF{}
	}
	return app.PDF{GrobidBase: f.grobid, Capacity: f.capacity, Timeout: f.timeout, Hosts: f.hostList(),
		MaxSize: f.maxSize, Interval: f.interval, Resolve: env.PDFResolve, AllowAddr: env.PDFAllowAddr}
}

// stageFlags are the flags of every command that runs per-target stages
// (run, refresh, fetch, citegraph, classify, summarize, topics).
type stageFlags struct {
	store          storeFlags
	net            netFlags
	s2             s2Flags
	llm            llmFlags
	pdf            pdfFlags
	targets        string
	from           targetsFrom
	force          bool
	refresh        bool
	budget         int
	summaryBudget  int
	budgetTokens   int64
	budgetUSD      float64
	includeSuspect bool
	plausible      classify.Plausibility
	minGrounding   float64
	postKnowledge  int
	know           knowledgeFlags
}

func (f *stageFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	f.store.AddFlags(fs, env)
	f.net.AddFlags(fs, env)
	f.s2.AddFlags(fs, env)
	f.llm.AddFlags(fs, env)
	f.pdf.AddFlags(fs, env)
	fs.StringVar(&f.targets, "targets", "", "file of arXiv IDs, one per line, '#' comments ('-' for stdin)")
	f.from.AddFlags(fs, env)
	fs.BoolVar(&f.force, "force", false, "classify and summarize again even when the store holds current results")
	fs.BoolVar(&f.refresh, "refresh", false, "ask Semantic Scholar and arXiv again instead of reusing stored responses")
	fs.Int64Var(&f.budgetTokens, "budget-tokens", 0, "stop calling the LLM once this run has spent this many tokens (0: no cap); the rest is left for the next run")
	fs.Float64Var(&f.budgetUSD, "budget-usd", 0, "stop calling the LLM once this run has spent this many dollars by the --price table (0: no cap)")
	fs.IntVar(&f.budget, "classify-budget", 0, "token budget of the paper's text in the classify prompt (0: the default, the same as the card's, so that a target's gold card reads the paper block from the prompt cache)")
	fs.IntVar(&f.summaryBudget, "summarize-budget", 0, "token budget of a paper's text for its card (0: the default, the same as classify's)")
	addSuspectFlag(fs, &f.includeSuspect)
	p := &f.plausible
	fs.IntVar(&p.MaxSources, "suspect-max-sources", classify.DefaultMaxSources, "a classification with more sources than this and than --suspect-max-share of the references is suspect (negative: no bound)")
	fs.Float64Var(&p.MaxShare, "suspect-max-share", classify.DefaultMaxShare, "the share of references above which (and above --suspect-max-sources) sources are suspect")
	fs.IntVar(&p.NearlyAll, "suspect-nearly-all", classify.DefaultNearlyAll, "this many sources or more making up 80% of the references is suspect (negative: off)")
	fs.IntVar(&p.UniformLabels, "suspect-uniform-labels", classify.DefaultUniformLabels, "this many sources or more all with the same labels is suspect (negative: off)")
	fs.IntVar(&p.RepeatedRationale, "suspect-repeated-rationale", classify.DefaultRepeatedRationale, "one rationale given for this many sources, and half of them, is suspect (negative: off)")
	fs.Float64Var(&f.minGrounding, "gold-min-grounding", summarize.DefaultMinGrounding, "the least share of a gold card's claim words that must occur in the paper's abstract and introduction; a card below it is suspect (negative: off)")
	fs.IntVar(&p.Unsupported, "suspect-unsupported", classify.DefaultUnsupported, "this many sources or more without a quote from a sentence citing them, and half of the sources, is suspect (negative: off)")
	fs.IntVar(&f.postKnowledge, "post-knowledge", 0, "keep the N most influential papers citing each target after its knowledge cutoff (one Semantic Scholar citations request per target; 0: off)")
	f.know.AddFlags(fs, env)
}

// addSuspectFlag registers --include-suspect.
func addSuspectFlag(fs *flag.FlagSet, p *bool) {
	fs.BoolVar(p, "include-suspect", false, "keep suspect targets: a classification that looks implausible (too many sources, one label or rationale for all, sources no sentence cites: an instruction in the paper obeyed?), a paper whose text addresses a model (classified with that text taken out of the prompt), a gold card not grounded in the paper's abstract and introduction; by default they are held back and listed")
}

func (f *stageFlags) validate() error {
	for _, v := range []func() error{f.store.validate, f.net.validate, f.s2.validate, f.llm.validate, f.pdf.validate, f.know.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	switch {
	case f.budgetTokens < 0:
		return fmt.Errorf("%w: --budget-tokens %d: want 0 (no cap) or more", errUsage, f.budgetTokens)
	case f.budgetUSD < 0 || math.IsNaN(f.budgetUSD) || math.IsInf(f.budgetUSD, 0):
		return fmt.Errorf("%w: --budget-usd %v: want 0 (no cap) or a positive number of dollars", errUsage, f.budgetUSD)
	case f.budgetUSD > 0 && f.llm.prices == "":
		return fmt.Errorf("%w: --budget-usd needs a --price table to count dollars", errUsage)
	case f.budget < 0:
		return fmt.Errorf("%w: --classify-budget %d: want 0 (the stage's default) or more tokens", errUsage, f.budget)
	case f.summaryBudget < 0:
		return fmt.Errorf("%w: --summarize-budget %d: want 0 (the stage's default) or more tokens", errUsage, f.summaryBudget)
	case f.postKnowledge < 0:
		return fmt.Errorf("%w: --post-knowledge %d: want 0 (off) or the number of citing papers to keep per target", errUsage, f.postKnowledge)
	case f.plausible.MaxShare <= 0 || f.plausible.MaxShare > 1 || math.IsNaN(f.plausible.MaxShare):
		return fmt.Errorf("%w: --suspect-max-share %v: want more than 0 and at most 1", errUsage, f.plausible.MaxShare)
	case f.minGrounding == 0 || f.minGrounding > 1 || math.IsNaN(f.minGrounding):
		return fmt.Errorf("%w: --gold-min-grounding %v: want a share above 0 and at most 1, or a negative value to turn the rule off", errUsage, f.minGrounding)
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"--suspect-max-sources", f.plausible.MaxSources}, {"--suspect-nearly-all", f.plausible.NearlyAll},
		{"--suspect-uniform-labels", f.plausible.UniformLabels}, {"--suspect-repeated-rationale", f.plausible.RepeatedRationale},
		{"--suspect-unsupported", f.plausible.Unsupported}} {
		if c.n == 0 {
			return fmt.Errorf("%w: %s 0: want a positive bound, or a negative value to turn the rule off", errUsage, c.flag)
		}
	}
	return nil
}

// ids returns the targets from arguments, --targets and --targets-from,
// and the values of --targets-from that are not IDs, each with its row
// (app.Targets lists the other invalid ones).
func (f *stageFlags) ids(env *Env, args []string) (ids, invalid []string, err error) {
	ids = append([]string(nil), args...)
	if f.targets != "" {
		more, err := readTargets(f.targets, env.stdinReader())
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, more...)
	}
	more, invalid, err := f.from.read()
	if err != nil {
		return nil, nil, err
	}
	return append(ids, more...), invalid, nil
}

// targetsFrom is --targets-from FILE --column NAME: target IDs from a
// column of a dataset file (Parquet, JSONL, CSV or TSV; GiantsBench's
// pair_id values name the downstream paper).
type targetsFrom struct {
	path, column string
}

func (f *targetsFrom) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.StringVar(&f.path, "targets-from", "", "read target arXiv IDs from a column of a Parquet, JSONL or CSV/TSV file (gzipped too); GiantsBench pair_id values (2406_03055_323949_340477) name 2406.03055")
	fs.StringVar(&f.column, "column", "", "the --targets-from column (default: the first of arxiv_id, arxiv, paper_id, id, pair_id the file has)")
}

// read returns the IDs of the file, without duplicates, in file order,
// and its values that are no IDs, each as "FILE row N ...: reason". A
// file that cannot be read, or lacks the column, is a usage error.
func (f *targetsFrom) read() (ids, invalid []string, err error) {
	if f.path == "" {
		if f.column != "" {
			return nil, nil, fmt.Errorf("%w: --column needs --targets-from", errUsage)
		}
		return nil, nil, nil
	}
	l, err := targetlist.Read(f.path, f.column)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --targets-from: %v", errUsage, err)
	}
	for _, inv := range l.Invalid {
		where := fmt.Sprintf("row %d", inv.Row)
		if inv.Line > 0 {
			where += fmt.Sprintf(" (line %d)", inv.Line)
		}
		invalid = append(invalid, fmt.Sprintf("%s %s, column %s: %q: %s", f.path, where, l.Column, inv.Value, inv.Reason))
	}
	return l.IDs(), invalid, nil
}

// config is the app.Config of the flags (validate has run): the store is
// opened, or created, and locked.
func (f *stageFlags) config(env *Env) (app.Config, error) {
	log, err := f.store.logger(env.Stderr)
	if err != nil {
		return app.Config{}, err
	}
	lc := f.llm.config(env)
	lc.BudgetTokens, lc.BudgetUSD = f.budgetTokens, f.budgetUSD
	cfg := app.Config{
		Version: version, Log: log, Store: f.store.store, Lock: true, Heal: true,
		Net: f.net.config(env), S2: f.s2.config(env), LLM: lc, PDF: f.pdf.config(env), Drain: env.Drain,
		Stages: app.StageOptions{Force: f.force, Refresh: f.refresh, ClassifyBudget: f.budget, SummarizeBudget: f.summaryBudget,
			Plausibility: f.plausible, MinGrounding: f.minGrounding, IncludeSuspect: f.includeSuspect, PostKnowledge: f.postKnowledge},
	}
	f.know.configure(&cfg)
	return cfg, nil
}

// workerFlags size the per-target stages' pools, one flag per stage of
// the table.
type workerFlags map[string]*int

func (w workerFlags) AddFlags(fs *flag.FlagSet, _ *Env) {
	for _, s := range app.PerTarget() {
		n := s.Workers
		w[s.Name] = &n
		fs.IntVar(w[s.Name], s.Name+"-workers", s.Workers, "targets in the "+s.Name+" stage at once (1 or more)")
	}
}

func (w workerFlags) validate() error {
	for _, name := range app.PerTargetNames() {
		if err := positive("--"+name+"-workers", *w[name]); err != nil {
			return err
		}
	}
	return nil
}

func (w workerFlags) byStage() map[string]int {
	out := map[string]int{}
	for n, p := range w {
		out[n] = *p
	}
	return out
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

// readTargets reads arXiv IDs from a targets file: one per line, blank
// lines and '#' comments ignored; "-" reads standard input.
func readTargets(name string, stdin io.Reader) ([]string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%w: read targets: %w", errUsage, err)
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

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
