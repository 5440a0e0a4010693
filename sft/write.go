package sft

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/atomicdir"
)

// Files and directories of an SFT output directory.
const (
	DataDir      = "data"     // verl SFT Parquet: prompt, response, extra_info
	MessagesDir  = "messages" // chat messages Parquet (TRL)
	JSONLDir     = "jsonl"    // every row with its cards and accounting
	ReadmeFile   = "README.md"
	ReportFile   = "sft.json"
	RejectsFile  = "rejects.jsonl"
	PrevSuffix   = atomicdir.PrevSuffix
	defaultShard = 10_000
	rowGroupRows = 1_000
)

// WriteOptions configure Write.
type WriteOptions struct {
	// ShardRows is the most rows in one Parquet file (0: 10,000).
	ShardRows int
}

// Write publishes r in directory out:
//
//	out/README.md                                  dataset card (Hugging Face configs "default" and "messages")
//	out/data/{train,validation}-NNNNN-of-NNNNN.parquet      verl SFT: prompt, response, extra_info
//	out/messages/{train,validation}-NNNNN-of-NNNNN.parquet  TRL: messages [{role, content}], instance_id, split
//	out/jsonl/{train,validation}.jsonl             every Row
//	out/rejects.jsonl                              every Reject, with its reason
//	out/sft.json                                   the Report
//
// A split without rows has no files. The write is atomic like the dataset
// stage's (atomicdir.Replace): everything is written and synced in a
// temporary directory beside out, which then takes out's place (on Linux
// by one atomic exchange); the output it replaces is kept as out.prev.
// Write refuses to replace a directory that is neither empty nor an SFT
// output.
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	err = atomicdir.Replace(ctx, out, atomicdir.Options{
		Owns:     atomicdir.HasAll(ReadmeFile, ReportFile),
		Describe: fmt.Sprintf("an SFT output (no %s and %s)", ReadmeFile, ReportFile),
		KeepPrev: true,
	}, func(tmp string) error {
		return writeTree(ctx, tmp, r, cmp.Or(max(opts.ShardRows, 0), defaultShard))
	})
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	return nil
}

// writeTree writes every file of the output into dir, each synced.
func writeTree(ctx context.Context, dir string, r *Result, shardRows int) error {
	bySplit := map[string][]Row{}
	for _, row := range r.Rows {
		bySplit[row.Split] = append(bySplit[row.Split], row)
	}
	files := map[string][]string{} // "data/train" -> relative paths
	for _, sub := range []string{DataDir, MessagesDir, JSONLDir} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	for _, split := range []string{SplitTrain, SplitValidation} {
		rows := bySplit[split]
		if len(rows) == 0 {
			continue
		}
		verl := make([]dataset.VerlSFTRow, len(rows))
		msgs := make([]dataset.MessagesRow, len(rows))
		for i, row := range rows {
			verl[i] = dataset.VerlSFTRow{Prompt: row.Prompt, Response: row.Response, ExtraInfo: dataset.ExtraInfo{
				Split: split, Index: i, InstanceID: row.InstanceID, NumIdeas: row.NumIdeas,
			}}
			msgs[i] = dataset.MessagesRow{
				Messages:   []dataset.Message{{Role: "user", Content: row.Prompt}, {Role: "assistant", Content: row.Response}},
				InstanceID: row.InstanceID, Split: split,
			}
		}
		n := max(1, (len(rows)+shardRows-1)/shardRows)
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo, hi := i*shardRows, min((i+1)*shardRows, len(rows))
			name := fmt.Sprintf("%s-%05d-of-%05d.parquet", split, i, n)
			if err := writeParquet(filepath.Join(dir, DataDir, name), verl[lo:hi], parquet.SkipPageBounds("prompt"), parquet.SkipPageBounds("response")); err != nil {
				return err
			}
			if err := writeParquet(filepath.Join(dir, MessagesDir, name), msgs[lo:hi]); err != nil {
				return err
			}
			files[DataDir+"/"+split] = append(files[DataDir+"/"+split], DataDir+"/"+name)
			files[MessagesDir+"/"+split] = append(files[MessagesDir+"/"+split], MessagesDir+"/"+name)
		}
		if err := atomicdir.WriteJSONL(filepath.Join(dir, JSONLDir, split+".jsonl"), rows); err != nil {
			return err
		}
	}
	if err := atomicdir.WriteJSONL(filepath.Join(dir, RejectsFile), r.Rejects); err != nil {
		return err
	}
	rep, err := json.MarshalIndent(r.Report, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicdir.WriteFileSync(filepath.Join(dir, ReportFile), append(rep, '\n')); err != nil {
		return err
	}
	return atomicdir.WriteFileSync(filepath.Join(dir, ReadmeFile), []byte(readme(r, bySplit)))
}

// writeParquet writes rows as one zstd-compressed Parquet file with the
// dataset stage's row-group size, synced before it returns.
func writeParquet[T any](path string, rows []T, extra ...parquet.WriterOption) error {
	return atomicdir.WriteFileFunc(path, func(f io.Writer) error {
		opts := append([]parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(rowGroupRows)}, extra...)
		w := parquet.NewGenericWriter[T](f, opts...)
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}
