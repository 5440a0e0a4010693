package dataset

import (
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Name is the dataset stage's name: it runs over the store once the
// targets are through the per-target stages.
const Name = "dataset"

// Decl is the dataset stage's declaration: the records it reads of each
// target, in the order it reads them (a target without one is left out,
// attributed to the stage that writes it), those it reads when they are
// there, and the records of the fields stages add to each instance.
func Decl(fields ...*pipeline.Field) pipeline.Decl {
	d := pipeline.Decl{Name: Name, About: "Parquet splits, contamination proof, report",
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name(), record.Summaries.Name()},
		Optional: []string{record.Documents.Name(), record.PaperLicenses.Name(), record.KnowledgeCuts.Name()}}
	for _, f := range fields {
		if f.Absent != nil {
			// Read when there: a target without it, or whose stage
			// failed, takes the field's Absent value.
			d.Optional = append(d.Optional, f.Kind)
			continue
		}
		d.Reads = append(d.Reads, f.Kind)
	}
	return d
}

// Inputs says where the records the dataset reads come from: the stage
// that writes each kind (the stage table says which), and the fields
// stages add to each instance.
type Inputs struct {
	// Writers names the stage that writes each kind the dataset reads: a
	// missing record is reported as that stage's work, and a target whose
	// last run of it failed is left out.
	Writers Writers
	// Fields are read for every target (one without its record is left
	// out, unless the field has an Absent value) and written as columns
	// of their own.
	Fields []*pipeline.Field
}
