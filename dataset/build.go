package dataset

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// Result is a dataset ready to be written: the instances kept, every
// target left out, the contamination report and the options that made it.
// A Result of Build holds its instances in Instances; one of BuildStream
// keeps them in a temporary file (Instances is nil: read them with Each)
// until Close.
type Result struct {
	Instances     []record.Instance // train then test, each in instance ID order
	Dropped       []Dropped         // in target ID order
	Contamination *Contamination
	Options       Options // with defaults filled in
	// Guards counts what the guards against instructions planted in
	// papers found among the targets read.
	Guards *Guards

	set    instanceSet      // the instances, in memory or spilled
	spill  *spill           // nil for a Result of Build
	order  map[string][]int // set positions kept, by split, in write order
	perm   []int            // set position -> spill line
	counts SplitCounts
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
	r := &Result{Instances: kept, Dropped: append(dropped, more...), Contamination: rep, Options: opts, Guards: &Guards{}}
	for i := range targets {
		r.Guards.add(&targets[i])
	}
	if err != nil {
		r.Instances = instances
		return r, err
	}
	sortInstances(r.Instances)
	slices.SortStableFunc(r.Dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	return r, nil
}

// BuildStream is Build over targets read one at a time by load (such as
// EachTarget, whose left-out targets it returns and BuildStream adds to
// Dropped), for corpora too large to hold: each instance is written to a
// temporary file in dir ("" for the system's) as soon as it is made, and
// only what the contamination rules compare stays in memory (identities,
// and the golds of a few thousand test instances at a time). The result
// is the one Build gives for the same targets, byte for byte once
// written. Close removes the file.
func BuildStream(ctx context.Context, load func(fn func(*TargetInputs) error) ([]Dropped, error), opts Options, dir string) (*Result, error) {
	opts = opts.withDefaults()
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, err
	}
	sp, err := newSpill(dir)
	if err != nil {
		return nil, err
	}
	r := &Result{Options: opts, spill: sp, Guards: &Guards{}}
	createdAt := opts.CreatedAt.UTC().Format(time.RFC3339)
	type key struct{ id, arxivID, split string }
	var keys []key
	var dropped []Dropped
	loadDropped, err := load(func(t *TargetInputs) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.Guards.add(t)
		inst, d, err := consolidate(t, opts, tmpl, createdAt)
		if err != nil {
			return err
		}
		if d != nil {
			dropped = append(dropped, *d)
			return nil
		}
		keys = append(keys, key{inst.InstanceID, inst.Target.ArxivID, inst.Split})
		_, err = sp.add(&inst)
		return err
	})
	if err != nil {
		sp.close()
		return nil, err
	}
	// The rules read the instances in the order Consolidate gives them.
	r.perm = make([]int, len(keys))
	for i := range r.perm {
		r.perm[i] = i
	}
	slices.SortStableFunc(r.perm, func(a, b int) int {
		return cmp.Or(cmp.Compare(keys[a].id, keys[b].id), cmp.Compare(keys[a].arxivID, keys[b].arxivID))
	})
	r.set = permSet{sp, r.perm}
	slices.SortStableFunc(dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	keep, more, rep, err := decontaminate(r.set, opts)
	r.Contamination = rep
	r.Dropped = append(dropped, more...)
	if err != nil && !errors.Is(err, ErrContaminated) {
		sp.close()
		return nil, err
	}
	if keep == nil {
		keep = make([]bool, len(keys))
		for i := range keep {
			keep[i] = true
		}
	}
	splits, ids := make([]string, len(keys)), make([]string, len(keys))
	for pos, line := range r.perm {
		splits[pos], ids[pos] = keys[line].split, keys[line].id
	}
	r.arrange(keep, splits, ids)
	slices.SortStableFunc(r.Dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	r.Dropped = append(r.Dropped, loadDropped...)
	return r, err
}

// arrange orders the kept positions by split and instance ID, as
// sortInstances does; splits and ids are by position.
func (r *Result) arrange(keep []bool, splits, ids []string) {
	var rows []int
	for pos, k := range keep {
		if k {
			rows = append(rows, pos)
		}
	}
	slices.SortStableFunc(rows, func(a, b int) int {
		return cmp.Or(cmp.Compare(splitRank(splits[a]), splitRank(splits[b])), cmp.Compare(ids[a], ids[b]))
	})
	r.order = map[string][]int{}
	for _, pos := range rows {
		split := record.SplitTrain
		if splits[pos] == record.SplitTest {
			split = record.SplitTest
			r.counts.Test++
		} else {
			r.counts.Train++
		}
		r.order[split] = append(r.order[split], pos)
	}
}

// Counts returns the instances kept per split.
func (r *Result) Counts() SplitCounts {
	if r.spill == nil {
		return countSplits(r.Instances)
	}
	return r.counts
}

// Len returns the number of instances kept.
func (r *Result) Len() int {
	c := r.Counts()
	return c.Train + c.Test
}

// Each calls fn with every instance kept, train then test, each in
// instance ID order; in is valid during the call only.
func (r *Result) Each(fn func(in *record.Instance) error) error {
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		if err := r.eachIn(split, 0, r.rows(split), fn); err != nil {
			return err
		}
	}
	return nil
}

// rows returns the number of instances of split.
func (r *Result) rows(split string) int {
	if r.spill == nil {
		c := countSplits(r.Instances)
		if split == record.SplitTest {
			return c.Test
		}
		return c.Train
	}
	return len(r.order[split])
}

// eachIn calls fn with instances lo to hi (excluded) of split, in order.
func (r *Result) eachIn(split string, lo, hi int, fn func(*record.Instance) error) error {
	if r.spill == nil {
		ins := slices.Clone(r.Instances)
		sortInstances(ins)
		var rows []record.Instance
		for _, in := range ins {
			if (in.Split == record.SplitTest) == (split == record.SplitTest) {
				rows = append(rows, in)
			}
		}
		for i := lo; i < hi && i < len(rows); i++ {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if r.spill.f == nil {
		return errors.New("dataset: the result was closed")
	}
	for _, pos := range r.order[split][lo:hi] {
		var in record.Instance
		if err := r.spill.get(r.perm[pos], &in); err != nil {
			return err
		}
		if err := fn(&in); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the temporary file of a Result of BuildStream; its
// instances cannot be read after (Counts, Dropped and Contamination
// stay).
func (r *Result) Close() error {
	if r == nil {
		return nil
	}
	return r.spill.close()
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
