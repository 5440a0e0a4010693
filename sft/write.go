package sft

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/dataset"
)

// Files and directories of an SFT output directory.
const (
	DataDir      = "data"     // verl SFT Parquet: prompt, response, extra_info
	MessagesDir  = "messages" // chat messages Parquet (TRL)
	JSONLDir     = "jsonl"    // every row with its cards and accounting
	ReadmeFile   = "README.md"
	ReportFile   = "sft.json"
	RejectsFile  = "rejects.jsonl"
	PrevSuffix   = ".prev"
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
// stage's: everything is written and synced in a temporary directory
// beside out, which then takes out's place (on Linux by one atomic
// exchange); the output it replaces is kept as out.prev. Write refuses to
// replace a directory that is neither empty nor an SFT output.
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	for _, p := range []string{out, out + PrevSuffix} {
		if err := checkReplaceable(p); err != nil {
			return fmt.Errorf("write sft data %s: %w", out, err)
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	stale, _ := filepath.Glob(filepath.Join(parent, "."+base+".tmp-*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("write sft data %s: remove stale %s: %w", out, s, err)
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	if err := writeTree(ctx, tmp, r, cmp.Or(max(opts.ShardRows, 0), defaultShard)); err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	if err := replaceDir(tmp, out); err != nil {
		return fmt.Errorf("write sft data %s: %w", out, err)
	}
	return nil
}

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
		if err := writeJSONL(filepath.Join(dir, JSONLDir, split+".jsonl"), rows); err != nil {
			return err
		}
	}
	if err := writeJSONL(filepath.Join(dir, RejectsFile), r.Rejects); err != nil {
		return err
	}
	rep, err := json.MarshalIndent(r.Report, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, ReportFile), append(rep, '\n')); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, ReadmeFile), []byte(readme(r, bySplit))); err != nil {
		return err
	}
	for _, sub := range []string{DataDir, MessagesDir, JSONLDir, "."} {
		if err := syncDir(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return nil
}

// writeParquet writes rows as one zstd-compressed Parquet file with the
// dataset stage's row-group size, synced before it returns.
func writeParquet[T any](path string, rows []T, extra ...parquet.WriterOption) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write %s: %w", path, cerr)
		}
	}()
	opts := append([]parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(rowGroupRows)}, extra...)
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeJSONL[T any](path string, rows []T) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Sync()
}

func writeFileSync(path string, data []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Sync()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// checkReplaceable returns nil when path is absent, an empty directory or
// an SFT output (README.md and sft.json), so Write never moves aside a
// directory it did not write.
func checkReplaceable(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	for _, f := range []string{ReadmeFile, ReportFile} {
		if _, err := os.Stat(filepath.Join(path, f)); err != nil {
			return fmt.Errorf("refusing to replace %s: it is not empty and not an SFT output (no %s and %s)", path, ReadmeFile, ReportFile)
		}
	}
	return nil
}

// replaceDir puts tmp at out, keeping what out held as out.prev.
func replaceDir(tmp, out string) error {
	parent, prev := filepath.Dir(out), out+PrevSuffix
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return syncDir(parent)
	}
	if err := os.RemoveAll(prev); err != nil {
		return err
	}
	switch err := exchange(tmp, out); {
	case err == nil:
		if err := os.Rename(tmp, prev); err != nil { // tmp holds the old output now
			return err
		}
	case errors.Is(err, errNoExchange):
		// Between these renames out is absent and prev is complete.
		if err := os.Rename(out, prev); err != nil {
			return err
		}
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
	default:
		return err
	}
	return syncDir(parent)
}

// errNoExchange means the system cannot swap two directories atomically.
var errNoExchange = errors.New("atomic exchange not supported")
