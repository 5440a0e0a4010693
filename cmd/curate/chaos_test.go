package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/chaos"
)

// asCurate, set in a child's environment, makes this test binary run as
// curate: the chaos harness kills it as it would the real one.
const asCurate = "CURATE_TEST_AS_CURATE"

func TestMain(m *testing.M) {
	if os.Getenv(asCurate) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// A smoke of the chaos harness (make chaos runs it for real): three seeded
// rounds pass, and a round that leaves the published dataset partial (a
// shard deleted behind curate's back) is caught as a failure.
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
	rep, err := chaos.Run(context.Background(), chaos.Config{
		Curate: []string{exe}, Env: []string{asCurate + "=1"}, Dir: t.TempDir(), Rounds: 4, Seed: 3, Targets: 12,
		Kinds: []string{"kill-run", "lost-robots", "copied-gold", "sabotage"}, Extra: []chaos.Kind{sabotage},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Summary())
	if len(rep.Rounds) != 4 {
		t.Fatalf("%d rounds ran, want 4", len(rep.Rounds))
	}
	for _, rr := range rep.Rounds {
		failed := len(rr.Failures) > 0
		switch {
		case rr.Kind == "sabotage" && (!failed || !strings.Contains(strings.Join(rr.Failures, " "), "wrong or partial")):
			t.Errorf("the sabotage went unnoticed: %+v", rr)
		case rr.Kind != "sabotage" && failed:
			t.Errorf("round %d (%s) failed: %s", rr.N, rr.Kind, strings.Join(rr.Failures, "; "))
		}
	}
}
