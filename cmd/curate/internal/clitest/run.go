// Package clitest runs curate from tests: in process (Run, RunEnv, with
// the simulated services of package sim or the demo corpus's), or as the
// built binary (Build, Start), and reads back what it wrote (Dataset,
// Ledger, Shards). The tests of cmd/curate/internal/cli and
// cmd/curate/internal/e2e/... share these; a helper one package alone
// uses stays in that package's test files.
package clitest

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/sim"
)

// Run runs curate with args and the given environment (nil: empty) and
// returns its exit status, stdout and stderr.
func Run(t testing.TB, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return RunEnv(t, cli.Env{Getenv: func(k string) string { return env[k] }}, args...)
}

// RunEnv runs curate with e as its environment (a nil Getenv reads an
// empty environment, a nil Stdin an empty input), its stdout and stderr
// captured, and returns its exit status, stdout and stderr.
func RunEnv(t testing.TB, e cli.Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e.Stdout, e.Stderr = &out, &errb
	if e.Stdin == nil {
		e.Stdin = strings.NewReader("")
	}
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	code := cli.Run(context.Background(), &e, args)
	return code, out.String(), errb.String()
}

// RunWithPDFNet runs curate as Run does, its PDF downloader reaching
// the simulated PDF host: sim's names resolve as sim.PDFNet says, and the
// PDF host's loopback address may be dialled besides public ones.
func RunWithPDFNet(t testing.TB, s *sim.Servers, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	resolve, permit := s.PDFNet()
	return RunEnv(t, cli.Env{
		Getenv:       func(k string) string { return env[k] },
		PDFResolve:   resolve,
		PDFAllowAddr: func(a netip.Addr) bool { return a == permit || oapdf.PublicAddr(a) },
	}, args...)
}

// Shards returns the Parquet shards of a published dataset by file name;
// a dataset without one fails t.
func Shards(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no parquet shards in %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// WriteTargets writes a targets file of ids (with a comment line, as a
// user's would have) and returns its path.
func WriteTargets(t testing.TB, ids []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(p, []byte("# demo targets\n"+strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
