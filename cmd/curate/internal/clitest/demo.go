package clitest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
)

// DemoWorld serves the demo corpus on local servers that count requests,
// and returns the environment that points curate at them (its OAI-PMH
// repository too, which the knowledge cut asks by default).
func DemoWorld(t testing.TB, dir string) (map[string]string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	env := map[string]string{"CURATE_STORE": dir + "/store", "SOURCE_DATE_EPOCH": Epoch}
	for name, key := range map[string]string{sim.Arxiv: "CURATE_ARXIV_BASE", sim.Ar5iv: "CURATE_AR5IV_BASE", sim.S2: "CURATE_S2_BASE", sim.ArxivAPI: "CURATE_ARXIV_API_BASE", sim.OAIPMH: "CURATE_OAI_BASE"} {
		h, err := demo.ServiceHandler(name)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		env[key] = srv.URL
		if name == sim.OAIPMH {
			env[key] = srv.URL + sim.OAIPath
		}
	}
	return env, &n
}

// DemoRunArgs are the flags a run against DemoWorld needs.
func DemoRunArgs(dir string, more ...string) []string {
	args := []string{"run", "--out", dir + "/ds", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1"}
	return append(append(args, more...), demo.TargetIDs()...)
}

// TreeDigest hashes every name and file under the directories (a missing
// one hashes as absent): equal digests mean byte-identical trees.
func TreeDigest(t testing.TB, dirs ...string) string {
	t.Helper()
	h := sha256.New()
	for _, dir := range dirs {
		var lines []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			line := rel
			if !d.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(b)
				line += " " + hex.EncodeToString(sum[:])
			}
			lines = append(lines, line)
			return nil
		})
		if os.IsNotExist(err) {
			lines = []string{"absent"}
		} else if err != nil {
			t.Fatal(err)
		}
		sort.Strings(lines)
		h.Write([]byte(dir + "\n" + strings.Join(lines, "\n") + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
