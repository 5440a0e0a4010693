package dataset

import (
	"cmp"
	"slices"

	"github.com/groundwork/curate/record"
)

// Result is a dataset ready to be written: the instances kept, every
// target left out, the contamination report and the options that made it.
type Result struct {
	Instances     []record.Instance // train then test, each in instance ID order
	Dropped       []Dropped         // in target ID order
	Contamination *Contamination
	Options       Options // with defaults filled in
}

// Build consolidates targets and resolves contamination by opts.Policy.
// Under PolicyFail a contaminated corpus returns an error wrapping
// ErrContaminated, with the Result (and its report) still filled in.
func Build(targets []TargetInputs, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	instances, dropped, err := Consolidate(targets, opts)
	if err != nil {
		return nil, err
	}
	kept, more, rep, err := Decontaminate(instances, opts)
	r := &Result{Instances: kept, Dropped: append(dropped, more...), Contamination: rep, Options: opts}
	if err != nil {
		r.Instances = instances
		return r, err
	}
	sortInstances(r.Instances)
	slices.SortStableFunc(r.Dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	return r, nil
}

// sortInstances orders instances train first, then by instance ID.
func sortInstances(ins []record.Instance) {
	slices.SortStableFunc(ins, func(a, b record.Instance) int {
		return cmp.Or(cmp.Compare(splitRank(a.Split), splitRank(b.Split)), cmp.Compare(a.InstanceID, b.InstanceID))
	})
}

func splitRank(s string) int {
	if s == record.SplitTest {
		return 1
	}
	return 0
}
