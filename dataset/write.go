package dataset

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
	"slices"
	"strings"

	"github.com/groundwork/curate/record"
)

// Files of a published dataset directory.
const (
	DataDir           = "data"
	ReadmeFile        = "README.md"
	ContaminationFile = "contamination.json"
	DroppedFile       = "dropped.json"
	TemplateFile      = "model-input.prompt"
	InstancesFile     = "instances.jsonl"
	// PrevSuffix names the previous dataset kept beside OUT: OUT.prev.
	PrevSuffix = ".prev"
)

// WriteOptions configure Write. The zero value is usable.
type WriteOptions struct {
	// ShardRows is the most rows in one Parquet file (0: 10,000).
	ShardRows int
	// RowGroupRows and RowGroupBytes bound a row group: it is cut at
	// RowGroupRows rows or once its buffered (uncompressed) size passes
	// RowGroupBytes (0: 1,000 rows, 64 MiB).
	RowGroupRows  int64
	RowGroupBytes int64
	// JSONL also writes every instance to instances.jsonl.
	JSONL bool

	// hook, when set (by tests), runs at each step of a write; an error
	// aborts the write there. errCrash aborts it as a crash would: the
	// temporary directory is left behind.
	hook func(step string) error
}

// errCrash is returned by a test hook to stop Write like a kill -9.
var errCrash = errors.New("simulated crash")

// Write publishes r as a dataset in directory out:
//
//	out/README.md                              dataset card (Hugging Face YAML header)
//	out/data/train-00000-of-0000N.parquet      the train split, ShardRows rows a file
//	out/data/test-00000-of-0000M.parquet       the test split
//	out/contamination.json                     rules, counts, every violation and its resolution
//	out/dropped.json                           every target left out, with its reason
//	out/model-input.prompt                     the template that rendered the prompts
//	out/instances.jsonl                        (WriteOptions.JSONL) every instance as JSON
//
// The write is atomic: the dataset is built in a temporary directory
// beside out (".out.tmp-*"), every file and directory is synced, and then
// it takes out's place by rename. The dataset it replaces is kept as
// out.prev (one generation; an older out.prev is removed). On Linux the
// swap is one renameat2(RENAME_EXCHANGE), so out is at every moment
// either the old or the new dataset; elsewhere out is briefly absent
// between two renames, with the old dataset complete in out.prev. A
// crash before the swap leaves out untouched and a temporary directory
// that the next Write removes. Write refuses to replace a directory that
// is neither empty nor a dataset. One Write per out at a time: a second
// would remove the first's temporary directory (the CLI holds the store
// lock while it writes).
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (err error) {
	opts = opts.withDefaults()
	hook := opts.hook
	if hook == nil {
		hook = func(string) error { return nil }
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	if err := checkReplaceable(out); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	if err := checkReplaceable(out + PrevSuffix); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	// Temporary directories of writes that crashed.
	stale, _ := filepath.Glob(filepath.Join(parent, "."+base+".tmp-*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("write dataset %s: remove stale %s: %w", out, s, err)
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	defer func() {
		if err != nil && !errors.Is(err, errCrash) {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	if err := writeTree(ctx, tmp, r, opts, hook); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	if err := hook("swap"); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	if err := replaceDir(tmp, out, hook, exchange); err != nil {
		return fmt.Errorf("write dataset %s: %w", out, err)
	}
	return nil
}

// writeTree writes every file of the dataset into dir and syncs it.
func writeTree(ctx context.Context, dir string, r *Result, opts WriteOptions, hook func(string) error) error {
	data := filepath.Join(dir, DataDir)
	if err := os.Mkdir(data, 0o755); err != nil {
		return err
	}
	ins := slices.Clone(r.Instances)
	sortInstances(ins)
	splits := map[string][]record.Instance{}
	for _, in := range ins {
		splits[in.Split] = append(splits[in.Split], in)
	}
	tmpl, err := LoadTemplate()
	if err != nil {
		return err
	}
	kv := map[string]string{"groundwork.template_version": tmpl.Version()}
	files := map[string][]string{}
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		rows := splits[split]
		n := numShards(len(rows), opts.ShardRows)
		kv["groundwork.split"] = split
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo, hi := min(i*opts.ShardRows, len(rows)), min((i+1)*opts.ShardRows, len(rows))
			name := shardName(split, i, n)
			if err := writeParquet(filepath.Join(data, name), rows[lo:hi], opts, kv, instanceOptions()...); err != nil {
				return err
			}
			files[split] = append(files[split], DataDir+"/"+name)
			if err := hook("write " + DataDir + "/" + name); err != nil {
				return err
			}
		}
	}
	if err := syncDir(data); err != nil {
		return err
	}

	var readme strings.Builder
	if err := writeCard(&readme, r, tmpl, files); err != nil {
		return err
	}
	// Sorted here too: a caller may append the targets LoadTargets left out.
	dropped := nonNil(slices.Clone(r.Dropped))
	slices.SortStableFunc(dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	writes := []struct {
		name string
		data func() ([]byte, error)
	}{
		{ContaminationFile, func() ([]byte, error) { return marshalJSON(r.Contamination) }},
		{DroppedFile, func() ([]byte, error) { return marshalJSON(dropped) }},
		{TemplateFile, func() ([]byte, error) { return []byte(tmpl.Text()), nil }},
		{ReadmeFile, func() ([]byte, error) { return []byte(readme.String()), nil }},
	}
	for _, w := range writes {
		b, err := w.data()
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		if err := writeFileSync(filepath.Join(dir, w.name), b); err != nil {
			return err
		}
		if err := hook("write " + w.name); err != nil {
			return err
		}
	}
	if opts.JSONL {
		if err := writeJSONL(filepath.Join(dir, InstancesFile), ins); err != nil {
			return err
		}
		if err := hook("write " + InstancesFile); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func marshalJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func writeJSONL(path string, ins []record.Instance) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range ins {
		if err := enc.Encode(&ins[i]); err != nil {
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
// a dataset (it has README.md and data/), and an error otherwise: Write
// never moves aside a directory it did not write.
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
	if len(entries) == 0 || isDataset(path) {
		return nil
	}
	return fmt.Errorf("refusing to replace %s: it is not empty and not a dataset (no %s and %s/)", path, ReadmeFile, DataDir)
}

func isDataset(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, DataDir))
	if err != nil || !fi.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ReadmeFile))
	return err == nil
}

// replaceDir puts the complete dataset tmp at out, keeping the dataset out
// held as out.prev; exchange swaps two directories atomically or returns
// errNoExchange.
func replaceDir(tmp, out string, hook func(string) error, exchange func(a, b string) error) error {
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
		// tmp now holds the previous dataset.
		if err := hook("exchanged"); err != nil {
			return err
		}
		if err := os.Rename(tmp, prev); err != nil {
			return err
		}
	case errors.Is(err, errNoExchange):
		// Between these renames out is absent and prev is complete.
		if err := os.Rename(out, prev); err != nil {
			return err
		}
		if err := hook("moved-aside"); err != nil {
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
