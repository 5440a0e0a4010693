package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/record"
)

// Defaults of WriteOptions.
const (
	DefaultShardRows     = 10_000
	DefaultRowGroupRows  = 1_000
	DefaultRowGroupBytes = 64 << 20
)

// shardName is the Hugging Face file name of shard i of n of a split.
func shardName(split string, i, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.parquet", split, i, n)
}

var shardPattern = regexp.MustCompile(`^(train|test)-(\d{5})-of-(\d{5})\.parquet$`)

// parseShardName returns the split, index and count of a shard file name.
func parseShardName(name string) (split string, i, n int, ok bool) {
	m := shardPattern.FindStringSubmatch(name)
	if m == nil {
		return "", 0, 0, false
	}
	i, _ = strconv.Atoi(m[2])
	n, _ = strconv.Atoi(m[3])
	return m[1], i, n, i < n
}

// numShards returns how many files rows of a split take: at least one,
// so that every split has a file even when it is empty.
func numShards(rows, perShard int) int {
	return max(1, (rows+perShard-1)/perShard)
}

// encodeParquet writes rows as a Parquet file to w.
func encodeParquet[T any](w io.Writer, rows []T, o WriteOptions, kv map[string]string, extra ...parquet.WriterOption) error {
	return encodeParquetSeq(w, func(write func(*T) error) error {
		for i := range rows {
			if err := write(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}, o, kv, extra...)
}

// encodeParquetSeq writes the rows that rows passes to write, one at a
// time, as a Parquet file to w: only a row group is ever buffered.
func encodeParquetSeq[T any](w io.Writer, rows func(write func(*T) error) error, o WriteOptions, kv map[string]string, extra ...parquet.WriterOption) error {
	o = o.withDefaults()
	pw := parquet.NewGenericWriter[T](w, writerOptions(o, kv, extra...)...)
	row := make([]T, 1)
	defer clear(row)
	return flushing(pw, o, func(put func(func() error) error) error {
		return rows(func(r *T) error {
			return put(func() error {
				row[0] = *r
				_, err := pw.Write(row)
				return err
			})
		})
	})
}

// writerOptions are the options of a Parquet file written with o, its
// key-value metadata kv and extra.
func writerOptions(o WriteOptions, kv map[string]string, extra ...parquet.WriterOption) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquetcodec.CreatedBy(o.Version),
		o.Compression.WriterOption(),
		parquet.MaxRowsPerRowGroup(o.RowGroupRows),
	}
	opts = append(opts, extra...)
	for _, k := range sortedKeys(kv) {
		opts = append(opts, parquet.KeyValueMetadata(k, kv[k]))
	}
	return opts
}

// rowWriter is the part of a Parquet writer flushing uses.
type rowWriter interface {
	Size() int64
	Flush() error
	Close() error
}

// flushing writes the rows rows puts, each by the function it puts, to
// pw, flushing a row group whenever pw has buffered o.RowGroupBytes
// since the last, and closes pw.
func flushing(pw rowWriter, o WriteOptions, rows func(put func(write func() error) error) error) error {
	flushedAt := int64(0)
	i := 0
	err := rows(func(write func() error) error {
		if err := write(); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		i++
		// Size is an upper bound (pages are not compressed yet): flushing
		// on it keeps a row group's buffers, and memory, bounded.
		if s := pw.Size(); s-flushedAt >= o.RowGroupBytes {
			if err := pw.Flush(); err != nil {
				return fmt.Errorf("flush row group: %w", err)
			}
			flushedAt = pw.Size()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// readParquet reads every row of the Parquet file at path.
func readParquet[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	out := make([]T, 0, r.NumRows())
	buf := make([]T, 64)
	for {
		n, err := r.Read(buf)
		// The last batch can come with io.EOF and n > 0.
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: row %d: %w", path, len(out), err)
		}
		clear(buf)
	}
}

// instanceOptions are the writer options of Instance files: the prompt is
// a long blob whose min/max bounds say nothing.
func instanceOptions() []parquet.WriterOption {
	return []parquet.WriterOption{parquet.SkipPageBounds("prompt")}
}

// WriteParquet writes instances to w as one Parquet file with the
// dataset's settings (bounded row groups) and the codec c ("" is
// parquetcodec.Default).
func WriteParquet(w io.Writer, instances []record.Instance, c parquetcodec.Codec) error {
	if err := encodeParquet(w, instances, WriteOptions{Compression: c}, nil, instanceOptions()...); err != nil {
		return fmt.Errorf("write instances as parquet: %w", err)
	}
	return nil
}

// ReadParquet reads the instances of one Parquet file of a dataset.
func ReadParquet(path string) ([]record.Instance, error) {
	return readParquet[record.Instance](path)
}

func (o WriteOptions) withDefaults() WriteOptions {
	o.ShardRows = cmp.Or(max(o.ShardRows, 0), DefaultShardRows)
	o.RowGroupRows = cmp.Or(max(o.RowGroupRows, 0), DefaultRowGroupRows)
	o.RowGroupBytes = cmp.Or(max(o.RowGroupBytes, 0), DefaultRowGroupBytes)
	return o
}
