package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestE2ECrawl runs curate over targets read from a GiantsBench-style
// JSONL file, with arXiv's robots.txt setting a crawl delay and
// disallowing one target's page, and with page archives holding some
// targets (a directory of saved pages) and some sources (an ar5iv-style
// zip): archived papers make no request, robots.txt is asked once per
// host and then read from the store, the disallowed page is never sent,
// and the interval and its source are told at the start, in the summary
// and by curate status.
func TestE2ECrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	w0, err := sim.NewWorld(sim.WorldConfig{Seed: 5, Targets: 16})
	if err != nil {
		t.Fatal(err)
	}
	// A target of arXiv's whose page robots.txt disallows, targets held
	// in a directory, sources held in a zip.
	var blocked string
	dirHeld, zipHeld := map[string]bool{}, map[string]bool{}
	dir, zipDir := t.TempDir(), t.TempDir()
	zipFiles := map[string][]byte{}
	for i := range w0.NumTargets() {
		p := w0.Target(i)
		switch {
		case p.HTML == sim.HTMLArxiv && blocked == "" && i > 0:
			blocked = p.ArxivID
		case p.HTML == sim.HTMLArxiv && i%3 == 0:
			dirHeld[p.ArxivID] = true
			if err := os.WriteFile(filepath.Join(dir, p.ArxivID+".html"), w0.Page(&p, sim.HTMLArxiv), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 1 {
			for _, r := range w0.References(&p) {
				q := r.Paper
				if r.Role == sim.RoleSource && !q.IsTarget() && q.HTML != sim.HTMLNone {
					zipHeld[q.ArxivID] = true
					zipFiles["no-problem/"+q.ArxivID+".html"] = w0.Page(&q, q.HTML)
				}
			}
		}
	}
	zipPath := filepath.Join(zipDir, "ar5iv-no-problem.zip")
	testutil.WriteZip(t, zipPath, zipFiles)
	if blocked == "" || len(dirHeld) == 0 || len(zipHeld) == 0 {
		t.Fatalf("world too small: blocked %q, %d and %d archived", blocked, len(dirHeld), len(zipHeld))
	}

	s := clitest.Sim(t, sim.WorldConfig{Seed: 5, Targets: 16}, sim.Options{Robots: map[string]string{
		sim.Arxiv: strings.Replace(sim.ArxivRobots(20*time.Millisecond), "Allow: /html\n", "Disallow: /html/"+blocked+"\nAllow: /html\n", 1),
		sim.Ar5iv: sim.Ar5ivRobots,
	}})

	// The targets as GiantsBench writes them, a bad row among them.
	var lines []string
	for i, id := range s.World.TargetIDs() {
		lines = append(lines, fmt.Sprintf(`{"query": "q%d", "pair_id": "%s_%d_%d"}`, i, strings.ReplaceAll(id, ".", "_"), 300000+i, 400000+i))
		if i == 3 {
			lines = append(lines, `{"query": "bad", "pair_id": "not-a-paper"}`)
		}
	}
	targets := filepath.Join(t.TempDir(), "train.jsonl")
	if err := os.WriteFile(targets, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	args := append([]string{"run", "--store", work + "/store", "--out", work + "/dataset", "--targets-from", targets, "--column", "pair_id",
		"--html-archive", dir, "--html-archive", zipPath, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1"}, s.Flags()...)
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}

	// The estimate counts no page for a target an archive holds (the
	// simulated model is priced: an estimate of a model without a price
	// is a usage error).
	code, out, stderr := clitest.Run(t, env, append(append([]string{}, args...), "--dry-run", "--json", "--price", sim.Model+"=0/0")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	var est struct {
		Stages []struct {
			Stage    string         `json:"stage"`
			Requests map[string]int `json:"requests"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &est); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, st := range est.Stages {
		// One request per target no archive holds (the bad row is no
		// target), and robots.txt.
		if want := s.World.NumTargets() - len(dirHeld) + 1; st.Stage == "fetch" && st.Requests[sim.Arxiv] != want {
			t.Errorf("estimated %d arXiv requests for the targets, want %d", st.Requests[sim.Arxiv], want)
		}
	}
	if n := s.Requests(); n != 0 {
		t.Fatalf("the dry run made %d requests", n)
	}

	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a bad row, a disallowed page)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "row 5 (line 5), column pair_id: \"not-a-paper\"") {
		t.Errorf("the bad row is not named with its row:\n%s", stderr)
	}
	crawl := "crawl: " + strings.TrimPrefix(s.URL(sim.Arxiv), "http://") + ": " + httpx.Paced(20*time.Millisecond).String() + " from the Crawl-delay"
	if n := strings.Count(stderr, crawl); n != 2 {
		t.Errorf("%q told %d times, want at the start and in the summary:\n%s", crawl, n, stderr)
	}
	fail := clitest.Failures(stdout)
	if why := strings.Join(fail[blocked], "; "); !strings.Contains(why, "disallowed by robots.txt") {
		t.Errorf("%s: failures %q, want a refusal by robots.txt", blocked, why)
	}

	calls := clitest.Calls(s)
	robotsAsked := 0
	for _, name := range []string{sim.Arxiv, sim.Ar5iv} {
		for _, c := range calls[name] {
			path := strings.TrimPrefix(c.Key, "GET ")
			if path == "/robots.txt" {
				robotsAsked++
				continue
			}
			id := strings.TrimPrefix(path, "/html/")
			if dirHeld[id] || zipHeld[id] {
				t.Errorf("%s asked for archived %s", name, path)
			}
			if name == sim.Arxiv && id == blocked {
				t.Errorf("disallowed %s sent", path)
			}
		}
	}
	if robotsAsked != 2 {
		t.Errorf("robots.txt asked %d times, want once per host", robotsAsked)
	}
	st, err := store.Open(context.Background(), work+"/store")
	if err != nil {
		t.Fatal(err)
	}
	servedZip := 0
	for id := range zipHeld {
		doc, ok, _ := record.Documents.Lookup(context.Background(), st, id)
		if ok {
			if doc.Source != record.SourceArchive || doc.Archive != zipPath {
				t.Errorf("%s: source %q archive %q", id, doc.Source, doc.Archive)
			}
			servedZip++
		}
	}
	for id := range dirHeld {
		if doc, ok, _ := record.Documents.Lookup(context.Background(), st, id); !ok || doc.Source != record.SourceArchive || doc.ArchiveEntry != id+".html" {
			t.Errorf("%s: stored %v, doc %+v", id, ok, doc)
		}
	}
	// The knowledge cut (on by default) reads a target at v1: an archive
	// page whose name gives no version is read for it too, and found to
	// be of a later version when it is (the version served now is then
	// read from it). Such a target's page is read twice in a run.
	reread := 0
	for id := range dirHeld {
		if doc, ok, _ := record.Documents.Lookup(context.Background(), st, id); ok && record.DocVersion(doc) > 1 {
			reread++
		}
	}
	var rec app.RunRecord
	v, err := st.Value(context.Background(), app.RunSummaryKey)
	if err == nil {
		err = json.Unmarshal(v, &rec)
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if servedZip == 0 {
		t.Error("no source was served by the zip")
	}
	if rec.Archives == nil || rec.Archives.Served != int64(len(dirHeld)+servedZip+reread) {
		t.Errorf("run summary's archives %+v, want %d pages served (%d targets' read at v1 first)", rec.Archives, len(dirHeld)+servedZip+reread, reread)
	}
	arxivHost := strings.TrimPrefix(s.URL(sim.Arxiv), "http://")
	for _, p := range rec.Crawl {
		if want := map[bool]string{true: robots.SourceCrawlDelay, false: robots.SourceConfigured}[p.Host == arxivHost]; p.Source != want {
			t.Errorf("run summary: %s paced by %s, want %s", p.Host, p.Source, want)
		}
	}
	if len(rec.Crawl) != 2 || rec.PerTarget["s2"] == 0 {
		t.Errorf("run summary crawl %+v, per target %v", rec.Crawl, rec.PerTarget)
	}
	code, out, _ = clitest.Run(t, nil, "status", "--store", work+"/store")
	if code != 0 || !strings.Contains(out, crawl) || !strings.Contains(out, "requests per target: ") {
		t.Errorf("status does not tell the crawl:\n%s", out)
	}

	// Again, faster than the crawl delay by explicit choice: robots.txt
	// comes from the store (no request), the override is warned about
	// once and shown.
	s.Reset()
	code, _, stderr = clitest.Run(t, env, append(args, "--ignore-crawl-delay")...)
	if code != 1 {
		t.Fatalf("second run: exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "going faster than robots.txt asks"); n != 1 {
		t.Errorf("override warned %d times, want once:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, httpx.Paced(time.Millisecond).String()+" by override (1ms and a 100µs margin), faster than the Crawl-delay of 20ms") {
		t.Errorf("the override is not shown:\n%s", stderr)
	}
	for _, name := range []string{sim.Arxiv, sim.Ar5iv} {
		for _, c := range s.Service(name).Calls() {
			if c.Key == "GET /robots.txt" {
				t.Errorf("%s: robots.txt asked again while the stored copy is fresh", name)
			}
		}
	}
}

// Bad crawl flags are refused before anything is opened.
func TestCrawlFlagErrors(t *testing.T) {
	dir := t.TempDir()
	notZip := filepath.Join(dir, "pages.tar")
	os.WriteFile(notZip, []byte("x"), 0o644)
	csv := filepath.Join(dir, "t.csv")
	os.WriteFile(csv, []byte("paper\n2401.00001\n"), 0o644)
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{"fetch", "--html-archive", filepath.Join(dir, "none"), "2401.00001"}, "--html-archive " + filepath.Join(dir, "none")},
		{[]string{"fetch", "--html-archive", notZip, "2401.00001"}, "want a directory of saved pages or a .zip file"},
		{[]string{"fetch", "--column", "id", "2401.00001"}, "--column needs --targets-from"},
		{[]string{"fetch", "--targets-from", csv}, "column"},
		{[]string{"fetch", "--targets-from", filepath.Join(dir, "t.xlsx")}, "--targets-from"},
	} {
		store := filepath.Join(t.TempDir(), "store")
		code, _, stderr := clitest.Run(t, nil, append(tt.args, "--store", store)...)
		if code != 2 || !strings.Contains(stderr, tt.err) {
			t.Errorf("curate %v: exit %d, stderr %q; want 2 naming %q", tt.args, code, stderr, tt.err)
		}
		if _, err := os.Stat(store); err == nil {
			t.Errorf("curate %v created the store", tt.args)
		}
	}
}
