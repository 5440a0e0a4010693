package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/postknowledge"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/summarize"
	"github.com/groundwork/curate/tuples"
	"github.com/groundwork/curate/versions"
)

// Table is a stage table: the per-target stages, in the order a run
// takes them. Everything that runs, lists, sizes, estimates or reads the
// stages reads a Table.
type Table []pipeline.Stage

// table is curate's stage table, each stage wired to a's store, clients
// and options: the one place that names the stages. Built over a zero
// App it gives the declarations alone (Stages, Names).
func table(a *App) Table {
	so := a.cfg.Stages
	return Table{
		&fetch.Stage{Fetcher: a.Fetcher, Ready: a.prepareFetch, Learn: a.archives.learn, AtV1: a.cut() != knowledgecut.Off, V1PDF: a.v1PDF()},
		&citegraph.Row{Runner: &citegraph.Runner{Store: a.Store, S2: a.s2, ArxivAPI: a.arxivAPI, Log: a.Log, Refresh: so.Refresh,
			Skip: a.Fetcher.KnownMissing, OpenAccess: a.cfg.PDF.GrobidBase != ""}, Drain: a.cfg.Drain, Learn: a.archives.learn},
		&classify.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Budget: so.ClassifyBudget, Log: a.Log, Meter: a.Meter,
			Force: so.Force, Plausibility: so.Plausibility, IncludeSuspect: so.IncludeSuspect},
		// After classify (it needs the sources), before sources (which
		// fetches each source at the version pinned here).
		a.versionsRow(),
		&fetch.Sources{Fetcher: a.Fetcher, Store: a.Store, Lifecycle: a.lifecycle, IncludeSuspect: so.IncludeSuspect, Ready: a.prepareFetch,
			Mode: a.cut()},
		a.pdfsRow(),
		&summarize.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Log: a.Log, Meter: a.Meter, Force: so.Force, Budget: so.SummarizeBudget,
			MinGrounding: so.MinGrounding, IncludeSuspect: so.IncludeSuspect, Mode: a.cut()},
		&tuples.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Budget: so.SummarizeBudget, Force: so.Force, Log: a.Log, Meter: a.Meter},
		&postknowledge.Stage{Store: a.Store, S2: a.s2, N: so.PostKnowledge, Refresh: so.Refresh, Log: a.Log},
	}
}

// builtin is curate's table, for its declarations.
func builtin() Table { return table(&App{}) }

// Dataset is the name of the dataset stage, which runs over the store
// once the targets are through (see BuildDataset).
const Dataset = dataset.Name

// Decls returns the declarations of the table's stages, in order.
func (t Table) Decls() []pipeline.Decl {
	out := make([]pipeline.Decl, len(t))
	for i, s := range t {
		out[i] = s.Declare()
	}
	return out
}

// Dataset is the dataset stage's declaration, with the records of what
// the table's stages add to an instance (pipeline.Decl.Field).
func (t Table) Dataset() pipeline.Decl { return dataset.Decl(t.Fields()...) }

// Fields are the fields the table's stages add to each dataset instance,
// in table order.
func (t Table) Fields() []*pipeline.Field {
	var out []*pipeline.Field
	for _, d := range t.Decls() {
		if d.Field != nil {
			out = append(out, d.Field)
		}
	}
	return out
}

// All returns the declarations of every stage, in the order a run takes
// them: the table's, then the dataset.
func (t Table) All() []pipeline.Decl { return append(t.Decls(), t.Dataset()) }

// Lookup returns the declaration of the stage named name.
func (t Table) Lookup(name string) (pipeline.Decl, bool) {
	all := t.All()
	i := slices.IndexFunc(all, func(d pipeline.Decl) bool { return d.Name == name })
	if i < 0 {
		return pipeline.Decl{}, false
	}
	return all[i], true
}

// Names lists the stages' names in table order, the dataset last.
func (t Table) Names() []string {
	var out []string
	for _, d := range t.All() {
		out = append(out, d.Name)
	}
	return out
}

// PerTargetNames lists the per-target stages' names in table order.
func (t Table) PerTargetNames() []string {
	var out []string
	for _, d := range t.Decls() {
		out = append(out, d.Name)
	}
	return out
}

// Select reads a list of stage names (--stages): the per-target stages in
// table order and whether the dataset is among them. Empty means all. An
// unknown name is an ErrUsage naming the stages there are.
func (t Table) Select(names []string) (perTarget []string, dataset bool, err error) {
	if len(names) == 0 {
		return t.PerTargetNames(), true, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if _, ok := t.Lookup(n); !ok {
			return nil, false, fmt.Errorf("%w: unknown stage %q (stages: %s)", ErrUsage, n, strings.Join(t.Names(), ", "))
		}
		want[n] = true
	}
	for _, n := range t.PerTargetNames() {
		if want[n] {
			perTarget = append(perTarget, n)
		}
	}
	return perTarget, want[Dataset], nil
}

// WithNeeds returns names with the stages they need run before them
// (pipeline.Decl.Before, transitively), in table order.
func (t Table) WithNeeds(names ...string) []string {
	want := map[string]bool{}
	var add func(string)
	add = func(n string) {
		if want[n] {
			return
		}
		want[n] = true
		if d, ok := t.Lookup(n); ok {
			for _, b := range d.Before {
				add(b)
			}
		}
	}
	for _, n := range names {
		add(n)
	}
	var out []string
	for _, n := range t.Names() {
		if want[n] {
			out = append(out, n)
		}
	}
	return out
}

// Writers returns, in table order, the stages that write kind, with the
// stages they need before them: what makes a target's records of that
// kind (record.Graphs: fetch and citegraph).
func (t Table) Writers(kind string) []string {
	var w []string
	for _, d := range t.Decls() {
		if slices.Contains(d.Writes, kind) {
			w = append(w, d.Name)
		}
	}
	return t.WithNeeds(w...)
}

// Named returns the table's stages with the given names, in table order.
func (t Table) Named(names []string) Table {
	var out Table
	for _, s := range t {
		if slices.Contains(names, s.Declare().Name) {
			out = append(out, s)
		}
	}
	return out
}

// Active returns names without the stages that are off (see
// pipeline.Decl.Off): pdfs without a GROBID service. A stage that is off
// is no step of a run, so it costs nothing, counts nothing and writes no
// ledger entry.
func (t Table) Active(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		d, ok := t.Lookup(n)
		return ok && d.Off != ""
	})
}

// DatasetInputs says where the dataset's inputs come from: the stage
// that writes each record kind it reads, and the fields the stages add
// to each instance.
func (t Table) DatasetInputs() dataset.Inputs {
	in := dataset.Inputs{Writers: dataset.Writers{}, Fields: t.Fields()}
	ds := t.Dataset()
	for _, kind := range append(slices.Clone(ds.Reads), ds.Optional...) {
		for _, d := range t.Decls() {
			if slices.Contains(d.Writes, kind) {
				in.Writers[kind] = d.Name
				break
			}
		}
	}
	return in
}

// The declarations of curate's table, for what is decided before a
// store is opened (flags, help, --stages).

// Stages returns the declarations of every stage, the dataset last.
func Stages() []pipeline.Decl { return builtin().All() }

// PerTarget returns the declarations of the per-target stages.
func PerTarget() []pipeline.Decl { return builtin().Decls() }

// Lookup returns the declaration of the stage named name.
func Lookup(name string) (pipeline.Decl, bool) { return builtin().Lookup(name) }

// Names lists the stages' names in table order, the dataset last.
func Names() []string { return builtin().Names() }

// PerTargetNames lists the per-target stages' names in table order.
func PerTargetNames() []string { return builtin().PerTargetNames() }

// Select reads --stages: see Table.Select.
func Select(names []string) ([]string, bool, error) { return builtin().Select(names) }

// WithNeeds adds the stages names need before them: see Table.WithNeeds.
func WithNeeds(names ...string) []string { return builtin().WithNeeds(names...) }

// CheckStages refuses, before anything is opened, a list of stages
// (--stages) naming a stage that is off under cfg, saying why.
func CheckStages(cfg Config, names []string) error {
	for _, d := range table(&App{cfg: cfg}).Decls() {
		if d.Off != "" && slices.Contains(names, d.Name) {
			return fmt.Errorf("%w: --stages %s: the %s stage %s", ErrUsage, strings.Join(names, ","), d.Name, d.Off)
		}
	}
	return nil
}

// pdfsRow is the pdfs stage of a: on with a GROBID service (buildPDFs
// made its clients), off without.
func (a *App) pdfsRow() *pdfs.Row {
	if a.cfg.PDF.GrobidBase == "" {
		return &pdfs.Row{Off: "needs --grobid URL (a GROBID service)"}
	}
	return &pdfs.Row{Stage: a.pdfStage, IncludeSuspect: a.cfg.Stages.IncludeSuspect, Alive: a.CheckGrobid, Mode: a.cut()}
}

// cut is the knowledge cut the stages apply: the configured mode. The
// versions stage has histories to cut by in every configuration (the
// arXiv API's entries at the least), so the cut applies by default.
func (a *App) cut() knowledgecut.Mode { return a.cfg.Knowledge.mode() }

// versionsRow is the versions stage of a: the histories from the
// metadata snapshot, the store, the arXiv API and, for what an entry
// cannot settle, OAI-PMH (unless Knowledge.OAI is off). Under
// --knowledge-cut off it asks nothing: with an --arxiv-metadata file the
// versions it holds are still recorded, without one the stage is off.
func (a *App) versionsRow() *versions.Stage {
	k := a.cfg.Knowledge
	if k.mode() == knowledgecut.Off && k.Metadata == "" {
		return &versions.Stage{Off: "asks for no version history under --knowledge-cut off (an --arxiv-metadata FILE would still record those it holds)"}
	}
	st := &versions.Stage{Store: a.Store, Snapshot: a.snapshot, IncludeSuspect: a.cfg.Stages.IncludeSuspect, Log: a.Log}
	if k.mode() == knowledgecut.Off {
		return st
	}
	if a.arxivAPI != nil {
		st.API = a.arxivAPI
	}
	if k.OAI && a.OAI != nil {
		st.OAI = a.OAI
		for _, set := range k.Harvests {
			st.Harvests = append(st.Harvests, oaipmh.Query{Set: set})
		}
	}
	return st
}

// v1PDF reads a target's v1 from its PDF through GROBID (with --grobid),
// when arXiv has no HTML for v1; nil without GROBID.
func (a *App) v1PDF() func(context.Context, arxiv.ID) (*record.Document, error) {
	if a.pdfStage == nil {
		return nil
	}
	return a.pdfStage.ArxivVersion
}
