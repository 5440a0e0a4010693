package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/groundwork/curate/sim"
)

// The planted-keys round (#26 item 4): every service echoes the request —
// an error echoing it now and then, and the echo in its answers, as an
// endpoint or a proxy in front of it would — with the round's Semantic
// Scholar key, LLM key and a proxy's password planted in each echo; curate
// runs over that world (killed on the way, sometimes) until it publishes.
// No form of any key may be anywhere curate writes.

// keyProvider is an LLM endpoint kind and the variable its key is read
// from.
type keyProvider struct {
	name, service, env string
	flags              []string
}

var keyProviders = []keyProvider{
	{"compatible", sim.LLM, "LLM_API_KEY", nil},
	{"openai", sim.LLM, "OPENAI_API_KEY", []string{"--llm-provider", "openai"}},
	{"anthropic", sim.Anthropic, "ANTHROPIC_API_KEY", []string{"--llm-provider", "anthropic"}},
}

// plantedKey makes a key of the round's: the mark, characters that URL,
// JSON and HTML escapes treat differently, and seeded letters.
func plantedKey(rng *rand.Rand, prefix, specials string) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte(prefix + plantMark)
	for range 16 {
		b = append(b, letters[rng.IntN(len(letters))])
	}
	return string(b) + specials
}

// PlantedKeys is the planted-keys round. With unconfigured it also plants
// a key curate is not given, which no redaction can know: the round must
// then fail, as it must against a curate that does not redact (the smoke
// test's sabotage).
func PlantedKeys(unconfigured bool) func(*Round) {
	return func(r *Round) { plantedKeys(r, unconfigured) }
}

func plantedKeys(r *Round, unconfigured bool) {
	rng := r.Rand
	p := keyProviders[rng.IntN(len(keyProviders))]
	s2Key := plantedKey(rng, "s2", "+/=")
	llmKey := plantedKey(rng, "sk-", "/key+&more")
	proxyPwd := plantedKey(rng, "proxy", "")
	keys := []string{s2Key, llmKey, proxyPwd}
	planted := keys
	if unconfigured {
		planted = append(slices.Clone(keys), plantedKey(rng, "other", "=="))
		keys = planted
	}
	wc := sim.WorldConfig{Seed: rng.Uint64(), Targets: 6 + rng.IntN(4)}
	if rng.IntN(2) == 0 {
		wc.NoHTML = []int{rng.IntN(wc.Targets)} // a target for ar5iv
	}
	h, err := r.NewHome(wc, sim.Options{S2Key: s2Key})
	if err != nil {
		r.Failf("%v", err)
		return
	}
	defer h.Done(r)
	if err := h.TakeMore(wc.Targets); err != nil {
		r.Failf("%v", err)
		return
	}
	h.Env = []string{"S2_API_KEY=" + s2Key, p.env + "=" + llmKey, "HTTPS_PROXY=http://curate:" + proxyPwd + "@proxy.invalid:3128"}
	at := r.At(h)

	// Which services echo: the pages, Semantic Scholar, the arXiv API,
	// OAI-PMH when licences are looked up, and the round's LLM endpoint.
	// Semantic Scholar or the LLM endpoint, whose error bodies curate
	// quotes (a page's error is its status only), always answers some
	// requests with an echoing error, so that the failure list and the
	// ledger's error column meet them.
	licenses := rng.IntN(2) == 0
	services := []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, p.service}
	if licenses {
		services = append(services, sim.OAIPMH)
	}
	echo := map[string]sim.Echo{}
	for _, name := range services {
		e := sim.Echo{Keys: planted, Answers: rng.IntN(3) > 0, Status: []int{400, 403, 422}[rng.IntN(3)]}
		switch {
		case rng.IntN(2) == 0:
		case name == sim.Arxiv || name == sim.Ar5iv:
			// Not so often that no page comes through: a target that
			// fails at fetch meets no other service.
			e.Every = 3 + rng.IntN(4)
		default:
			e.Every = 1 + rng.IntN(6)
		}
		echo[name] = e
	}
	sure := []string{sim.S2, p.service}[rng.IntN(2)]
	e := echo[sure]
	e.Every, e.Status = 1+rng.IntN(3), 400 // an error curate quotes
	echo[sure] = e
	if sure != sim.S2 {
		// Semantic Scholar answers every target's record in one batch:
		// failed, no target would reach the model.
		e := echo[sim.S2]
		e.Every = 0
		echo[sim.S2] = e
	}
	setEcho := func(errors bool) {
		for _, name := range services {
			e := echo[name]
			if !errors {
				e.Every = 0
			}
			h.Servers.Service(name).SetEcho(e)
		}
	}

	args := h.RunArgs("--llm-base", h.Servers.URL(p.service))
	args = append(args, p.flags...)
	if licenses {
		args = append(args, "--licenses", "--oai-base", h.Servers.URL(sim.OAIPMH)+sim.OAIPath)
	}
	if rng.IntN(2) == 0 {
		args = append(args, "--log", "debug") // the last --log wins
	}
	var outs []Result
	ran := func(what string, res Result) {
		outs = append(outs, res)
		if !res.Killed && res.Code != 0 && res.Code != 1 {
			r.Failf("%s: exit %d, want 0 or 1:\n%s", what, res.Code, firstLines(res.Stderr, 10))
		}
	}

	// The run meets the echoing errors (killed on the way, sometimes, and
	// resumed), then runs again with only the echoing answers, and
	// publishes.
	setEcho(true)
	killed := false
	if rng.IntN(2) == 0 {
		res := at.KillAfter(at.Moment("run"), args...)
		ran("the run killed", res)
		killed = res.Killed
	}
	res := at.Curate(args...)
	ran("the run meeting echoing errors", res)
	echoed := 0
	for _, name := range services {
		echoed += h.Servers.Service(name).Stats().Echoed
	}
	seen := scanForKeys(at, h, keys, outs, false)
	if unconfigured && len(r.failures) > 0 {
		// The key curate was not given got through, as it must: the
		// sabotage is caught, and the rest would only find it again.
		return
	}
	// The targets that failed where the sure service serves them, and
	// how many of their errors quote its echo, redacted.
	quoted, failed := 0, 0
	for _, f := range failureLines(res.Stdout) {
		if slices.Contains(echoStages[sure], f.stage) {
			failed++
			if strings.Contains(f.error, "REDACTED") {
				quoted++
			}
		}
	}
	setEcho(false)
	ran("the run after the errors", at.Curate(args...))
	seen.add(scanForKeys(at, h, keys, outs, true))
	switch {
	case seen.total() == 0:
		r.Failf("no echo was found redacted anywhere: the round tested nothing")
	case failed > 0 && quoted == 0:
		r.Failf("%s answered %d requests with an error echoing them, %d targets failed at %s, and none of their errors quotes it redacted",
			sure, h.Servers.Service(sure).Stats().Echoed, failed, strings.Join(echoStages[sure], " or "))
	}
	var on []string
	for _, name := range services {
		on = append(on, fmt.Sprintf("%s every %d%s", name, echo[name].Every, map[bool]string{true: "+answers"}[echo[name].Answers]))
	}
	r.Notef("%s, %d targets, killed %v; %d echoing errors (%s); %d of %d failures in the stages of %s quote its echo; redactions seen: %s",
		p.name, wc.Targets, killed, echoed, strings.Join(on, ", "), quoted, failed, sure, seen)
}

// echoStages are the stages whose failures quote a service's error.
var echoStages = map[string][]string{
	sim.S2:        {"citegraph"},
	sim.LLM:       {"classify", "summarize"},
	sim.Anthropic: {"classify", "summarize"},
}

// failure is a line of a run's failure list: item, stage, status, error.
type failure struct{ item, stage, status, error string }

func failureLines(stdout string) []failure {
	var out []failure
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.SplitN(line, "\t", 4); len(f) == 4 {
			out = append(out, failure{f[0], f[1], f[2], f[3]})
		}
	}
	return out
}

// scanForKeys looks for every form of the keys in the commands' output so
// far, status --json, show (of every item of the ledger, with and without
// --raw), every file of the home (the ledger, its WAL, every blob
// inflated, what a kill left) and, once published, the dataset's rows. It
// returns the redactions it saw, by where.
func scanForKeys(r *Round, h *Home, keys []string, outs []Result, published bool) redactions {
	var seen redactions
	var leaks []Leak
	defer func() {
		// A few places, in full, and how many more: every one is a leak.
		for i, l := range leaks {
			if i == 3 {
				r.Failf("a planted key got through in %d more places", len(leaks)-i)
				break
			}
			r.Failf("a planted key got through: %s", l)
		}
	}()
	counter := &seen.outputs
	look := func(where string, b []byte) {
		if l, ok := FindSecret(where, b, keys); ok {
			leaks = append(leaks, l)
		}
		*counter += strings.Count(string(b), "REDACTED")
	}
	for i, res := range outs {
		look(fmt.Sprintf("the stdout of command %d", i+1), []byte(res.Stdout))
		look(fmt.Sprintf("the stderr of command %d", i+1), []byte(res.Stderr))
	}
	counter = &seen.status
	st := r.Curate("status", "--store", h.Store, "--json")
	if st.Code != 0 {
		r.Failf("status --json: exit %d:\n%s", st.Code, firstLines(st.Stderr, 5))
	}
	look("status --json", []byte(st.Stdout+st.Stderr))
	items, err := LedgerItems(r.Context(), h.Store)
	if err != nil {
		r.Failf("%v", err)
	}
	if len(items) > 0 {
		for _, raw := range []bool{false, true} {
			args := []string{"show", "--store", h.Store}
			if raw {
				args = append(args, "--raw")
			}
			res := r.Curate(append(args, items...)...)
			if res.Code != 0 && res.Code != 1 {
				r.Failf("%s: exit %d:\n%s", strings.Join(args, " "), res.Code, firstLines(res.Stderr, 5))
			}
			look(strings.Join(args, " "), []byte(res.Stdout+res.Stderr))
		}
	}
	counter = &seen.ledger
	values, err := ScanLedger(r.Context(), h.Store, look)
	switch {
	case err != nil:
		r.Failf("scan the ledger: %v", err)
	case values == 0:
		r.Failf("the ledger holds no value: it was not looked at")
	}
	counter = &seen.files
	files, frames, err := ScanFiles(h.dir, look)
	if err != nil {
		r.Failf("scan the home's files: %v", err)
	}
	if frames == 0 {
		r.Failf("no zstd frame among the %d files of the home: the blobs were not looked at", files)
	}
	if !published {
		return seen
	}
	rows, n, err := DatasetRows(r.Context(), h.Out)
	switch {
	case err != nil:
		r.Failf("read the published dataset: %v", err)
	case n == 0:
		r.Failf("no instance published: the dataset's rows were not looked at")
	}
	counter = &seen.rows
	look("the dataset's rows", rows)
	return seen
}

// redactions counts the masks a scan saw: in the commands' output, in
// status and show, in the ledger's values, in the home's files (the
// ledger's among them), in the dataset's rows.
type redactions struct{ outputs, status, ledger, files, rows int }

func (s *redactions) add(o redactions) {
	s.outputs += o.outputs
	s.status += o.status
	s.ledger += o.ledger
	s.files += o.files
	s.rows += o.rows
}

func (s redactions) total() int { return s.outputs + s.status + s.ledger + s.files + s.rows }

func (s redactions) String() string {
	return fmt.Sprintf("%d in output, %d in status and show, %d in the ledger, %d in files, %d in rows", s.outputs, s.status, s.ledger, s.files, s.rows)
}
