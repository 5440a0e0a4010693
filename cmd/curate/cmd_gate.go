package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/sft"
)

// gateCmd is `curate gate`: the schema gate over generations.
type gateCmd struct {
	numIdeas        int
	strict, verbose bool
}

func (c *gateCmd) AddFlags(fs *flag.FlagSet, _ *cmdEnv) {
	fs.IntVar(&c.numIdeas, "num-ideas", sft.DefaultNumIdeas, "K for rows without their own num_ideas (or extra_info.num_ideas)")
	fs.BoolVar(&c.strict, "strict", false, "exit with status 1 when any row fails")
	fs.BoolVar(&c.verbose, "v", false, "print every failing row with its reason")
}

// Run applies the schema gate to the generations in files.
func (c *gateCmd) Run(_ context.Context, env *cmdEnv, files []string) error {
	numIdeas, strict, verbose := c.numIdeas, c.strict, c.verbose
	if len(files) == 0 {
		return fmt.Errorf("%w: give a JSONL or Parquet file of generations (column completion or response)", errUsage)
	}
	if numIdeas < 1 {
		return fmt.Errorf("%w: --num-ideas %d: want at least 1", errUsage, numIdeas)
	}
	failed := 0
	for _, path := range files {
		rows, err := sft.ReadCompletions(path)
		if err != nil {
			// A file that cannot be read is no verdict on its rows: the
			// check could not run.
			return app.Fail(app.ErrCannotRun, err)
		}
		reasons := map[string]int{}
		passed := 0
		for _, c := range rows {
			k := c.NumIdeas
			if k <= 0 {
				k = numIdeas
			}
			_, err := gate.Check(c.Text, k)
			if err == nil {
				passed++
				continue
			}
			reasons[gate.ReasonOf(err)]++
			if verbose {
				id := ""
				if c.InstanceID != "" {
					id = " (" + c.InstanceID + ")"
				}
				fmt.Fprintf(env.stdout, "%s:%d%s: %v\n", path, c.Line, id, err)
			}
		}
		failed += len(rows) - passed
		rate := "n/a"
		if len(rows) > 0 {
			rate = fmt.Sprintf("%.1f%%", 100*float64(passed)/float64(len(rows)))
		}
		fmt.Fprintf(env.stdout, "%s: %d rows, %d passed (%s), %d failed\n", path, len(rows), passed, rate, len(rows)-passed)
		for _, r := range sortedReasons(reasons) {
			fmt.Fprintf(env.stdout, "  %-15s %d\n", r, reasons[r])
		}
	}
	if strict && failed > 0 {
		return &statusError{code: 1, err: errors.New("rows fail the gate")}
	}
	return nil
}
