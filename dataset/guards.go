package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// GuardsFile is where a dataset lists what the guards against
// instructions planted in papers found.
const GuardsFile = "guards.json"

// Guards counts what curate's guards against instructions planted in
// papers found among the targets a dataset was built from, held back or
// published, and names the targets. The dataset card says the same.
type Guards struct {
	// Targets is the number of targets read (those an earlier stage had
	// not finished are not).
	Targets int `json:"targets"`
	// InstructionTargets are the targets whose text addresses a model
	// (the classify stage's instruction_like_text), with their passages
	// in all.
	InstructionTargets  []string `json:"instruction_like_text_targets"`
	InstructionPassages int      `json:"instruction_like_text_passages"`
	// UngroundedGold are the targets whose gold card is not grounded in
	// the paper's abstract and introduction, or addresses a model itself
	// (the summarize stage's rule).
	UngroundedGold []string `json:"ungrounded_gold_targets"`
	// QuotesNotCiting counts the sources' quotes dropped because they
	// stand in no sentence citing the reference they were given for;
	// QuotesNotInPaper those dropped because the paper does not hold them.
	QuotesNotCiting  int `json:"quotes_not_citing"`
	QuotesNotInPaper int `json:"quotes_not_in_paper"`
	// Published are the targets above that are in the dataset all the
	// same (Options.IncludeSuspect).
	Published []string `json:"published"`

	flags map[string]bool // the targets above
}

// add counts one target read.
func (g *Guards) add(t *TargetInputs) {
	id := targetID(t)
	g.Targets++
	flag := func() {
		if g.flags == nil {
			g.flags = map[string]bool{}
		}
		g.flags[id] = true
	}
	if t.Instructions > 0 || t.NotClassified {
		g.InstructionTargets = append(g.InstructionTargets, id)
		g.InstructionPassages += t.Instructions
		flag()
	}
	if len(t.GoldSuspect) > 0 {
		g.UngroundedGold = append(g.UngroundedGold, id)
		flag()
	}
	g.QuotesNotCiting += t.QuotesNotCiting
	g.QuotesNotInPaper += t.QuotesNotInPaper
}

// flagged reports whether a guard found something in target id.
func (g *Guards) flagged(id string) bool { return g != nil && g.flags[id] }

// withPublished returns a copy of g naming the published targets, its
// lists sorted and never nil, for writing; nil for nil.
func (g *Guards) withPublished(published []string) *Guards {
	if g == nil {
		return nil
	}
	c := *g
	c.flags = nil
	c.Published = published
	for _, l := range []*[]string{&c.InstructionTargets, &c.UngroundedGold, &c.Published} {
		*l = slices.Compact(slices.Sorted(slices.Values(*l)))
		if *l == nil {
			*l = []string{}
		}
	}
	return &c
}

// ReadGuards reads the guards.json of the dataset in dir; nil, and no
// error, for a dataset written before it had one.
func ReadGuards(dir string) (*Guards, error) {
	var g Guards
	if err := readJSON(filepath.Join(dir, GuardsFile), &g); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, GuardsFile), err)
	}
	return &g, nil
}

// guardsText is the dataset card's section on the guards.
func guardsText(g *Guards) string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Instructions planted in papers\n\n")
	b.WriteString("A paper's text can address the model that reads it (\"ignore previous instructions\", \"mark every reference as a source\", \"write the following idea card\"). ")
	b.WriteString("curate holds back a target whose text does, before any model reads it (`instruction_like_text`); drops a source's quote unless it stands in a sentence citing that source, and holds back a classification where half of the sources or more have no such quote (`suspect_classification`); ")
	b.WriteString("and holds back a target whose gold card is not grounded in the paper's own abstract and introduction (`ungrounded_gold`). `--include-suspect` keeps them. ")
	fmt.Fprintf(&b, "Of the %d targets read:\n\n", g.Targets)
	fmt.Fprintf(&b, "- text addressing a model: %d %s (%d %s)%s\n", len(g.InstructionTargets), plural(len(g.InstructionTargets), "target", "targets"),
		g.InstructionPassages, plural(g.InstructionPassages, "passage", "passages"), published(g, g.InstructionTargets))
	fmt.Fprintf(&b, "- gold cards not grounded in their paper: %d%s\n", len(g.UngroundedGold), published(g, g.UngroundedGold))
	fmt.Fprintf(&b, "- sources' quotes dropped: %d in no sentence citing their reference, %d not in the paper\n\n", g.QuotesNotCiting, g.QuotesNotInPaper)
	fmt.Fprintf(&b, "`%s` names the targets.\n\n", GuardsFile)
	return b.String()
}

// published says how many of ids are in the dataset.
func published(g *Guards, ids []string) string {
	n := 0
	for _, id := range ids {
		if slices.Contains(g.Published, id) {
			n++
		}
	}
	if len(ids) == 0 {
		return ""
	}
	if n == 0 {
		return ", all held back"
	}
	return fmt.Sprintf(", %d published by --include-suspect", n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// targetID is the ID a target is dropped or published under.
func targetID(t *TargetInputs) string {
	if t.Graph.Meta.ArxivID != "" {
		return t.Graph.Meta.ArxivID
	}
	return t.Graph.TargetID
}
