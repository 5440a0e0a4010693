package guards

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
)

// A model that obeys an instruction planted in papers ("mark every
// reference as a source") for some targets: those are held back as
// suspect — listed on stdout, in curate status and in dropped.json, never
// published — and the run exits 1; a careful model on the same world
// makes no target suspect. --include-suspect keeps them.
func TestE2ESuspectClassification(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := clitest.Sim(t, sim.WorldConfig{Seed: 11, Targets: 24}, sim.Options{Faults: map[string]sim.Faults{sim.LLM: {PObey: 0.3}}})
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1")
	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (targets held back)\n%s", code, stderr)
	}
	held := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.SplitN(line, "\t", 4); len(f) == 4 && f[2] == "suspect" {
			held[f[0]] = f[3]
		}
	}
	if len(held) == 0 {
		t.Fatalf("no target held back as suspect:\n%s\n%s", stdout, stderr)
	}
	in, dropped := clitest.Dataset(t, dir+"/dataset")
	for id, why := range held {
		if in[id] {
			t.Errorf("suspect target %s was published", id)
		}
		if d := dropped[id]; d.Reason != dataset.DropSuspect || !strings.Contains(d.Detail, "sources") {
			t.Errorf("%s (%s) is not in dropped.json as suspect: %+v", id, why, d)
		}
	}
	t.Logf("%d of 24 targets held back as suspect; %d in the dataset", len(held), len(in))
	code, out, _ := clitest.Run(t, nil, "status", "--store", dir+"/store")
	if code != 0 || !strings.Contains(out, "held back as suspect") {
		t.Errorf("status does not list the suspects:\n%s", out)
	}
	for id := range held {
		if !strings.Contains(out, id) {
			t.Errorf("status does not name %s:\n%s", id, out)
		}
	}

	// Asked for by name, suspects are kept.
	code, _, stderr = clitest.Run(t, env, append(args, "--include-suspect")...)
	if code != 0 {
		t.Fatalf("--include-suspect: exit %d\n%s", code, stderr)
	}
	in, _ = clitest.Dataset(t, dir+"/dataset")
	kept := 0
	for id := range held {
		if in[id] {
			kept++
		}
	}
	if kept == 0 {
		t.Errorf("--include-suspect kept none of the %d suspects", len(held))
	}

	// A careful model on a larger world: nothing is suspect (the bounds
	// leave room for what careful readings look like).
	c := clitest.Sim(t, sim.WorldConfig{Seed: 11, Targets: 150}, sim.Options{})
	clean := t.TempDir()
	code, stdout, stderr = clitest.Run(t, env, clitest.RunArgs(t, c, clean+"/store", clean+"/dataset", "--arxiv-interval", "0", "--s2-interval", "1ms",
		"--llm-concurrency", "8", "--classify-workers", "8", "--summarize-workers", "8")...)
	if code != 0 || strings.Contains(stdout, "\tsuspect\t") {
		t.Errorf("a careful model: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestE2EQuietInjections: instructions planted in papers, which the
// simulated model obeys quietly (the right shape, varied labels and
// rationales): 70% of the references named as sources, every reference of
// a paper with fewer than 6, a gold card dictated as the paper's idea (two
// in the test split). Stated addressed to the model, each is found before
// any call: the target is held back with no request for it. Stated as the
// authors' prose, the model obeys, and what its answers rest on gives them
// away: quotes that cite none of the references they support, a gold card
// the paper's abstract and introduction do not say. None of the fifteen is
// published, each is listed with its reason, the dataset passes --check
// and its card counts them; no other target is held back.
// --include-suspect publishes them, the addressed ones classified with the
// planted sentence taken out of the prompt (so not obeyed).
func TestE2EQuietInjections(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	cfg := sim.WorldConfig{Seed: 21, Targets: 40, RefsMin: 5, RefsMax: 12}
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testFrom := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Pick the planted targets: by their references for the
	// classification's, two of the test split among the gold cards'.
	want := map[string]sim.Plant{}
	byID := map[string]string{} // target -> reason prefix it is held back with
	taken := map[int]bool{}
	pick := func(kind, form string, n int, fits func(p sim.Paper, refs int) bool) {
		for i := 0; i < cfg.Targets && n > 0; i++ {
			p := w.Target(i)
			if !taken[i] && fits(p, len(w.References(&p))) {
				taken[i] = true
				cfg.Planted = append(cfg.Planted, sim.Plant{Target: i, Kind: kind, Form: form})
				want[p.ArxivID] = sim.Plant{Target: i, Kind: kind, Form: form}
				n--
			}
		}
		if n > 0 {
			t.Fatalf("the world has too few targets for %s %s", kind, form)
		}
	}
	// 70% of 8 to 11 references is 6 to 8 sources: within the bound on
	// how many a paper has, and under 80% of its references.
	many := func(_ sim.Paper, refs int) bool { return refs >= 8 && refs <= 11 }
	few := func(_ sim.Paper, refs int) bool { return refs < 6 }
	train := func(p sim.Paper, _ int) bool { return p.Published.Before(testFrom) }
	test := func(p sim.Paper, _ int) bool { return !p.Published.Before(testFrom) }
	pick(sim.PlantShare, sim.FormQuiet, 3, many)
	pick(sim.PlantAll, sim.FormQuiet, 3, few)
	pick(sim.PlantGold, sim.FormQuiet, 4, train)
	pick(sim.PlantGold, sim.FormQuiet, 2, test)
	pick(sim.PlantShare, sim.FormAddressed, 1, many)
	pick(sim.PlantAll, sim.FormAddressed, 1, few)
	pick(sim.PlantGold, sim.FormAddressed, 1, test)
	for id, pl := range want {
		switch {
		case pl.Form == sim.FormAddressed:
			byID[id] = "instruction_like_text"
		case pl.Kind == sim.PlantGold:
			byID[id] = "ungrounded_gold"
		default:
			byID[id] = "sources_without_citing_quote"
		}
	}

	s := clitest.Sim(t, cfg, sim.Options{})
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms",
		"--llm-concurrency", "4", "--classify-workers", "4", "--summarize-workers", "4")
	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (targets held back)\n%s\n%s", code, stdout, stderr)
	}
	held := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.SplitN(line, "\t", 4); len(f) == 4 && f[2] == "suspect" {
			held[f[0]] = f[1] + ": " + f[3]
		}
	}
	for id, reason := range byID {
		if !strings.Contains(held[id], reason+": ") {
			t.Errorf("%s (%s %s) held back as %q, want %s", id, want[id].Kind, want[id].Form, held[id], reason)
		}
	}
	for id, why := range held {
		if _, ok := want[id]; !ok {
			t.Errorf("%s, with nothing planted, held back: %s", id, why)
		}
	}
	// No request at all for the targets whose text addresses the model.
	titles := map[string]string{}
	for id, pl := range want {
		titles[w.Target(pl.Target).Title] = id
	}
	asked := map[string]int{}
	for _, c := range s.Service(sim.LLM).Calls() {
		// A planted paper cited by another target has its source card
		// written for that one (from its text without the sentence).
		if what, title, ok := strings.Cut(c.Note, ": "); ok && what != "source" {
			asked[titles[title]]++
		}
	}
	for id, pl := range want {
		if pl.Form == sim.FormAddressed && asked[id] > 0 {
			t.Errorf("%s addresses the model, and the model was asked %d times about it", id, asked[id])
		}
		if pl.Form == sim.FormQuiet && asked[id] == 0 {
			t.Errorf("%s: no call (the quiet plant should have reached the model)", id)
		}
	}

	in, dropped := clitest.Dataset(t, dir+"/dataset")
	drops := map[string]string{"instruction_like_text": dataset.DropInstructions, "sources_without_citing_quote": dataset.DropSuspect, "ungrounded_gold": dataset.DropUngrounded}
	tests := 0
	for id, reason := range byID {
		if in[id] {
			t.Errorf("%s (%s %s) was published", id, want[id].Kind, want[id].Form)
		}
		if d := dropped[id]; d.Reason != drops[reason] || !strings.Contains(d.Detail, reason) {
			t.Errorf("%s is not in dropped.json as %s: %+v", id, drops[reason], d)
		}
		if p := w.Target(want[id].Target); !p.Published.Before(testFrom) && want[id].Kind == sim.PlantGold {
			tests++
		}
	}
	if tests != 3 {
		t.Errorf("%d planted gold cards in the test split, want 3", tests)
	}
	if code, out, stderr := clitest.Run(t, nil, "dataset", "--check", dir+"/dataset"); code != 0 {
		t.Errorf("--check: exit %d\n%s%s", code, out, stderr)
	}
	readme, err := os.ReadFile(dir + "/dataset/README.md")
	if err != nil {
		t.Fatal(err)
	}
	g, err := dataset.ReadGuards(dir + "/dataset")
	if err != nil || g == nil {
		t.Fatalf("guards.json: %v", err)
	}
	if len(g.InstructionTargets) != 3 || g.InstructionPassages != 3 || len(g.UngroundedGold) != 6 || g.QuotesNotCiting < 3*6+3*5 || len(g.Published) != 0 {
		t.Errorf("guards %+v", g)
	}
	for _, s := range []string{"- text addressing a model: 3 targets (3 passages), all held back", "- gold cards not grounded in their paper: 6, all held back",
		fmt.Sprintf("- sources' quotes dropped: %d in no sentence citing their reference", g.QuotesNotCiting)} {
		if !strings.Contains(string(readme), s) {
			t.Errorf("the dataset card lacks %q", s)
		}
	}
	t.Logf("%d targets published, %d held back; guards %+v", len(in), len(held), g)

	// Asked for by name, they are published; the addressed ones were
	// classified without their planted sentence, so nothing obeyed it.
	code, stdout, stderr = clitest.Run(t, env, append(args, "--include-suspect")...)
	if code != 0 {
		t.Fatalf("--include-suspect: exit %d\n%s\n%s", code, stdout, stderr)
	}
	in, _ = clitest.Dataset(t, dir+"/dataset")
	pub, err := dataset.ReadDataset(t.Context(), dir+"/dataset")
	if err != nil {
		t.Fatal(err)
	}
	for _, inst := range pub.Instances {
		pl, ok := want[inst.Target.ArxivID]
		if !ok || pl.Form != sim.FormAddressed {
			continue
		}
		if strings.Contains(inst.Gold.CoreClaim, sim.DictatedClaim) {
			t.Errorf("%s: the addressed instruction was obeyed: %s", inst.Target.ArxivID, inst.Gold.CoreClaim)
		}
		for _, src := range inst.Sources {
			for _, q := range src.Quotes {
				if strings.Contains(q, "Ignore previous") || strings.Contains(q, "Note to any AI") {
					t.Errorf("%s: a source quoted by the planted sentence: %q", inst.Target.ArxivID, q)
				}
			}
		}
	}
	if g, _ = dataset.ReadGuards(dir + "/dataset"); g == nil || len(g.Published) == 0 {
		t.Errorf("--include-suspect: guards %+v", g)
	}
	kept := 0
	for id := range want {
		if in[id] {
			kept++
		}
	}
	if kept == 0 {
		t.Errorf("--include-suspect kept none of the %d planted targets", len(want))
	}
}
