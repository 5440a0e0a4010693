package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/groundwork/curate/internal/hostile"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

// The hostile-pages round (#26 item 2): a world whose arXiv or ar5iv
// serves, for one to three papers (targets, and now and then a source
// fetched by the sources stage), a page built to cost a parser the most
// memory per byte — tiny tags always among them, the other kinds of
// package hostile beside — each just under the 64 MiB download cap, up to
// three in flight. curate runs over it (killed on the way, sometimes):
// the run finishes (exit 0 or 1), every such paper's stored Document says
// conversion.truncated, and no command's peak RSS (its rusage) reaches
// maxPeakRSS.

// maxPeakRSS is the bound on a command's peak RSS the round holds curate
// to: any page within the cap under 1 GB.
const maxPeakRSS = 1_000_000_000

// downloadCap is curate's default cap on a response body (--max-body).
const downloadCap = 64 << 20

// hostilePage is a page the round serves instead of a paper's own.
type hostilePage struct {
	id, site, kind, role string
	size                 int
}

func (p hostilePage) String() string {
	return fmt.Sprintf("%s (%s, %s, %.1f MB)", p.id, p.role, p.kind, float64(p.size)/1e6)
}

// servePage answers GET and HEAD of a hostile page, written as it goes
// (never held in memory: the harness's own peak counts in every
// command's, see HarnessMaxRSS).
func servePage(w http.ResponseWriter, r *http.Request, p hostilePage) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(p.size))
	if r.Method == http.MethodHead {
		return
	}
	hostile.Write(w, p.kind, p.size)
}

// pageSize is how long hostile.Write makes a page of kind asked for size
// bytes (it writes whole units only).
func pageSize(kind string, size int) (int, error) {
	var c countWriter
	err := hostile.Write(&c, kind, size)
	return int(c), err
}

type countWriter int64

func (c *countWriter) Write(b []byte) (int, error) {
	*c += countWriter(len(b))
	return len(b), nil
}

// HostilePages is the hostile-pages round with pages of about size bytes
// (0: just under the download cap) and the bound on a command's peak RSS
// (0: maxPeakRSS). The smoke test's sabotage makes the pages too small to
// cut and the bound too low to hold: the round must then fail.
func HostilePages(size int, bound int64) func(*Round) {
	if bound == 0 {
		bound = maxPeakRSS
	}
	return func(r *Round) { hostilePages(r, size, bound) }
}

func hostilePages(r *Round, size int, bound int64) {
	rng := r.Rand
	wc := sim.WorldConfig{Seed: rng.Uint64(), Targets: 4 + rng.IntN(3)}
	w, err := sim.NewWorld(wc)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	// The papers whose pages turn hostile: targets with HTML, and a
	// source on arXiv now and then.
	var pick []hostilePage
	for i := range wc.Targets {
		if p := w.Target(i); p.HTML != sim.HTMLNone {
			pick = append(pick, hostilePage{id: p.ArxivID, site: p.HTML, role: "target"})
		}
	}
	rng.Shuffle(len(pick), func(i, j int) { pick[i], pick[j] = pick[j], pick[i] })
	n := min(1+rng.IntN(3), len(pick))
	pages := pick[:n]
	if rng.IntN(3) == 0 && n > 1 {
		// A source of a target whose own page is whole (a truncated page
		// cites nothing).
		hostileIDs := map[string]bool{}
		for _, p := range pages[:n-1] {
			hostileIDs[p.id] = true
		}
	sources:
		for _, i := range rng.Perm(wc.Targets) {
			t := w.Target(i)
			if hostileIDs[t.ArxivID] {
				continue
			}
			for _, ref := range w.References(&t) {
				if ref.Role == sim.RoleSource && ref.Paper.HTML != sim.HTMLNone && !ref.Paper.IsTarget() {
					pages[n-1] = hostilePage{id: ref.Paper.ArxivID, site: ref.Paper.HTML, role: "source of " + t.ArxivID}
					break sources
				}
			}
		}
	}
	for i := range pages {
		pages[i].kind = hostile.TinyTags
		if i > 0 {
			pages[i].kind = hostile.Pages[rng.IntN(len(hostile.Pages))]
		}
		// Just under the cap: within its last 4 MiB.
		want := downloadCap - 1 - rng.IntN(4<<20)
		if size > 0 {
			want = size
		}
		if pages[i].size, err = pageSize(pages[i].kind, want); err != nil {
			r.Failf("%v", err)
			return
		}
	}

	h, err := r.NewHome(wc, sim.Options{})
	if err != nil {
		r.Failf("%v", err)
		return
	}
	defer h.Done(r)
	if err := h.TakeMore(wc.Targets); err != nil {
		r.Failf("%v", err)
		return
	}
	for _, site := range []string{sim.HTMLArxiv, sim.HTMLAr5iv} {
		var mine []hostilePage
		for _, p := range pages {
			if p.site == site {
				mine = append(mine, p)
			}
		}
		if len(mine) == 0 {
			continue
		}
		service := map[string]string{sim.HTMLArxiv: sim.Arxiv, sim.HTMLAr5iv: sim.Ar5iv}[site]
		h.Servers.Service(service).Intercept(func(w http.ResponseWriter, req *http.Request, _ sim.Call) bool {
			rest, ok := strings.CutPrefix(req.URL.Path, "/html/")
			if !ok {
				return false
			}
			rest = strings.TrimSuffix(rest, "/")
			for _, p := range mine {
				if v, ok := strings.CutPrefix(rest, p.id); ok && (v == "" || v[0] == 'v') {
					servePage(w, req, p)
					return true
				}
			}
			return false
		})
	}
	at := r.At(h)
	workers := 2 + rng.IntN(2)
	args := h.RunArgs("--fetch-workers", strconv.Itoa(workers), "--sources-workers", strconv.Itoa(workers))

	var peak Result
	ran := func(what string, res Result) {
		if res.MaxRSS > peak.MaxRSS {
			peak = res
		}
		if !res.Killed && res.Code != 0 && res.Code != 1 {
			r.Failf("%s: exit %d, want 0 or 1:\n%s", what, res.Code, firstLines(res.Stdout+res.Stderr, 10))
		}
	}
	killed := false
	if rng.IntN(3) == 0 {
		res := at.KillAfter(at.Moment("run"), args...)
		ran("the run killed", res)
		killed = res.Killed
	}
	res := at.Curate(args...)
	ran("the run", res)
	// The pages' papers: a Document each, cut short by the parse budget
	// and saying so.
	var fates []string
	for _, p := range pages {
		fate, ok := pageFate(at, h, p)
		fates = append(fates, p.String()+": "+fate)
		if !ok {
			r.Failf("%s: %s", p, fate)
		}
	}
	if check := at.Curate("dataset", "--check", h.Out); check.Code != 0 {
		r.Failf("after the run, --check exits %d:\n%s", check.Code, firstLines(check.Stdout+check.Stderr, 8))
	}
	self := HarnessMaxRSS()
	switch {
	case peak.MaxRSS < bound:
	case self >= bound:
		r.Failf("the harness itself peaked at %d MB: the commands' peaks (%d MB) say nothing", self>>20, peak.MaxRSS>>20)
	default:
		r.Failf("curate peaked at %d MB (its rusage; the harness's own peak is %d MB), over the bound of %d MB, in %.0fs", peak.MaxRSS>>20, self>>20, bound>>20, peak.Wall.Seconds())
	}
	r.Notef("%d targets, %d fetch workers, killed %v; %s; peak RSS %d MB (harness %d MB)",
		wc.Targets, workers, killed, strings.Join(fates, ", "), peak.MaxRSS>>20, self>>20)
}

// pageFate says what the store holds of a hostile page's paper, and
// whether that is what must hold: a Document whose conversion says
// truncated (the parse budget's note among its notes), or — for a source
// the run did not fetch (the model did not take it as a source) — none.
// curate show's output (tens of MB for a page of table cells) goes to a
// file and is read from it token by token.
func pageFate(r *Round, h *Home, p hostilePage) (string, bool) {
	f, err := os.CreateTemp(h.dir, "show-*.json")
	if err != nil {
		return err.Error(), false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	res := r.CurateTo(f, "show", "--store", h.Store, p.id)
	var conv *record.Conversion
	var ledger []struct {
		Stage, Status, Error string
	}
	var found map[string]bool
	if _, err = f.Seek(0, io.SeekStart); err == nil {
		found, err = decodePaths(f, map[string]any{
			"records." + record.Documents.Name() + ".value.conversion": &conv,
			"ledger": &ledger,
		})
	}
	if res.Code != 0 || err != nil {
		if p.role != "target" {
			return "not fetched", true
		}
		return fmt.Sprintf("curate show exits %d (%v): %s", res.Code, err, firstLines(res.Stderr, 3)), false
	}
	if conv == nil {
		var why []string
		for _, e := range ledger {
			if e.Error != "" {
				why = append(why, e.Stage+" "+e.Status+": "+e.Error)
			}
		}
		if p.role != "target" && len(why) == 0 {
			return "not fetched", true
		}
		return fmt.Sprintf("no document stored (found %v; %s)", found, strings.Join(why, "; ")), false
	}
	budget := slices.ContainsFunc(conv.Notes, func(n string) bool { return strings.Contains(n, "parse budget") })
	switch {
	case !conv.Truncated:
		return fmt.Sprintf("stored whole, conversion.truncated false (notes %q)", conv.Notes), false
	case !budget:
		return fmt.Sprintf("conversion.truncated, and no note names the parse budget (notes %q)", conv.Notes), false
	}
	return "truncated", true
}

// decodePaths decodes from the JSON value r holds the values at the
// given paths (object keys from the top, joined by dots) into their
// targets, and skips everything else token by token: a value of tens of
// MB is never held whole. It reports which paths it found.
func decodePaths(r io.Reader, want map[string]any) (map[string]bool, error) {
	dec := json.NewDecoder(r)
	found := map[string]bool{}
	// under reports whether some wanted path lies within path.
	under := func(path string) bool {
		for p := range want {
			if strings.HasPrefix(p, path+".") {
				return true
			}
		}
		return false
	}
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok || d == '}' || d == ']' {
			return nil
		}
		for dec.More() {
			var child string
			if d == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				child, _ = key.(string)
				if path != "" {
					child = path + "." + child
				}
			} else {
				child = "\x00" // array items are not on any path
			}
			switch {
			case want[child] != nil:
				if err := dec.Decode(want[child]); err != nil {
					return fmt.Errorf("%s: %w", child, err)
				}
				found[child] = true
			case under(child):
				if err := walk(child); err != nil {
					return err
				}
			default:
				if err := skipValue(dec); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return found, walk("")
}

// skipValue reads the next value of dec, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
