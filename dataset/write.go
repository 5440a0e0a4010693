package dataset

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/modelinput"
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
	LicensesFile      = "licenses.json"
	// LicenseFile states the papers' licences when they are not one the
	// Hub has an identifier for: the card's license_link names it.
	LicenseFile = "LICENSE.md"
	// PrevSuffix names the previous dataset kept beside OUT: OUT.prev.
	PrevSuffix = atomicdir.PrevSuffix
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
	// Compression is the Parquet page codec ("": parquetcodec.Default,
	// Snappy, which every reader has).
	Compression parquetcodec.Codec
	// Licenses maps a target's versionless arXiv ID to the licence URL
	// its arXiv metadata gives ("" when the metadata names none), for the
	// card's licence mix and licenses.json; targets not in it are counted
	// as not recorded.
	Licenses map[string]string
	// JSONL also writes every instance to instances.jsonl.
	JSONL bool
	// Report also writes report.html and report.json.
	Report bool
	// Extra files (name → content) written beside the dataset's own, such
	// as a refresh's changelog.
	Extra map[string][]byte
	// Version (curate's) and Inputs (a digest of what the dataset was
	// built from) go into the manifest; with Inputs set, a dataset already
	// published from the same inputs by the same version whose files all
	// verify is left as it is (Write returns false).
	Version, Inputs string
	// Locked says the caller holds out's publishing lock (publish.Lock),
	// as a run does from its start.
	Locked bool

	// hook, when set (by tests), runs at each step of a write ("write
	// FILE", then atomicdir's steps); an error aborts the write there.
	// atomicdir.ErrSimulatedCrash aborts it as a crash would: the
	// temporary directory is left behind.
	hook func(step string) error
	// exchange, when set (by tests), replaces the atomic directory swap
	// (see atomicdir.Options.Exchange).
	exchange func(a, b string) error
}

// Write publishes r as a dataset in directory out:
//
//	out/README.md                              dataset card (Hugging Face YAML header)
//	out/data/train-00000-of-0000N.parquet      the train split, ShardRows rows a file
//	out/data/test-00000-of-0000M.parquet       the test split
//	out/contamination.json                     rules, counts, every violation and its resolution
//	out/dropped.json                           every target left out, with its reason
//	out/model-input.prompt                     the template that rendered the prompts
//	out/licenses.json                          each target's licence, when any is recorded (WriteOptions.Licenses)
//	out/instances.jsonl                        (WriteOptions.JSONL) every instance as JSON
//	out/report.html, out/report.json           (WriteOptions.Report) the report
//	out/manifest.json                          every file's size and SHA-256, the inputs digest
//
// The write goes through publish.Dir: under a lock on out, the dataset is
// built in a temporary directory beside out (".out.tmp-*"), every file
// and directory is synced, the dataset is checked (CheckTree) — one that
// fails its own check is never published — and then it takes out's place
// by rename. The dataset it replaces is kept as out.prev (one generation;
// an older out.prev is removed). On Linux the swap is one
// renameat2(RENAME_EXCHANGE), so out is at every moment either the old or
// the new dataset; elsewhere out is briefly absent between two renames,
// with the old dataset complete in out.prev. A crash before the swap
// leaves out untouched and a temporary directory that the next Write
// removes. What the user keeps in out beside the files its manifest lists
// (a .git/ history, notes) is carried into the new dataset and never
// deleted. Write refuses (publish.ErrNotOurs) a directory that is neither
// empty nor a dataset, or that holds the user's files among its shards,
// and a second writer of the same out while one is writing
// (publish.ErrLocked). It reports whether it published: false when out
// was already up to date (WriteOptions.Inputs).
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (published bool, err error) {
	opts = opts.withDefaults()
	if opts.Version == "" {
		// The manifest's curate version is the rows' pipeline version.
		opts.Version = r.Options.PipelineVersion
	}
	hook := opts.hook
	if hook == nil {
		hook = func(string) error { return nil }
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return false, fmt.Errorf("write dataset %s: %w", out, err)
	}
	published, err = publish.Dir(ctx, out, publishOptions(opts), func(tmp string) error {
		rep, err := writeTree(ctx, tmp, r, opts, hook)
		if err != nil {
			return err
		}
		if opts.Report {
			if _, err := writeReport(rep.data(r.Dropped, r.Contamination), tmp); err != nil {
				return fmt.Errorf("report %s: %w", tmp, err)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(opts.Extra)) {
			if err := atomicdir.WriteFileSync(filepath.Join(tmp, name), opts.Extra[name]); err != nil {
				return err
			}
		}
		check, err := CheckTree(ctx, tmp)
		if err != nil {
			return fmt.Errorf("the dataset fails its own check, so it is not published: %w%s", err, check.describe())
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("write dataset %s: %w", out, err)
	}
	return published, nil
}

// ManifestKind is the kind a dataset's manifest names.
const ManifestKind = "dataset"

// CheckOut says, writing nothing, whether Write could publish at out: nil
// for an absent or empty directory or a dataset (the user's files in it
// are kept), an error wrapping publish.ErrNotOurs for a directory it would
// refuse (see publish.Check).
func CheckOut(out string) error {
	return publish.Check(out, publishOptions(WriteOptions{}))
}

// publishOptions are the publish.Options of a dataset written with opts.
func publishOptions(opts WriteOptions) publish.Options {
	return publish.Options{
		Kind: ManifestKind, Version: opts.Version, Inputs: opts.Inputs,
		Splits:   []string{record.SplitTrain, record.SplitTest},
		Describe: fmt.Sprintf("a dataset (no %s of kind %s)", publish.ManifestFile, ManifestKind),
		KeepPrev: true,
		Locked:   opts.Locked,
		Hook:     opts.hook,
		Exchange: opts.exchange,
	}
}

// writeTree writes every file of the dataset into dir, each synced,
// reading the instances once (twice with JSONL), and returns the report's
// figures gathered on the way.
func writeTree(ctx context.Context, dir string, r *Result, opts WriteOptions, hook func(string) error) (*reportAcc, error) {
	data := filepath.Join(dir, DataDir)
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, err
	}
	card := newCardAcc(opts.Licenses)
	card.fieldDecls = r.Options.Fields
	card.guards = r.Guards
	rep := &reportAcc{}
	kv := map[string]string{"groundwork.template_version": tmpl.Version()}
	files := map[string][]string{}
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		rows := r.rows(split)
		n := numShards(rows, opts.ShardRows)
		kv["groundwork.split"] = split
		for i := range n {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			lo, hi := min(i*opts.ShardRows, rows), min((i+1)*opts.ShardRows, rows)
			name := shardName(split, i, n)
			err := atomicdir.WriteFileFunc(filepath.Join(data, name), func(w io.Writer) error {
				return encodeInstances(w, func(write func(*record.Instance) error) error {
					return r.eachIn(split, lo, hi, func(in *record.Instance) error {
						card.add(in)
						rep.add(in)
						return write(in)
					})
				}, opts, kv, r.Options.Fields)
			})
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", DataDir, name, err)
			}
			files[split] = append(files[split], DataDir+"/"+name)
			if err := hook("write " + DataDir + "/" + name); err != nil {
				return nil, err
			}
		}
	}

	var readme strings.Builder
	if err := writeCard(&readme, r, card, tmpl, files); err != nil {
		return nil, err
	}
	// Sorted here too: a caller may append the targets LoadTargets left out.
	dropped := nonNil(slices.Clone(r.Dropped))
	slices.SortStableFunc(dropped, func(a, b Dropped) int { return cmp.Compare(a.TargetID, b.TargetID) })
	type file struct {
		name string
		data func() ([]byte, error)
	}
	writes := []file{
		{ContaminationFile, func() ([]byte, error) { return marshalJSON(r.Contamination) }},
		{DroppedFile, func() ([]byte, error) { return marshalJSON(dropped) }},
		{TemplateFile, func() ([]byte, error) { return []byte(tmpl.Text()), nil }},
		{ReadmeFile, func() ([]byte, error) { return []byte(readme.String()), nil }},
	}
	if g := r.Guards.withPublished(card.guarded); g != nil {
		rep.guards = g
		writes = append(writes, file{GuardsFile, func() ([]byte, error) { return marshalJSON(g) }})
	}
	if lic := card.targetLicenses; len(lic) > 0 {
		writes = append(writes, file{LicensesFile, func() ([]byte, error) { return marshalJSON(lic) }})
	}
	if card.mix.hfID() == "" {
		writes = append(writes, file{LicenseFile, func() ([]byte, error) { return []byte(licenseText(card.mix)), nil }})
	}
	for _, w := range writes {
		b, err := w.data()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		if err := atomicdir.WriteFileSync(filepath.Join(dir, w.name), b); err != nil {
			return nil, err
		}
		if err := hook("write " + w.name); err != nil {
			return nil, err
		}
	}
	if opts.JSONL {
		err := atomicdir.WriteFileFunc(filepath.Join(dir, InstancesFile), func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			enc := json.NewEncoder(bw)
			enc.SetEscapeHTML(false)
			line, err := instanceJSON(enc, r.Options.Fields)
			if err != nil {
				return err
			}
			if err := r.Each(line); err != nil {
				return err
			}
			return bw.Flush()
		})
		if err != nil {
			return nil, err
		}
		if err := hook("write " + InstancesFile); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func marshalJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadLicenses reads the licenses.json of a published dataset: target ID
// to licence URL ("" when its arXiv metadata names none); an empty map
// when the dataset records none.
func ReadLicenses(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, LicensesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read licences of %s: %w", dir, err)
	}
	out := map[string]string{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("read licences of %s: %s: %w", dir, LicensesFile, err)
	}
	return out, nil
}
