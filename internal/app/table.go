package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/summarize"
)

// table is the stage table: the per-target stages, in the order a run
// takes them, each wired to a's store, clients and options. Everything
// that runs, lists, sizes, estimates or reads the stages reads this
// table; it is the one place that names them. Built over a zero App it
// gives the declarations alone (Stages, Names).
func table(a *App) []pipeline.Stage {
	so := a.cfg.Stages
	return []pipeline.Stage{
		&fetch.Stage{Fetcher: a.Fetcher, Ready: a.prepareFetch, Learn: a.archives.learn},
		&citegraph.Row{Runner: &citegraph.Runner{Store: a.Store, S2: a.s2, ArxivAPI: a.arxivAPI, Log: a.Log, Refresh: so.Refresh,
			Skip: a.Fetcher.KnownMissing, OpenAccess: a.cfg.PDF.GrobidBase != ""}, Drain: a.cfg.Drain, Learn: a.archives.learn},
		&classify.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Budget: so.ClassifyBudget, Log: a.Log, Meter: a.Meter,
			Force: so.Force, Plausibility: so.Plausibility, IncludeSuspect: so.IncludeSuspect},
		&fetch.Sources{Fetcher: a.Fetcher, Store: a.Store, Lifecycle: a.lifecycle, IncludeSuspect: so.IncludeSuspect, Ready: a.prepareFetch},
		a.pdfsRow(),
		&summarize.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Log: a.Log, Meter: a.Meter, Force: so.Force, Budget: so.SummarizeBudget,
			MinGrounding: so.MinGrounding, IncludeSuspect: so.IncludeSuspect},
	}
}

// Dataset is the name of the dataset stage, which runs over the store
// once the targets are through (see BuildDataset).
const Dataset = "dataset"

// datasetDecl is the dataset stage's declaration: what it reads of each
// target, besides what the per-target stages add to an instance
// (pipeline.Decl.Field).
func datasetDecl() pipeline.Decl {
	return pipeline.Decl{Name: Dataset, About: "Parquet splits, contamination proof, report",
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name(), record.Summaries.Name()},
		Optional: []string{record.Documents.Name(), record.PaperLicenses.Name()}}
}

// Stages returns the declarations of every stage, in the order a run
// takes them: the per-target stages of the table, then the dataset.
// curate run, the per-stage commands, --stages, the worker flags, curate
// status, the run summary, the estimate, the dataset's inputs and the
// attribution of a dropped target to the stage that failed it all read
// them.
func Stages() []pipeline.Decl {
	return append(decls(table(&App{})), datasetDecl())
}

func decls(stages []pipeline.Stage) []pipeline.Decl {
	out := make([]pipeline.Decl, len(stages))
	for i, s := range stages {
		out[i] = s.Declare()
	}
	return out
}

// Lookup returns the declaration of the stage named name.
func Lookup(name string) (pipeline.Decl, bool) {
	all := Stages()
	i := slices.IndexFunc(all, func(d pipeline.Decl) bool { return d.Name == name })
	if i < 0 {
		return pipeline.Decl{}, false
	}
	return all[i], true
}

// Names lists the stages' names in table order, the dataset last.
func Names() []string {
	var out []string
	for _, d := range Stages() {
		out = append(out, d.Name)
	}
	return out
}

// PerTarget returns the declarations of the per-target stages, in table
// order.
func PerTarget() []pipeline.Decl { return decls(table(&App{})) }

// PerTargetNames lists the per-target stages' names in table order.
func PerTargetNames() []string {
	var out []string
	for _, d := range PerTarget() {
		out = append(out, d.Name)
	}
	return out
}

// Select reads a list of stage names (--stages): the per-target stages in
// table order and whether the dataset is among them. Empty means all. An
// unknown name is an ErrUsage naming the stages there are.
func Select(names []string) (perTarget []string, dataset bool, err error) {
	if len(names) == 0 {
		return PerTargetNames(), true, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if _, ok := Lookup(n); !ok {
			return nil, false, fmt.Errorf("%w: unknown stage %q (stages: %s)", ErrUsage, n, strings.Join(Names(), ", "))
		}
		want[n] = true
	}
	for _, n := range PerTargetNames() {
		if want[n] {
			perTarget = append(perTarget, n)
		}
	}
	return perTarget, want[Dataset], nil
}

// CheckStages refuses, before anything is opened, a list of stages
// (--stages) naming a stage that is off under cfg, saying why.
func CheckStages(cfg Config, names []string) error {
	for _, d := range decls(table(&App{cfg: cfg})) {
		if d.Off != "" && slices.Contains(names, d.Name) {
			return fmt.Errorf("%w: --stages %s: the %s stage %s", ErrUsage, strings.Join(names, ","), d.Name, d.Off)
		}
	}
	return nil
}

// WithNeeds returns names with the stages they need run before them
// (pipeline.Decl.Before, transitively), in table order.
func WithNeeds(names ...string) []string {
	want := map[string]bool{}
	var add func(string)
	add = func(n string) {
		if want[n] {
			return
		}
		want[n] = true
		if d, ok := Lookup(n); ok {
			for _, b := range d.Before {
				add(b)
			}
		}
	}
	for _, n := range names {
		add(n)
	}
	var out []string
	for _, n := range Names() {
		if want[n] {
			out = append(out, n)
		}
	}
	return out
}

// Writers returns, in table order, the stages that write kind, with the
// stages they need before them: what makes a target's records of that
// kind (record.Graphs: fetch and citegraph).
func Writers(kind string) []string {
	var w []string
	for _, d := range PerTarget() {
		if slices.Contains(d.Writes, kind) {
			w = append(w, d.Name)
		}
	}
	return WithNeeds(w...)
}

// pdfsRow is the pdfs stage of a: on with a GROBID service (buildPDFs
// made its clients), off without.
func (a *App) pdfsRow() *pdfs.Row {
	if a.cfg.PDF.GrobidBase == "" {
		return &pdfs.Row{Off: "needs --grobid URL (a GROBID service)"}
	}
	return &pdfs.Row{Stage: a.pdfStage, IncludeSuspect: a.cfg.Stages.IncludeSuspect, Alive: a.CheckGrobid}
}
