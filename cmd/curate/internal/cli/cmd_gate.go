package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/sft"
)

// gateCmd is `curate gate`: the schema gate over generations.
type gateCmd struct {
	numIdeas        int
	strict, verbose bool
}

func (c *gateCmd) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.IntVar(&c.numIdeas, "num-ideas", sft.DefaultNumIdeas, "K for rows without their own num_ideas (or extra_info.num_ideas)")
	fs.BoolVar(&c.strict, "strict", false, "exit with status 1 when any row fails")
	fs.BoolVar(&c.verbose, "v", false, "print every failing row with its reason")
}

// Run applies the schema gate to the generations in files.
func (c *gateCmd) Run(_ context.Context, env *Env, files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: give a JSONL or Parquet file of generations (column completion or response)", errUsage)
	}
	if c.numIdeas < 1 {
		return fmt.Errorf("%w: --num-ideas %d: want at least 1", errUsage, c.numIdeas)
	}
	failed := 0
	err := app.Gate(files, c.numIdeas, func(r app.GateRow) {
		if c.verbose {
			id := ""
			if r.InstanceID != "" {
				id = " (" + r.InstanceID + ")"
			}
			fmt.Fprintf(env.Stdout, "%s:%d%s: %v\n", r.Path, r.Line, id, r.Err)
		}
	}, func(f app.GateFile) { failed += printGate(env, f) })
	switch {
	case err != nil:
		return err
	case c.strict && failed > 0:
		return &statusError{code: 1, err: errors.New("rows fail the gate")}
	}
	return nil
}

// printGate writes a file's pass rate and reasons, and returns its rows
// that failed.
func printGate(env *Env, f app.GateFile) (failed int) {
	rate := "n/a"
	if f.Rows > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*float64(f.Passed)/float64(f.Rows))
	}
	fmt.Fprintf(env.Stdout, "%s: %d rows, %d passed (%s), %d failed\n", f.Path, f.Rows, f.Passed, rate, f.Rows-f.Passed)
	for _, r := range sortedReasons(f.Reasons) {
		fmt.Fprintf(env.Stdout, "  %-15s %d\n", r, f.Reasons[r])
	}
	return f.Rows - f.Passed
}
