package dataset

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")

func TestSchemaGolden(t *testing.T) {
	got := parquet.SchemaOf(new(record.Instance)).String()
	path := filepath.Join("testdata", "schema.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the Parquet schema changed; Python readers see a different table.\ngot:\n%s\nwant:\n%s\n(run go test ./dataset -run SchemaGolden -update if the change is intended)", got, want)
	}
}

// normalize makes nil and empty slices alike: a required Parquet LIST
// cannot tell them apart and reads back empty.
func normalize(ins []record.Instance) []record.Instance {
	out := make([]record.Instance, len(ins))
	for i, in := range ins {
		in.Target.Categories = nonNil(in.Target.Categories)
		in.Sources = nonNil(slices.Clone(in.Sources))
		for j := range in.Sources {
			in.Sources[j].Labels = nonNil(in.Sources[j].Labels)
			in.Sources[j].Quotes = nonNil(in.Sources[j].Quotes)
		}
		out[i] = in
	}
	return out
}

func writeTestDataset(t *testing.T, out string, r *Result, opts WriteOptions) {
	t.Helper()
	if _, err := Write(context.Background(), out, r, opts); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func TestWriteLayoutAndRoundTrip(t *testing.T) {
	r := mustBuild(t, append(corpus(), makeTarget("2402.00006", "2024-02-06", "cs.CL", 3), makeTarget("2402.00007", "2024-02-07", "cs.CL", 3)), fixedOptions())
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{ShardRows: 2, RowGroupRows: 1, JSONL: true})

	var files []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	want := []string{
		ContaminationFile, ReadmeFile, "data/test-00000-of-00001.parquet",
		"data/train-00000-of-00003.parquet", "data/train-00001-of-00003.parquet", "data/train-00002-of-00003.parquet",
		DroppedFile, GuardsFile, InstancesFile, publish.ManifestFile, TemplateFile, LicenseFile, // no licence recorded: LICENSE.md says so
	}
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Errorf("files %v\nwant %v", files, want)
	}

	p, err := ReadDataset(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(p.Instances), normalize(r.Instances)) {
		t.Errorf("round trip changed the instances")
		for i := range min(len(p.Instances), len(r.Instances)) {
			if !reflect.DeepEqual(normalize(p.Instances[i:i+1]), normalize(r.Instances[i:i+1])) {
				t.Errorf("first difference at row %d:\n got %+v\nwant %+v", i, p.Instances[i], r.Instances[i])
				break
			}
		}
	}

	// Row groups are bounded: one row each here.
	f, err := os.Open(filepath.Join(out, "data/train-00000-of-00003.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n != 2 {
		t.Errorf("%d row groups, want 2 (RowGroupRows 1, 2 rows)", n)
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec.String() != "SNAPPY" {
				t.Fatalf("column %v codec %v, want SNAPPY (the default)", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}

	readme, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
	for _, s := range []string{"configs:", "path: data/train-*", "path: data/test-*", "dataset_info:", "  features:",
		"  - name: sources\n    list:\n    - name: doc_number\n      dtype: int64", "    - name: categories\n      list: string",
		"  - name: train\n    num_examples: 5", "  - name: test\n    num_examples: 2", "Policy `drop-train`"} {
		if !strings.Contains(string(readme), s) {
			t.Errorf("README lacks %q", s)
		}
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		writeTestDataset(t, filepath.Join(dir, name), mustBuild(t, corpus(), fixedOptions()), WriteOptions{})
	}
	for _, f := range []string{"data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet", ReadmeFile, ContaminationFile, DroppedFile} {
		a, _ := os.ReadFile(filepath.Join(dir, "a", f))
		b, _ := os.ReadFile(filepath.Join(dir, "b", f))
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same inputs and CreatedAt", f)
		}
	}
}

// TestAtomicReplace interrupts writes at every step; the previous dataset
// must stay complete and readable, and the next write must succeed.
func TestAtomicReplace(t *testing.T) {
	ctx := context.Background()
	old := mustBuild(t, corpus()[:3], fixedOptions())
	next := mustBuild(t, corpus(), fixedOptions())
	steps := []string{"write data/train-00000-of-00002.parquet", "write data/test-00000-of-00001.parquet", "write " + ReadmeFile, "built", "swap"}
	// (Interruptions during the swap are covered by TestWriteSwap.)
	for _, step := range steps {
		for _, crash := range []bool{false, true} {
			name := step
			if crash {
				name += " (crash)"
			}
			t.Run(name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "ds")
				writeTestDataset(t, out, old, WriteOptions{})
				fail := errors.New("disk full")
				if crash {
					fail = atomicdir.ErrSimulatedCrash
				}
				_, err := Write(ctx, out, next, WriteOptions{ShardRows: 2, hook: func(s string) error {
					if s == step {
						return fail
					}
					return nil
				}})
				if !errors.Is(err, fail) {
					t.Fatalf("Write error %v, want %v", err, fail)
				}
				if rep, err := Check(ctx, out); err != nil || rep.Counts != (SplitCounts{Train: 3}) {
					t.Fatalf("the previous dataset is damaged: %v %+v", err, rep)
				}
				tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".ds.tmp-*"))
				if crash != (len(tmps) == 1) {
					t.Errorf("temporary directories left: %v (crash %v)", tmps, crash)
				}
				// The next write cleans up and replaces.
				writeTestDataset(t, out, next, WriteOptions{})
				if rep, err := Check(ctx, out); err != nil || rep.Counts != (SplitCounts{Train: 3, Test: 2}) {
					t.Fatalf("after a good write: %v %+v", err, rep)
				}
				if rep, err := Check(ctx, out+PrevSuffix); err != nil || rep.Counts != (SplitCounts{Train: 3}) {
					t.Errorf("previous dataset not kept as .prev: %v %+v", err, rep)
				}
				if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".ds.tmp-*")); len(tmps) != 0 {
					t.Errorf("temporary directories left after a good write: %v", tmps)
				}
			})
		}
	}
}

// TestWriteSwap covers both swaps: the atomic exchange and the two-rename
// fallback, whole and interrupted between their steps.
func TestWriteSwap(t *testing.T) {
	ctx := context.Background()
	old := mustBuild(t, corpus()[:3], fixedOptions())
	next := mustBuild(t, corpus(), fixedOptions())
	noExchange := func(a, b string) error { return atomicdir.ErrNoExchange }
	oldCounts, nextCounts := SplitCounts{Train: 3}, SplitCounts{Train: 3, Test: 2}
	tests := []struct {
		name     string
		exchange func(a, b string) error // nil: the system's
		step     string
		wantOut  *SplitCounts // the dataset at out after the write; nil: none
		wantPrev *SplitCounts
	}{
		{"exchange", nil, "", &nextCounts, &oldCounts},
		{"exchange interrupted", nil, "exchanged", &nextCounts, nil},
		{"fallback", noExchange, "", &nextCounts, &oldCounts},
		{"fallback interrupted", noExchange, "moved-aside", nil, &oldCounts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ds")
			writeTestDataset(t, out, old, WriteOptions{})
			_, err := Write(ctx, out, next, WriteOptions{exchange: tt.exchange, hook: func(s string) error {
				if s == tt.step {
					return atomicdir.ErrSimulatedCrash
				}
				return nil
			}})
			if (err != nil) != (tt.step != "") {
				t.Fatalf("Write: %v", err)
			}
			for _, c := range []struct {
				dir  string
				want *SplitCounts
			}{{out, tt.wantOut}, {out + PrevSuffix, tt.wantPrev}} {
				rep, err := Check(ctx, c.dir)
				switch {
				case c.want == nil && !errors.Is(err, os.ErrNotExist):
					t.Errorf("%s: %v %+v, want no dataset", c.dir, err, rep)
				case c.want != nil && (err != nil || rep.Counts != *c.want):
					t.Errorf("%s: %v %+v, want %+v", c.dir, err, rep, *c.want)
				}
			}
			// The next write completes whatever was interrupted.
			writeTestDataset(t, out, next, WriteOptions{})
			if rep, err := Check(ctx, out); err != nil || rep.Counts != nextCounts {
				t.Fatalf("after a good write: %v %+v", err, rep)
			}
			if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".ds.tmp-*")); len(tmps) != 0 {
				t.Errorf("temporary directories left after a good write: %v", tmps)
			}
		})
	}
}

func TestWriteRefusesForeignDirectory(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("years of work"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(context.Background(), out, mustBuild(t, corpus(), fixedOptions()), WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("Write over a foreign directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "thesis.tex")); err != nil {
		t.Errorf("foreign file gone: %v", err)
	}
}

// TestCardLicenceAndUse: the card's YAML has a licence and a size
// category; its body states the papers' licence mix, that their text may
// not be redistributable, and how to load the data in datasets, pandas,
// DuckDB, verl and TRL.
func TestCardLicenceAndUse(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	var licenseFile string // LICENSE.md of the last card, "" if none
	card := func(licenses map[string]string) string {
		out := filepath.Join(t.TempDir(), "ds")
		writeTestDataset(t, out, r, WriteOptions{Licenses: licenses})
		b, err := os.ReadFile(filepath.Join(out, ReadmeFile))
		if err != nil {
			t.Fatal(err)
		}
		l, _ := os.ReadFile(filepath.Join(out, LicenseFile))
		licenseFile = string(l)
		return string(b)
	}
	c := card(nil)
	header, _, _ := strings.Cut(strings.TrimPrefix(c, "---\n"), "\n---\n")
	// license: other needs license_name and license_link, which names a
	// file of the dataset (the Hub's dataset card spec).
	for _, want := range []string{"license: other", "license_name: mixed-paper-licenses", "license_link: " + LicenseFile, "size_categories:\n- n<1K"} {
		if !strings.Contains(header, want) {
			t.Errorf("YAML header lacks %q:\n%s", want, header)
		}
	}
	if !strings.Contains(licenseFile, "may not be redistributable") || !strings.Contains(licenseFile, "is not recorded") {
		t.Errorf("%s does not state the licences:\n%s", LicenseFile, licenseFile)
	}
	for _, want := range []string{"may not be redistributable", fmt.Sprintf("The licence of the %d target papers is not recorded", len(r.Instances)),
		"from datasets import load_dataset", "import pandas as pd", "FROM 'data/*.parquet'", "curate export --format verl-rl", "custom_reward_function.path=rl/reward.py",
		"data.prompt_key=prompt data.response_key=response", "data.messages_key=messages", "curate export --format trl-sft", "SFTTrainer", "GRPOTrainer"} {
		if !strings.Contains(c, want) {
			t.Errorf("card lacks %q", want)
		}
	}

	all := map[string]string{}
	for _, in := range r.Instances {
		all[in.Target.ArxivID] = "http://creativecommons.org/licenses/by/4.0/"
	}
	if c := card(all); !strings.Contains(c, "\nlicense: cc-by-4.0\n") || strings.Contains(c, "license_name") || strings.Contains(c, "license_link") || licenseFile != "" {
		t.Errorf("every target CC BY 4.0: the header does not say so (or links a %s of %d bytes):\n%.300s", LicenseFile, len(licenseFile), c)
	}
	all[r.Instances[0].Target.ArxivID] = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
	delete(all, r.Instances[1].Target.ArxivID)
	c = card(all)
	for _, want := range []string{"license: other", fmt.Sprintf("| http://creativecommons.org/licenses/by/4.0/ | %d |", len(r.Instances)-2),
		"| http://arxiv.org/licenses/nonexclusive-distrib/1.0/ | 1 |", "| (not recorded) | 1 |", "`licenses.json`"} {
		if !strings.Contains(c, want) || !strings.Contains(licenseFile, strings.ReplaceAll(want, "license: other", "| licence |")) {
			t.Errorf("mixed licences: card or %s lacks %q\n%s", LicenseFile, want, licenseFile)
		}
	}
	if strings.Contains(c, "none named") {
		t.Error("mixed licences: the card counts targets whose metadata names none, but every recorded one names a licence")
	}
	// A record that names no licence is not a licence, nor unrecorded.
	all[r.Instances[1].Target.ArxivID] = ""
	for _, in := range r.Instances[2:] {
		all[in.Target.ArxivID] = "http://creativecommons.org/licenses/by/4.0/"
	}
	c = card(all)
	for _, want := range []string{"license: other", "| (none named in the arXiv metadata) | 1 |"} {
		if !strings.Contains(c, want) {
			t.Errorf("a licence named by none: card lacks %q", want)
		}
	}
	if strings.Contains(c, "(not recorded)") {
		t.Error("every licence recorded, yet the card counts some as not recorded")
	}
	delete(all, r.Instances[0].Target.ArxivID)
	all[r.Instances[1].Target.ArxivID] = "http://creativecommons.org/licenses/by/4.0/"
	if c := card(all); !strings.Contains(c, "license: other") || strings.Contains(c, "license: cc-by-4.0") {
		t.Error("one target not recorded, yet the header names one licence for all")
	}
	if sizeCategory(999) != "n<1K" || sizeCategory(1000) != "1K<n<10K" || sizeCategory(123_456) != "100K<n<1M" {
		t.Error("sizeCategory")
	}
}

// TestLicensesFile: licenses.json lists each target's recorded licence
// (and only the dataset's targets), and is absent when none is recorded.
func TestLicensesFile(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	out := filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{})
	if _, err := os.Stat(filepath.Join(out, LicensesFile)); !os.IsNotExist(err) {
		t.Errorf("%s written with no licence recorded: %v", LicensesFile, err)
	}
	if got, err := ReadLicenses(out); err != nil || len(got) != 0 {
		t.Errorf("ReadLicenses of a dataset without licences: %v, %v", got, err)
	}
	a, b := r.Instances[0].Target.ArxivID, r.Instances[1].Target.ArxivID
	lic := map[string]string{a: "http://creativecommons.org/licenses/by/4.0/", b: "", "9912.00001": "not a target"}
	out = filepath.Join(t.TempDir(), "ds")
	writeTestDataset(t, out, r, WriteOptions{Licenses: lic})
	got, err := ReadLicenses(out)
	if want := map[string]string{a: lic[a], b: ""}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("licenses.json %v, %v; want %v", got, err, want)
	}
	if _, err := CheckTree(context.Background(), out); err != nil {
		t.Errorf("a dataset with licenses.json fails its check: %v", err)
	}
}
