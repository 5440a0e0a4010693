package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/summarize"
)

// The stages, by name: the per-target stages in pipeline order, then the
// dataset, which runs over the store once the targets are through.
const (
	Fetch     = fetch.Name
	Citegraph = citegraph.Name
	Classify  = classify.Name
	Sources   = "sources"
	PDFs      = pdfs.Name
	Summarize = summarize.Name
	Dataset   = "dataset"
)

// Stage is one stage as the table declares it.
type Stage struct {
	Name  string
	About string // a line for help and the README
	// Reads and Writes name the record kinds the stage reads and writes
	// for a target; Optional are kinds it reads when they are there.
	Reads, Optional, Writes []string
	// Needs names the stages that run before this one when it is run on
	// its own: work it depends on that it once did itself.
	Needs []string
	// Workers is the default size of its pool (0 for the dataset).
	Workers int
	// PerTarget is false for the dataset.
	PerTarget bool
}

// Stages returns the table: every stage, in the order a run takes them.
// curate run, the per-stage commands, --stages, curate status, the run
// summary, the dataset's inputs digest and the attribution of a dropped
// target to the stage that failed it all read this table.
func Stages() []Stage {
	return []Stage{
		{Name: Fetch, About: "arXiv HTML (ar5iv as fallback) of each target, parsed", PerTarget: true, Workers: 2,
			Writes: []string{record.RawPages.Name(), record.Documents.Name(), record.NoHTMLs.Name()}},
		{Name: Citegraph, About: "Semantic Scholar reference edges joined to the bibliography, and the target's arXiv metadata", PerTarget: true, Workers: 4,
			Reads: []string{record.Documents.Name()}, Needs: []string{Fetch},
			Writes: []string{record.S2Papers.Name(), record.S2References.Name(), record.S2Batches.Name(), record.ArxivMetas.Name(), record.Graphs.Name()}},
		{Name: Classify, About: "which references are sources, with verified quotes", PerTarget: true, Workers: 4,
			Reads:  []string{record.Documents.Name(), record.Graphs.Name()},
			Writes: []string{record.SelectionSets.Name(), record.ClassifyFailures.Name()}},
		{Name: Sources, About: "the arXiv HTML of each target's sources, parsed", PerTarget: true, Workers: 2,
			Reads: []string{record.Graphs.Name(), record.SelectionSets.Name()}, Writes: []string{record.RawPages.Name(), record.Documents.Name(), record.NoHTMLs.Name()}},
		{Name: PDFs, About: "open-access PDFs of the sources without an arXiv page, converted by GROBID (with --grobid only)", PerTarget: true, Workers: 2,
			Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name(), record.S2References.Name()},
			Optional: []string{record.S2Batches.Name(), record.Documents.Name(), record.NoHTMLs.Name()},
			Writes:   []string{record.PDFFiles.Name(), record.TEIFiles.Name(), record.PDFDocuments.Name(), record.PDFOutcomes.Name()}, Needs: []string{Sources}},
		{Name: Summarize, About: "the target's gold card and a card per source", PerTarget: true, Workers: 4,
			Reads:    []string{record.Documents.Name(), record.Graphs.Name(), record.SelectionSets.Name()},
			Optional: []string{record.PDFDocuments.Name()},
			Writes:   []string{record.Summaries.Name(), record.CardIndex.Name(), "card:*"}, Needs: []string{Sources, PDFs}},
		{Name: Dataset, About: "Parquet splits, contamination proof, report",
			Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name(), record.Summaries.Name()},
			Optional: []string{record.Documents.Name(), record.PaperLicenses.Name()}},
	}
}

// Lookup returns the stage named name.
func Lookup(name string) (Stage, bool) {
	i := slices.IndexFunc(Stages(), func(s Stage) bool { return s.Name == name })
	if i < 0 {
		return Stage{}, false
	}
	return Stages()[i], true
}

// Names lists the stages' names in table order.
func Names() []string {
	var out []string
	for _, s := range Stages() {
		out = append(out, s.Name)
	}
	return out
}

// PerTargetNames lists the per-target stages' names in table order.
func PerTargetNames() []string {
	var out []string
	for _, s := range Stages() {
		if s.PerTarget {
			out = append(out, s.Name)
		}
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
	for _, s := range Stages() {
		switch {
		case !want[s.Name]:
		case s.PerTarget:
			perTarget = append(perTarget, s.Name)
		default:
			dataset = true
		}
	}
	return perTarget, dataset, nil
}

// WithNeeds returns names with the stages they need run before them
// (Stage.Needs, transitively), in table order.
func WithNeeds(names ...string) []string {
	want := map[string]bool{}
	var add func(string)
	add = func(n string) {
		if want[n] {
			return
		}
		want[n] = true
		if s, ok := Lookup(n); ok {
			for _, d := range s.Needs {
				add(d)
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
