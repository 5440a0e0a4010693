package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sft/gate"
)

// runGateCmd applies the schema gate to the generations in files.
func runGateCmd(_ context.Context, env *cmdEnv, args []string) error {
	var (
		numIdeas int
		strict   bool
		verbose  bool
	)
	fs := newFlagSet(env, "gate", "[--num-ideas K] [--strict] [-v] FILE...")
	fs.IntVar(&numIdeas, "num-ideas", sft.DefaultNumIdeas, "K for rows without their own num_ideas (or extra_info.num_ideas)")
	fs.BoolVar(&strict, "strict", false, "exit with status 1 when any row fails")
	fs.BoolVar(&verbose, "v", false, "print every failing row with its reason")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: give a JSONL or Parquet file of generations (column completion or response)", errUsage)
	}
	if numIdeas < 1 {
		return fmt.Errorf("%w: --num-ideas %d: want at least 1", errUsage, numIdeas)
	}
	failed := 0
	for _, path := range files {
		rows, err := sft.ReadCompletions(path)
		if err != nil {
			return err
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
		return &exitError{code: 1, err: errors.New("rows fail the gate")}
	}
	return nil
}
