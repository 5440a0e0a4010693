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

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
)

// Files and directories of an SFT output directory.
const (
	DataDir      = "data"     // verl SFT Parquet: prompt, response, extra_info
	MessagesDir  = "messages" // chat messages Parquet (verl's multi-turn sft_trainer)
	TRLDir       = "trl"      // TRL's conversational prompt-completion Parquet
	JSONLDir     = "jsonl"    // every row with its cards and accounting
	ReadmeFile   = "README.md"
	ReportFile   = "sft.json"
	RejectsFile  = "rejects.jsonl"
	PrevSuffix   = atomicdir.PrevSuffix
	defaultShard = 10_000
	rowGroupRows = 1_000
)

// VerlRow is one row of data/: verl's SFT layout (prompt, response,
// extra_info), whose extra_info also names the split of the dataset the
// row's instance came from.
type VerlRow struct {
	Prompt    string    `json:"prompt" parquet:"prompt"`
	Response  string    `json:"response" parquet:"response"`
	ExtraInfo ExtraInfo `json:"extra_info" parquet:"extra_info"`
}

// ExtraInfo is the extra_info of a VerlRow.
type ExtraInfo struct {
	Split        string `json:"split" parquet:"split"` // the SFT split: train, validation or test
	Index        int    `json:"index" parquet:"index"` // position in the split
	InstanceID   string `json:"instance_id" parquet:"instance_id"`
	NumIdeas     int    `json:"num_ideas" parquet:"num_ideas"`
	DatasetSplit string `json:"dataset_split" parquet:"dataset_split"`
}

// MessagesRow is one row of messages/: a chat conversation for TRL and
// other chat trainers, with the row's SFT split and its dataset split.
type MessagesRow struct {
	Messages     []record.Message `json:"messages" parquet:"messages,list"`
	InstanceID   string           `json:"instance_id" parquet:"instance_id"`
	Split        string           `json:"split" parquet:"split"`
	DatasetSplit string           `json:"dataset_split" parquet:"dataset_split"`
	NumIdeas     int              `json:"num_ideas" parquet:"num_ideas"`
}

// TRLRow is one row of trl/: TRL's conversational prompt-completion
// layout, which SFTTrainer trains on the completion only.
type TRLRow struct {
	Prompt       []record.Message `json:"prompt" parquet:"prompt,list"`
	Completion   []record.Message `json:"completion" parquet:"completion,list"`
	InstanceID   string           `json:"instance_id" parquet:"instance_id"`
	Split        string           `json:"split" parquet:"split"`
	DatasetSplit string           `json:"dataset_split" parquet:"dataset_split"`
	NumIdeas     int              `json:"num_ideas" parquet:"num_ideas"`
}

// WriteOptions configure Write.
type WriteOptions struct {
	// ShardRows is the most rows in one Parquet file (0: 10,000).
	ShardRows int
	// Version is curate's, for the manifest.
	Version string
	// Compression is the Parquet page codec ("": parquetcodec.Default).
	Compression parquetcodec.Codec
}

// ManifestKind is the kind an SFT output's manifest names.
const ManifestKind = "sft"

// Write publishes r in directory out:
//
//	out/README.md                                  dataset card (Hugging Face configs "default" and "messages")
//	out/data/{train,validation,test}-NNNNN-of-NNNNN.parquet      verl SFT: prompt, response, extra_info
//	out/messages/{train,validation,test}-NNNNN-of-NNNNN.parquet  chat: messages [{role, content}], instance_id, split, dataset_split, num_ideas
//	out/trl/{train,validation,test}-NNNNN-of-NNNNN.parquet       TRL prompt-completion: prompt, completion (messages), instance_id, split, dataset_split, num_ideas
//	out/jsonl/{train,validation,test}.jsonl             every Row
//	out/manifest.json                              every file's size and SHA-256
//	out/rejects.jsonl                              every Reject, with its reason
//	out/sft.json                                   the Report
//
// A split without rows has no files; the test split exists only when the
// dataset's test targets were asked for. The write goes through
// publish.Dir, as the dataset's does: under a lock on out, everything is
// written and synced in a temporary directory beside out, which then takes
// out's place (on Linux by one atomic exchange); the output it replaces is
// kept as out.prev. Write refuses to replace a directory that is neither
// empty nor an SFT output.
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	_, err = publish.Dir(ctx, out, publish.Options{
		Kind: ManifestKind, Version: opts.Version, Splits: r.Report.Splits,
		Describe: fmt.Sprintf("an SFT output (no %s of kind %s)", publish.ManifestFile, ManifestKind),
		KeepPrev: true,
	}, func(tmp string) error {
		return writeTree(ctx, tmp, r, cmp.Or(max(opts.ShardRows, 0), defaultShard), opts.Compression, opts.Version)
	})
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	return nil
}

// writeTree writes every file of the output into dir, each synced.
func writeTree(ctx context.Context, dir string, r *Result, shardRows int, codec parquetcodec.Codec, version string) error {
	bySplit := map[string][]Row{}
	for _, row := range r.Rows {
		bySplit[row.Split] = append(bySplit[row.Split], row)
	}
	files := map[string][]string{} // "data/train" -> relative paths
	for _, sub := range []string{DataDir, MessagesDir, TRLDir, JSONLDir} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	for _, split := range Splits() {
		rows := bySplit[split]
		if len(rows) == 0 {
			continue
		}
		verl, msgs, trl := trainerRows(split, rows)
		n := max(1, (len(rows)+shardRows-1)/shardRows)
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo, hi := i*shardRows, min((i+1)*shardRows, len(rows))
			name := fmt.Sprintf("%s-%05d-of-%05d.parquet", split, i, n)
			if err := writeParquet(filepath.Join(dir, DataDir, name), verl[lo:hi], codec, version, parquet.SkipPageBounds("prompt"), parquet.SkipPageBounds("response")); err != nil {
				return err
			}
			if err := writeParquet(filepath.Join(dir, MessagesDir, name), msgs[lo:hi], codec, version); err != nil {
				return err
			}
			if err := writeParquet(filepath.Join(dir, TRLDir, name), trl[lo:hi], codec, version); err != nil {
				return err
			}
			for _, sub := range []string{DataDir, MessagesDir, TRLDir} {
				files[sub+"/"+split] = append(files[sub+"/"+split], sub+"/"+name)
			}
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

// trainerRows are the verl, messages and TRL rows of a split's rows.
func trainerRows(split string, rows []Row) ([]VerlRow, []MessagesRow, []TRLRow) {
	verl := make([]VerlRow, len(rows))
	msgs := make([]MessagesRow, len(rows))
	trl := make([]TRLRow, len(rows))
	for i, row := range rows {
		verl[i] = VerlRow{Prompt: row.Prompt, Response: row.Response, ExtraInfo: ExtraInfo{
			Split: split, Index: i, InstanceID: row.InstanceID, NumIdeas: row.NumIdeas, DatasetSplit: row.DatasetSplit,
		}}
		msgs[i] = MessagesRow{
			Messages:   []record.Message{{Role: "user", Content: row.Prompt}, {Role: "assistant", Content: row.Response}},
			InstanceID: row.InstanceID, Split: split, DatasetSplit: row.DatasetSplit, NumIdeas: row.NumIdeas,
		}
		trl[i] = TRLRow{
			Prompt:     []record.Message{{Role: "user", Content: row.Prompt}},
			Completion: []record.Message{{Role: "assistant", Content: row.Response}},
			InstanceID: row.InstanceID, Split: split, DatasetSplit: row.DatasetSplit, NumIdeas: row.NumIdeas,
		}
	}
	return verl, msgs, trl
}

// writeParquet writes rows as one Parquet file compressed with codec,
// with the dataset stage's row-group size, curate at version named in its
// footer, synced before it returns.
func writeParquet[T any](path string, rows []T, codec parquetcodec.Codec, version string, extra ...parquet.WriterOption) error {
	return atomicdir.WriteFileFunc(path, func(f io.Writer) error {
		opts := append([]parquet.WriterOption{parquetcodec.CreatedBy(version), codec.WriterOption(), parquet.MaxRowsPerRowGroup(rowGroupRows)}, extra...)
		w := parquet.NewGenericWriter[T](f, opts...)
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}
