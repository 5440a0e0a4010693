package guards

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// Keys planted in the echoing services, with the characters encodings
// treat differently ('+', '/', '=', '&' for URL, JSON and HTML escapes).
const (
	plantedS2Key    = "s2PLANTEDkey+/=0123456789abcdefXYZ"
	plantedLLMKey   = "sk-PLANTED-llm/key+0123456789&more"
	plantedProxyPwd = "proxyPLANTEDpass0123456789"
)

// secretForms are the ways an echo may write k, as this test writes them
// (independently of package redact): as is, URL-encoded, JSON- and
// HTML-escaped, and inside base64 at each of its three alignments.
func secretForms(k string) []string {
	j, _ := json.Marshal(k)
	out := []string{k, url.QueryEscape(k), string(j[1 : len(j)-1]), strings.ReplaceAll(k, "&", "&amp;")}
	for shift := range 3 {
		sub := k[shift:]
		sub = sub[:len(sub)/3*3]
		out = append(out, base64.RawStdEncoding.EncodeToString([]byte(sub)))
	}
	return append(out, "PLANTED")
}

// findSecrets reports every planted key form in text, naming where.
func findSecrets(t *testing.T, where string, text []byte) {
	t.Helper()
	for _, k := range []string{plantedS2Key, plantedLLMKey, plantedProxyPwd} {
		for _, f := range secretForms(k) {
			if i := bytes.Index(text, []byte(f)); i >= 0 {
				t.Errorf("%s holds %q: …%s…", where, f, text[max(i-80, 0):min(i+len(f)+40, len(text))])
				return
			}
		}
	}
}

// TestE2ESecretsRedacted runs curate against services that all echo the
// request (every one of them, as an endpoint or a proxy in front of it
// would: an error echoing the request for some requests, the echo in
// every answer), with the S2 key, the LLM key and a proxy's password
// planted in each echo, for each kind of LLM endpoint. No form of any key
// is in anything curate writes: stdout and stderr (the failure list, the
// logs), status --json, show, every file of the store (the ledger, every
// blob) and the published dataset.
func TestE2ESecretsRedacted(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	llms := []struct {
		name, service, keyEnv string
		flags                 []string
	}{
		{"compatible", sim.LLM, "LLM_API_KEY", nil},
		{"openai", sim.LLM, "OPENAI_API_KEY", []string{"--llm-provider", "openai"}},
		{"anthropic", sim.Anthropic, "ANTHROPIC_API_KEY", []string{"--llm-provider", "anthropic"}},
	}
	keys := []string{plantedS2Key, plantedLLMKey, plantedProxyPwd}
	for _, l := range llms {
		t.Run(l.name, func(t *testing.T) {
			// Three runs on one store: the first meets echo errors on the
			// pages, Semantic Scholar, the arXiv API and OAI-PMH; the
			// second on the LLM (the targets the first left get there);
			// the third on the PDFs and GROBID (a source without its PDF
			// keeps its abstract), and publishes. Every service echoes in
			// its answers throughout.
			phases := []map[string]int{
				{sim.Arxiv: 6, sim.Ar5iv: 1, sim.S2: 2, sim.ArxivAPI: 1, sim.OAIPMH: 1},
				{l.service: 1},
				{sim.PDFHost: 3, sim.GrobidService: 2},
			}
			cfg := sim.WorldConfig{Seed: 26, Targets: 8, NoHTML: []int{1}, OpenAccess: &sim.OpenAccess{}}
			s := clitest.Sim(t, cfg, sim.Options{S2Key: plantedS2Key})
			dir := t.TempDir()
			env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch, "S2_API_KEY": plantedS2Key, l.keyEnv: plantedLLMKey,
				"HTTPS_PROXY": "http://curate:" + plantedProxyPwd + "@proxy.invalid:3128"}
			args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1",
				"--llm-base", s.URL(l.service), "--licenses", "--oai-base", s.URL(sim.OAIPMH), "--log", "debug",
				"--pdf-interval", "1ms")
			args = append(append(args, s.GrobidFlags()...), l.flags...)
			echoed := map[string]int{}
			for i, every := range phases {
				for _, name := range sim.Services {
					s.Service(name).SetEcho(sim.Echo{Keys: keys, Every: every[name], Answers: true})
				}
				s.Reset()
				code, stdout, stderr := clitest.RunWithPDFNet(t, s, env, args...)
				last := i == len(phases)-1
				switch {
				case !last && code != 1:
					t.Fatalf("run %d: exit %d, want 1 (echo errors)\n%s\n%s", i+1, code, stdout, stderr)
				case last && code != 0 && code != 1:
					t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, stdout, stderr)
				case !last && !strings.Contains(stdout, "REDACTED"):
					t.Errorf("run %d: no echo reached the failure list redacted:\n%s", i+1, stdout)
				}
				for name := range every {
					echoed[name] += s.Service(name).Stats().Echoed
				}
				e2eCheckSecrets(t, dir, stdout, stderr, last)
			}
			// The test proves something only if every service echoed an
			// error (and the checks above found the echoes redacted).
			for _, name := range []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH, l.service, sim.PDFHost, sim.GrobidService} {
				if echoed[name] == 0 {
					t.Errorf("%s echoed no error: the test proves nothing for it", name)
				}
			}
		})
	}
}

// e2eCheckSecrets looks for the planted keys in a run's stdout and
// stderr, status --json, show (of every item of the ledger, with and
// without --raw), every file of the store and, when published, the
// dataset.
func e2eCheckSecrets(t *testing.T, dir, stdout, stderr string, published bool) {
	t.Helper()
	findSecrets(t, "stdout", []byte(stdout))
	findSecrets(t, "stderr", []byte(stderr))
	code, out, errs := clitest.Run(t, nil, "status", "--store", dir+"/store", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errs)
	}
	findSecrets(t, "status --json", []byte(out+errs))
	items := e2eLedgerItems(t, dir+"/store")
	for _, raw := range []bool{false, true} {
		args := []string{"show", "--store", dir + "/store"}
		if raw {
			args = append(args, "--raw")
		}
		_, out, errs := clitest.Run(t, nil, append(args, items...)...)
		if !raw && !strings.Contains(out, "REDACTED") {
			t.Errorf("show names no redacted echo")
		}
		findSecrets(t, strings.Join(args, " "), []byte(out+errs))
	}
	redacted := 0
	e2eScanStore(t, dir+"/store", func(t *testing.T, where string, b []byte) {
		findSecrets(t, where, b)
		redacted += bytes.Count(b, []byte("REDACTED"))
	})
	if redacted == 0 {
		t.Errorf("no echo reached the store redacted: the store is not tested")
	}
	if !published {
		return
	}
	// The dataset's files, and its rows decoded (the shards are
	// compressed).
	pub, err := dataset.ReadDataset(context.Background(), dir+"/dataset")
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Instances) == 0 {
		t.Fatal("no instance published: the dataset was not looked at")
	}
	rows, _ := json.Marshal(pub)
	findSecrets(t, "the dataset's rows", rows)
	filepath.WalkDir(dir+"/dataset", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			findSecrets(t, p, b)
		}
		return err
	})
}

// e2eLedgerItems returns every item of a store's ledger, sorted.
func e2eLedgerItems(t *testing.T, dir string) []string {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counts, err := st.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for stage, byStatus := range counts {
		for status := range byStatus {
			es, err := st.ByStatus(context.Background(), stage, status)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				seen[e.Item] = true
			}
		}
	}
	var out []string
	for it := range seen {
		out = append(out, it)
	}
	sort.Strings(out)
	return out
}

// e2eScanStore calls check on every file of a store, blobs decompressed.
func e2eScanStore(t *testing.T, dir string, check func(t *testing.T, where string, b []byte)) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blobs := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if name, ok := strings.CutSuffix(d.Name(), ".zst"); ok {
			if b, err = st.Blob(store.Hash(name)); err != nil {
				return err
			}
			blobs++
		}
		check(t, p, b)
		return nil
	})
	if err != nil || blobs == 0 {
		t.Fatalf("scanned %d blobs: %v", blobs, err)
	}
}
