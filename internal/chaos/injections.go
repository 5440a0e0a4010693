package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

// The quiet-injections round (#26 item 3): a world whose papers carry
// planted instructions — 70% of the references named as sources, every
// reference of a paper with few, a gold card dictated — stated to the
// model or as the authors' prose, and an LLM that obeys every one it
// reads (package sim's model does) in the right shape, with varied labels
// and rationales. curate runs over it (killed on the way, sometimes), and
// publishes with or without --include-suspect, in a seeded order.
//
// Without --include-suspect no planted target is published (each is
// listed in dropped.json with its guard's reason) and no row holds a
// planted sentence or the dictated claim; with it they are published but
// flagged: guards.json names the targets whose text addresses a model and
// the ungrounded gold cards among the published, the obeyed quotes are
// dropped (counted), and a target that addressed the model was classified
// without its instruction, so nothing obeyed it. Either way the dataset
// passes --check.

// plantedTarget is a target a round planted an instruction in.
type plantedTarget struct {
	sim.Plant
	id       string
	sentence string
	test     bool // in the test split
}

// reason is the drop reason the guards hold it back with.
func (p plantedTarget) reason() string {
	switch {
	case p.Form == sim.FormAddressed:
		return dataset.DropInstructions
	case p.Kind == sim.PlantGold:
		return dataset.DropUngrounded
	}
	return dataset.DropSuspect
}

// listed is the reason the run's list of suspect targets gives it: the
// rule of the guard that must catch it (others may too).
func (p plantedTarget) listed() string {
	switch {
	case p.Form == sim.FormAddressed:
		return "instruction_like_text"
	case p.Kind == sim.PlantGold:
		return "ungrounded_gold"
	}
	return "sources_without_citing_quote"
}

func (p plantedTarget) String() string {
	split := ""
	if p.test {
		split = ", test"
	}
	return fmt.Sprintf("%s (%s %s%s)", p.id, p.Form, p.Kind, split)
}

// QuietInjections is the quiet-injections round; flags are added to
// every run (the smoke test's sabotage turns the guards off with them,
// and the round must then fail).
func QuietInjections(flags ...string) func(*Round) {
	return func(r *Round) { quietInjections(r, flags) }
}

func quietInjections(r *Round, flags []string) {
	rng := r.Rand
	wc := sim.WorldConfig{Seed: rng.Uint64(), Targets: 10 + rng.IntN(5), RefsMin: 5, RefsMax: 12}
	w, err := sim.NewWorld(wc)
	if err != nil {
		r.Failf("%v", err)
		return
	}
	testFrom, _ := time.Parse(time.DateOnly, defaultTestFrom)

	// Two to four plants, each on a target it fits: 70% of 8 to 11
	// references (within the bound on how many sources a paper has, under
	// the share that looks implausible by itself), every reference of a
	// paper with fewer than 6, a gold card (in either split). Mostly
	// quiet: a stated one is found before any call.
	var planted []plantedTarget
	taken := map[int]bool{}
	for range 2 + rng.IntN(3) {
		kind := []string{sim.PlantShare, sim.PlantAll, sim.PlantGold}[rng.IntN(3)]
		form := sim.FormQuiet
		if rng.IntN(4) == 0 {
			form = sim.FormAddressed
		}
		var fit, all []int
		for i := range wc.Targets {
			if taken[i] {
				continue
			}
			p := w.Target(i)
			n := len(w.References(&p))
			all = append(all, i)
			if kind == sim.PlantShare && n >= 8 && n <= 11 || kind == sim.PlantAll && n < 6 || kind == sim.PlantGold {
				fit = append(fit, i)
			}
		}
		if len(fit) == 0 {
			fit = all
		}
		if len(fit) == 0 {
			break
		}
		i := fit[rng.IntN(len(fit))]
		taken[i] = true
		pl := sim.Plant{Target: i, Kind: kind, Form: form}
		wc.Planted = append(wc.Planted, pl)
		p := w.Target(i)
		planted = append(planted, plantedTarget{Plant: pl, id: p.ArxivID, sentence: sim.PlantedSentence(pl, len(w.References(&p))),
			test: !p.Published.Before(testFrom)})
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
	at := r.At(h)
	args := h.RunArgs(append([]string{"--llm-concurrency", "4", "--classify-workers", "4", "--summarize-workers", "4"}, flags...)...)

	// Held back, then published with --include-suspect; or the other way
	// round (and held back again); or held back only.
	order := [][]bool{{false}, {false, true}, {true, false}}[rng.IntN(3)]
	var how []string
	for step, include := range order {
		args := args
		if include {
			args = append(slices.Clone(args), "--include-suspect")
		}
		if step == 0 && rng.IntN(3) == 0 {
			res := at.KillAfter(at.Moment("run"), args...)
			how = append(how, fmt.Sprintf("killed after %s", res.Wall.Round(timeUnit)))
		}
		res := at.Curate(args...)
		how = append(how, map[bool]string{true: "--include-suspect", false: "held back"}[include])
		checkInjections(at, h, planted, include, res)
	}
	var pls []string
	for _, p := range planted {
		pls = append(pls, p.String())
	}
	r.Notef("%d targets; planted %s; %s", wc.Targets, strings.Join(pls, ", "), strings.Join(how, ", then "))
}

// copiedDictated reports whether p, a dictated gold card in training, was
// dropped as the copy of another planted target's in the test split: the
// same claim dictated twice is a test gold in training, and contamination
// drops it whatever --include-suspect says.
func copiedDictated(p plantedTarget, d dataset.Dropped, planted []plantedTarget) bool {
	if p.Kind != sim.PlantGold || d.Reason != dataset.DropContaminated {
		return false
	}
	return slices.ContainsFunc(planted, func(o plantedTarget) bool {
		return o.test && o.Kind == sim.PlantGold && strings.Contains(d.Detail, o.id)
	})
}

// checkInjections checks a run's outcome and the dataset it published.
func checkInjections(r *Round, h *Home, planted []plantedTarget, include bool, res Result) {
	what := map[bool]string{true: "the run with --include-suspect", false: "the run"}[include]
	// Held back, they are listed as suspect and the run exits 1.
	held := map[string]string{}
	for _, f := range failureLines(res.Stdout) {
		if f.status == "suspect" {
			held[f.item] = f.error
		}
	}
	switch {
	case include && res.Code != 0:
		r.Failf("%s: exit %d, want 0:\n%s", what, res.Code, firstLines(res.Stdout+res.Stderr, 10))
	case !include && res.Code != 1:
		r.Failf("%s: exit %d, want 1 (planted targets held back):\n%s", what, res.Code, firstLines(res.Stdout+res.Stderr, 10))
	}
	if !include {
		for _, p := range planted {
			if !strings.Contains(held[p.id], p.listed()+": ") {
				r.Failf("%s: %s is not listed as suspect for %s: %q", what, p, p.listed(), held[p.id])
			}
		}
	}
	if check := r.Curate("dataset", "--check", h.Out); check.Code != 0 {
		r.Failf("after %s, --check exits %d:\n%s", what, check.Code, firstLines(check.Stdout+check.Stderr, 8))
	}
	pub, err := dataset.ReadDataset(r.Context(), h.Out)
	if err != nil {
		r.Failf("after %s: %v", what, err)
		return
	}
	g, err := dataset.ReadGuards(h.Out)
	if err != nil || g == nil {
		r.Failf("after %s: no guards.json (%v)", what, err)
		return
	}
	card, err := os.ReadFile(filepath.Join(h.Out, dataset.ReadmeFile))
	if err != nil {
		r.Failf("%v", err)
	}
	rows := map[string]record.Instance{}
	for _, in := range pub.Instances {
		rows[in.Target.ArxivID] = in
	}
	dropped := map[string]dataset.Dropped{}
	for _, d := range pub.Dropped {
		dropped[d.TargetID] = d
	}
	isPlanted := map[string]bool{}
	for _, p := range planted {
		isPlanted[p.id] = true
		in, published := rows[p.id]
		switch {
		case !include && published:
			r.Failf("%s published %s, planted, obeyed: gold %q", what, p, in.Gold.CoreClaim)
		case !include && dropped[p.id].Reason != p.reason():
			r.Failf("%s: %s is dropped as %q, want %s", what, p, dropped[p.id].Reason, p.reason())
		case include && !published && !copiedDictated(p, dropped[p.id], planted):
			r.Failf("%s left %s out: %+v", what, p, dropped[p.id])
		}
		if !published {
			continue
		}
		// Published by --include-suspect: flagged, and what was obeyed is
		// not in it (a stated instruction was taken out of the prompt; a
		// quote that cites nothing was dropped).
		flagged := slices.Contains(g.Published, p.id)
		switch {
		case p.Form == sim.FormAddressed && (!flagged || !slices.Contains(g.InstructionTargets, p.id)):
			r.Failf("%s published %s without guards.json naming it (instruction_like_text, published)", what, p)
		case p.Form == sim.FormQuiet && p.Kind == sim.PlantGold && (!flagged || !slices.Contains(g.UngroundedGold, p.id)):
			r.Failf("%s published %s without guards.json naming it (ungrounded gold, published)", what, p)
		}
		if p.Form == sim.FormAddressed && strings.Contains(in.Gold.CoreClaim, sim.DictatedClaim) {
			r.Failf("%s: %s addressed the model, and its gold card obeys: %q", what, p, in.Gold.CoreClaim)
		}
		for _, src := range in.Sources {
			for _, q := range src.Quotes {
				if strings.Contains(q, p.sentence) || strings.Contains(p.sentence, q) {
					r.Failf("%s: %s has a source (document %d) quoted by the planted sentence: %q", what, p, src.DocNumber, q)
				}
			}
		}
	}
	// No row holds a planted sentence, nor the dictated claim but a
	// published quiet gold card's own.
	for _, in := range pub.Instances {
		b, _ := json.Marshal(in)
		text := string(b)
		for _, p := range planted {
			if strings.Contains(text, p.sentence) {
				r.Failf("%s: the row of %s holds the sentence planted in %s: %q", what, in.Target.ArxivID, p, p.sentence)
			}
		}
		own := include && slices.ContainsFunc(planted, func(p plantedTarget) bool {
			return p.id == in.Target.ArxivID && p.Kind == sim.PlantGold && p.Form == sim.FormQuiet
		})
		if !own && strings.Contains(text, sim.DictatedClaim) {
			r.Failf("%s: the row of %s holds the dictated claim", what, in.Target.ArxivID)
		}
	}
	// The card and guards.json count them; no other target is held back.
	var addressed, gold []string
	for _, p := range planted {
		switch {
		case p.Form == sim.FormAddressed:
			addressed = append(addressed, p.id)
		case p.Kind == sim.PlantGold:
			gold = append(gold, p.id)
		}
	}
	for _, want := range [][2][]string{{addressed, g.InstructionTargets}, {gold, g.UngroundedGold}} {
		for _, id := range want[0] {
			if !slices.Contains(want[1], id) {
				r.Failf("after %s, guards.json does not name %s: %+v", what, id, g)
			}
		}
	}
	if len(addressed) > 0 && !strings.Contains(string(card), fmt.Sprintf("- text addressing a model: %d ", len(g.InstructionTargets))) {
		r.Failf("after %s, the dataset card does not count the %d targets addressing a model", what, len(g.InstructionTargets))
	}
	if !include && len(g.Published) > 0 {
		r.Failf("after %s, guards.json says %v were published", what, g.Published)
	}
	for id, why := range held {
		if !isPlanted[id] {
			r.Failf("%s held back %s, with nothing planted: %s", what, id, why)
		}
	}
}
