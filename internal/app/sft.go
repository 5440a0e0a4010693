package app

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sft"
)

// SFT reads the dataset published in datasetDir, generates its SFT rows
// with opts and writes them to out (unless the run was stopped, when
// nothing is written: a re-run resumes from the LLM cache). The sft stage
// works on instances; reading them from a published dataset is the
// composition's part.
func SFT(ctx context.Context, datasetDir, out string, opts sft.Options, wopts sft.WriteOptions) (*sft.Result, error) {
	pub, err := dataset.ReadDataset(ctx, datasetDir)
	if err != nil {
		return nil, Fail(ErrCannotRun, fmt.Errorf("sft: %w", err))
	}
	if opts.Dataset == "" {
		opts.Dataset = datasetDir
	}
	r, err := sft.Generate(ctx, pub.Instances, opts)
	if err != nil {
		return nil, err
	}
	if r.Stopped {
		return r, nil
	}
	if err := sft.Write(ctx, out, r, wopts); err != nil {
		return nil, err
	}
	return r, nil
}
