package sft

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/dataset"
)

// Run reads the dataset published in datasetDir, generates its SFT rows
// with opts and writes them to out (unless the run was stopped, when
// nothing is written: a re-run resumes from the LLM cache).
func Run(ctx context.Context, datasetDir, out string, opts Options, wopts WriteOptions) (*Result, error) {
	pub, err := dataset.ReadDataset(ctx, datasetDir)
	if err != nil {
		return nil, fmt.Errorf("sft: %w", err)
	}
	if opts.Dataset == "" {
		opts.Dataset = datasetDir
	}
	r, err := Generate(ctx, pub.Instances, opts)
	if err != nil {
		return nil, err
	}
	if r.Stopped {
		return r, nil
	}
	if err := Write(ctx, out, r, wopts); err != nil {
		return nil, err
	}
	return r, nil
}
