package crawl

import (
	"bytes"
	"context"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// offlineNet is a machine without a network: every name fails to
// resolve, as the resolver of an offline machine says, and each attempt
// is counted by host.
type offlineNet struct {
	mu       sync.Mutex
	attempts map[string]int
}

func (n *offlineNet) dial(_ context.Context, _, addr string) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(addr)
	n.mu.Lock()
	n.attempts[host]++
	n.mu.Unlock()
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (n *offlineNet) counts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for h, c := range n.attempts {
		out[h] = c
	}
	return out
}

// runOffline runs curate with every connection dialled through net.
func runOffline(t *testing.T, n *offlineNet, args ...string) (int, string, string) {
	t.Helper()
	var e cli.Env
	if n != nil {
		e.Dial = n.dial
	}
	return clitest.RunEnv(t, e, args...)
}

// offlineArgs is a run whose services are at names that do not resolve
// (.invalid is reserved for that, RFC 2606).
func offlineArgs(t *testing.T, dir string, extra ...string) []string {
	args := []string{"run", "--store", dir + "/store", "--out", dir + "/out", "--targets", clitest.WriteTargets(t, []string{"2401.00001", "2401.00002", "2401.00003"}),
		"--arxiv-base", "http://arxiv.invalid", "--ar5iv-base", "http://ar5iv.invalid", "--s2-base", "http://s2.invalid",
		"--arxiv-api-base", "http://export.invalid", "--oai-base", "http://oaipmh.invalid/oai", "--arxiv-interval", "1ms", "--s2-interval", "1ms"}
	return append(args, extra...)
}

// TestOfflineRun: offline, a run stops at its first request, which is not
// retried (a name that does not resolve is not transient), with exit 2 and
// a message naming the host; with robots.txt in the store, the first page
// request does the same, and the run records what it was. Attempts are
// counted, never time.
func TestOfflineRun(t *testing.T) {
	const msg = "cannot reach arxiv.invalid: no such host; is the machine online?"
	n := &offlineNet{attempts: map[string]int{}}
	dir := t.TempDir()
	code, stdout, stderr := runOffline(t, n, offlineArgs(t, dir)...)
	if code != 2 || !strings.Contains(stderr, msg) {
		t.Fatalf("exit %d, want 2 and %q\n%s\n%s", code, msg, stdout, stderr)
	}
	if got := n.counts(); len(got) != 1 || got["arxiv.invalid"] != 1 {
		t.Errorf("attempts by host %v, want arxiv.invalid's robots.txt once and nothing else", got)
	}

	// robots.txt is in the store (a run the day before, online): the
	// first page request meets the same, and stops the run.
	st, err := store.Open(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"arxiv.invalid", "ar5iv.invalid"} {
		u := "http://" + h + "/robots.txt"
		if _, err := record.RobotsFiles.Put(context.Background(), st, u, &record.RobotsFile{URL: u, Fetched: time.Now(), Status: 200, Body: []byte("User-agent: *\nAllow: /\n")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	n = &offlineNet{attempts: map[string]int{}}
	code, stdout, stderr = runOffline(t, n, offlineArgs(t, dir, "--fetch-workers", "1")...)
	if code != 2 || !strings.Contains(stderr, "no such host; is the machine online?") || !strings.Contains(stderr, "stopped: cannot reach") {
		t.Fatalf("robots.txt stored: exit %d, want 2 naming the host\n%s\n%s", code, stdout, stderr)
	}
	for host, c := range n.counts() {
		if c > 3 {
			t.Errorf("%s asked %d times: the run did not stop at the first unresolved name", host, c)
		}
	}
	if n.counts()["arxiv.invalid"] != 1 {
		t.Errorf("attempts by host %v, want one page request to arxiv.invalid", n.counts())
	}
	code, out, _ := clitest.Run(t, nil, "status", "--store", dir+"/store")
	if code != 0 || !strings.Contains(out, "no such host") {
		t.Errorf("status does not tell the last run's cause:\n%s", out)
	}
}

// TestOfflineRunResolver: the same through the machine's own resolver,
// where .invalid names do not resolve; skipped where the resolver cannot
// say so (no resolver at all answers otherwise).
func TestOfflineRunResolver(t *testing.T) {
	if _, err := net.DefaultResolver.LookupHost(context.Background(), "arxiv.invalid"); err == nil {
		t.Skip("arxiv.invalid resolves here")
	} else if de, ok := err.(*net.DNSError); !ok || !de.IsNotFound {
		t.Skipf("the resolver does not say arxiv.invalid does not exist: %v", err)
	}
	code, stdout, stderr := runOffline(t, nil, offlineArgs(t, t.TempDir())...)
	if code != 2 || !strings.Contains(stderr, "cannot reach arxiv.invalid: no such host; is the machine online?") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestInterruptDuringRetries: a Ctrl-C while robots.txt waits to be asked
// again (arXiv answering 503) ends the wait at once: the file is asked
// once, not retried, the run exits 130, and its summary's time is the
// run's (it said "interrupted … in 1ms", the pipeline's own millisecond).
func TestInterruptDuringRetries(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 5, Targets: 3}, sim.Options{})
	s.Service(sim.Arxiv).Script("/robots.txt", sim.Unavailable, sim.Forever)
	dir := t.TempDir()
	drain := make(chan struct{})
	var out, errb bytes.Buffer
	e := &cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Drain: drain}
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/out", "--retries", "5", "--arxiv-interval", "1ms")
	done := make(chan int)
	go func() { done <- cli.Run(context.Background(), e, args) }()
	for len(s.Service(sim.Arxiv).CallsTo("/robots.txt")) == 0 {
		time.Sleep(time.Millisecond)
	}
	asked := time.Now()               // the run began before its first request
	time.Sleep(20 * time.Millisecond) // into the backoff (2 s or more)
	close(drain)
	before := time.Since(asked)
	code := <-done
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, out.String(), errb.String())
	}
	if n := len(s.Service(sim.Arxiv).CallsTo("/robots.txt")); n != 1 {
		t.Errorf("robots.txt asked %d times, want once: the retry was not cut", n)
	}
	m := regexp.MustCompile(`interrupted \(run the same command again to resume\) in (\S+)\n`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no summary line:\n%s", errb.String())
	}
	if d, err := time.ParseDuration(m[1]); err != nil || d < before.Round(time.Millisecond)-time.Millisecond {
		t.Errorf("summary says %s; the run had taken at least %s when it was interrupted", m[1], before)
	}
}
