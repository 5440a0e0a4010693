package chaossmoke

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/internal/chaos"
)

// asCurate, set in a child's environment, makes this test binary run as
// curate: the chaos harness kills it as it would the real one.
const asCurate = "CURATE_TEST_AS_CURATE"

func TestMain(m *testing.M) {
	if os.Getenv(asCurate) == "1" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// A smoke of the chaos harness (make chaos runs it for real): three seeded
// rounds pass, and four rounds of sabotage are caught as failures: one
// that leaves the published dataset partial (a shard deleted behind
// curate's back), a planted-keys round that also plants a key curate is
// not given (what no redaction can know leaks, as every key would with
// redaction off), a quiet-injections round with the guards that catch
// quiet obedience turned off by flags, and a hostile-pages round whose
// pages are too small to be cut and whose bound on memory is too low to
// hold. (A hostile-pages round proper parses pages of 64 MB, too long for
// go test; make chaos runs it.)
func TestChaosSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs curate as a subprocess")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sabotage := chaos.Kind{Name: "sabotage", Run: func(r *chaos.Round) {
		shards := chaos.Shards(r.Home.Out, "train")
		if len(shards) == 0 {
			r.Failf("no shard to delete")
			return
		}
		os.Remove(shards[0])
	}}
	// What each sabotage's round must say.
	caught := map[string][]string{
		"sabotage":        {"wrong or partial"},
		"sabotage-keys":   {"a planted key got through"},
		"sabotage-guards": {"planted, obeyed"},
		"sabotage-pages":  {"conversion.truncated false", "peaked at"},
	}
	extra := []chaos.Kind{sabotage,
		{Name: "sabotage-keys", Run: chaos.PlantedKeys(true)},
		{Name: "sabotage-guards", Run: chaos.QuietInjections("--suspect-unsupported", "-1", "--gold-min-grounding", "-1")},
		{Name: "sabotage-pages", Run: chaos.HostilePages(1<<20, 1)}}
	// One round of each kind: the smoke, not the harness (make chaos). The
	// new kinds' rounds kill curate on the way too.
	kinds := []string{"lost-robots", "planted-keys", "quiet-injections"}
	for _, k := range extra {
		kinds = append(kinds, k.Name)
	}
	rep, err := chaos.Run(context.Background(), chaos.Config{
		Curate: []string{exe}, Env: []string{asCurate + "=1"}, Dir: t.TempDir(), Rounds: len(kinds), Seed: 3, Targets: 12,
		Kinds: kinds, Extra: extra,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Summary())
	if len(rep.Rounds) != len(kinds) {
		t.Fatalf("%d rounds ran, want %d", len(rep.Rounds), len(kinds))
	}
	for _, rr := range rep.Rounds {
		t.Logf("round %d (%s): %s, %d commands", rr.N, rr.Kind, rr.Wall.Round(10*time.Millisecond), rr.Commands)
		wants, sabotaged := caught[rr.Kind]
		if !sabotaged && len(rr.Failures) > 0 {
			t.Errorf("round %d (%s) failed: %s", rr.N, rr.Kind, strings.Join(rr.Failures, "; "))
		}
		for _, want := range wants {
			if !strings.Contains(strings.Join(rr.Failures, " "), want) {
				t.Errorf("the %s went unnoticed (want a failure saying %q): %+v", rr.Kind, want, rr)
			}
		}
	}
}
