package clitest

// Helpers of the end-to-end tests that run curate against the simulated
// services of package sim.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// Epoch fixes the dataset's created_at, so two runs write the same
// bytes.
const Epoch = "1767225600"

// Sim starts the services of a world; they stop when the test ends.
// The LLMs answer curate's prompts as a diligent model (sim.CurateModel)
// unless opt declares another hook.
func Sim(t testing.TB, cfg sim.WorldConfig, opt sim.Options) *sim.Servers {
	t.Helper()
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opt.LLMAnswer == nil {
		opt.LLMAnswer = sim.CurateModel
	}
	s, err := sim.Start(w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// RunArgs returns the arguments of `curate run` over the world's
// targets, into store and out, with extra flags after.
func RunArgs(t testing.TB, s *sim.Servers, storeDir, out string, extra ...string) []string {
	t.Helper()
	targets := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(targets, s.World.TargetsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--store", storeDir, "--out", out, "--targets", targets}, s.Flags()...)
	return append(args, extra...)
}

// Build builds the curate binary into a temporary directory.
func Build(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "curate")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/groundwork/curate/cmd/curate")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Dataset returns the target IDs in a published dataset and its
// dropped targets by ID.
func Dataset(t testing.TB, dir string) (in map[string]bool, dropped map[string]dataset.Dropped) {
	t.Helper()
	pub, err := dataset.ReadDataset(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	in, dropped = map[string]bool{}, map[string]dataset.Dropped{}
	for _, inst := range pub.Instances {
		in[inst.Target.ArxivID] = true
	}
	for _, d := range pub.Dropped {
		dropped[d.TargetID] = d
	}
	return in, dropped
}

// Ledger returns the ledger entries of a store's items by item.
func Ledger(t testing.TB, dir string, items []string) map[string][]store.Entry {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string][]store.Entry{}
	for _, it := range items {
		es, err := st.Entries(context.Background(), it)
		if err != nil {
			t.Fatal(err)
		}
		out[it] = es
	}
	return out
}

// Failures parses the "ID\tstage\tfailed\treason" lines curate run
// prints on stdout.
func Failures(stdout string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) == 4 && f[2] == "failed" && f[3] != "" {
			out[f[0]] = append(out[f[0]], f[1]+": "+f[3])
		}
	}
	return out
}

// Calls returns every service's calls.
func Calls(s *sim.Servers) map[string][]sim.Call {
	out := map[string][]sim.Call{}
	for _, name := range sim.Services {
		out[name] = s.Service(name).Calls()
	}
	return out
}

// SourceLevels returns, per source paper of a published dataset (by
// S2 paper ID), the text levels its cards were written at.
func SourceLevels(t testing.TB, dir string) map[string][]string {
	t.Helper()
	pub, err := dataset.ReadDataset(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, in := range pub.Instances {
		for _, s := range in.Sources {
			out[s.S2PaperID] = append(out[s.S2PaperID], s.TextLevel)
		}
	}
	return out
}
