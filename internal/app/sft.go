package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/publish"
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
		if opts.Dataset, err = datasetName(datasetDir); err != nil {
			return nil, Fail(ErrCannotRun, fmt.Errorf("sft: %w", err))
		}
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

// datasetName names a published dataset for the cards made from it: its
// directory's name and the start of its manifest's SHA-256, which tells
// two versions apart; never the local path, which means nothing where the
// card is published and may say more than it should.
func datasetName(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, publish.ManifestFile))
	if err != nil {
		return "", fmt.Errorf("read dataset manifest: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%s (manifest sha256 %s)", filepath.Base(abs), hex.EncodeToString(sum[:])[:12]), nil
}
