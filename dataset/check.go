package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// ErrInvalid is wrapped by Check's error when a dataset's files are
// incomplete or inconsistent (missing shards, rows in the wrong file,
// counts that disagree with the card).
var ErrInvalid = errors.New("dataset is invalid")

// Published is a dataset read back from its directory.
type Published struct {
	Dir       string
	Instances []record.Instance   // train then test, in file order
	Files     map[string][]string // split -> shard paths relative to Dir, in order
	Dropped   []Dropped
	// Contamination is nil when the directory has no contamination.json.
	Contamination *Contamination
}

// ReadDataset reads the dataset published in dir for a command that works
// from it (export, report, sft, refresh). A dataset whose files do not
// match its manifest, or that has missing, misnamed or unreadable shards,
// is refused with the first problems named: reading what is left of it
// would silently lose rows.
func ReadDataset(ctx context.Context, dir string) (*Published, error) {
	p, problems, err := readDataset(ctx, dir)
	if err != nil {
		return nil, err
	}
	m, mproblems, merr := publish.Verify(dir)
	switch {
	case merr != nil:
		mproblems = []string{fmt.Sprintf("no readable %s (%v)", publish.ManifestFile, merr)}
	case m.Kind != ManifestKind:
		mproblems = append(mproblems, fmt.Sprintf("%s says this is %q, not a dataset", publish.ManifestFile, m.Kind))
	}
	if all := append(mproblems, problems...); len(all) > 0 {
		rep := &CheckReport{Problems: all}
		return nil, fmt.Errorf("read dataset %s: it is damaged or incomplete (rebuild it with curate dataset; curate dataset --check %s lists every problem)%s: %w",
			dir, dir, rep.describe(), ErrInvalid)
	}
	return p, nil
}

// readDataset also returns the structural problems it noticed.
func readDataset(ctx context.Context, dir string) (*Published, []string, error) {
	p, problems, err := scanDataset(ctx, dir, true)
	return p, problems, err
}

// scanDataset reads a dataset's files: every shard's rows (into
// p.Instances only with rows; Check reads them a batch at a time
// instead), dropped.json and contamination.json, noting structural
// problems.
func scanDataset(ctx context.Context, dir string, rows bool) (*Published, []string, error) {
	p := &Published{Dir: dir, Files: map[string][]string{}}
	var problems []string
	if fi, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("read dataset: %w", err)
	} else if !fi.IsDir() {
		return nil, nil, fmt.Errorf("read dataset %s: not a directory", dir)
	}
	entries, err := os.ReadDir(filepath.Join(dir, DataDir))
	if err != nil {
		problems = append(problems, fmt.Sprintf("no readable %s/ directory: %v", DataDir, err))
	}
	shards := map[string][]int{}
	total := map[string]int{}
	for _, e := range entries {
		split, i, n, ok := parseShardName(e.Name())
		if !ok || e.IsDir() {
			problems = append(problems, fmt.Sprintf("%s/%s is not a shard (want train|test-NNNNN-of-NNNNN.parquet)", DataDir, e.Name()))
			continue
		}
		if t, seen := total[split]; seen && t != n {
			problems = append(problems, fmt.Sprintf("%s/%s: %s shards disagree on their count (%d and %d)", DataDir, e.Name(), split, t, n))
		}
		total[split] = n
		shards[split] = append(shards[split], i)
	}
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		idx := shards[split]
		slices.Sort(idx)
		if len(idx) == 0 {
			problems = append(problems, fmt.Sprintf("no %s shard in %s/", split, DataDir))
			continue
		}
		for want := range total[split] {
			if !slices.Contains(idx, want) {
				problems = append(problems, fmt.Sprintf("missing %s/%s", DataDir, shardName(split, want, total[split])))
			}
		}
		for _, i := range idx {
			rel := DataDir + "/" + shardName(split, i, total[split])
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			missing, err := shardColumns(filepath.Join(dir, rel))
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is unreadable: %v", rel, err))
				continue
			}
			if len(missing) > 0 {
				problems = append(problems, fmt.Sprintf("%s lacks columns %s", rel, strings.Join(missing, ", ")))
			}
			j := 0
			if err := readRows(splitFiles(dir, rel), func(_ int, v *splitView) error {
				if v.Split != split {
					problems = append(problems, fmt.Sprintf("%s row %d (%s) has split %q", rel, j, v.InstanceID, v.Split))
				}
				j++
				return nil
			}); err != nil {
				problems = append(problems, fmt.Sprintf("%s is unreadable: %v", rel, err))
				continue
			}
			if rows {
				in, err := readParquet[record.Instance](filepath.Join(dir, rel))
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s is unreadable: %v", rel, err))
					continue
				}
				p.Instances = append(p.Instances, in...)
			}
			p.Files[split] = append(p.Files[split], rel)
		}
	}

	if err := readJSON(filepath.Join(dir, DroppedFile), &p.Dropped); err != nil && !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, fmt.Sprintf("%s is unreadable: %v", DroppedFile, err))
	}
	var c Contamination
	switch err := readJSON(filepath.Join(dir, ContaminationFile), &c); {
	case err == nil:
		p.Contamination = &c
	case errors.Is(err, fs.ErrNotExist):
		problems = append(problems, "no "+ContaminationFile)
	default:
		problems = append(problems, fmt.Sprintf("%s is unreadable: %v", ContaminationFile, err))
	}
	return p, problems, nil
}

// splitView is the part of a row the shard check reads.
type splitView struct {
	InstanceID string `parquet:"instance_id"`
	Split      string `parquet:"split"`
}

func splitFiles(dir string, rel ...string) []string {
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = filepath.Join(dir, r)
	}
	return out
}

// shardColumns names the columns of the Instance schema a Parquet file
// lacks (a reader would fill them with zero values).
func shardColumns(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, p := range leafPaths(pf.Schema(), nil) {
		have[p] = true
	}
	var missing []string
	for _, p := range leafPaths(parquet.SchemaOf(new(record.Instance)), nil) {
		if !have[p] {
			missing = append(missing, p)
		}
	}
	return missing, nil
}

func leafPaths(n parquet.Node, prefix []string) []string {
	if n.Leaf() {
		return []string{strings.Join(prefix, ".")}
	}
	var out []string
	for _, f := range n.Fields() {
		out = append(out, leafPaths(f, append(slices.Clone(prefix), f.Name()))...)
	}
	return out
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// CheckReport is what Check found in a published dataset.
type CheckReport struct {
	Dir    string      `json:"dir"`
	Counts SplitCounts `json:"counts"`
	// Problems are structural: missing or misnamed shards, rows in the
	// wrong file, counts that disagree with the card, malformed rows.
	Problems []string `json:"problems"`
	// Violations break the contamination rules (Rules).
	Violations []Violation `json:"violations"`

	// What the files say that the manifest's own fields must agree with:
	// the rows' pipeline versions and the splits with shards.
	versions map[string]bool
	splits   []string
}

// describe lists the report's problems and violations after a colon, for
// an error message (at most a few of each).
func (r *CheckReport) describe() string {
	if r == nil {
		return ""
	}
	var parts []string
	for i, p := range r.Problems {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("… %d more problems", len(r.Problems)-i))
			break
		}
		parts = append(parts, p)
	}
	for i, v := range r.Violations {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("… %d more violations", len(r.Violations)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("violation %s: %s", v.Kind, v.InstanceID))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// OK reports whether the dataset passed.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 && len(r.Violations) == 0 }

// Check re-verifies the dataset published in dir from its files alone:
// every shard present and readable with the full schema, each row in its
// split's file and well formed (an ID derived from its target, at least
// MinSources sources numbered from 1, a complete gold card), the split
// dates against contamination.json's test_from, counts against the card
// and contamination.json, and every contamination rule. The error wraps
// ErrContaminated when there is a violation, ErrInvalid when there is
// only a structural problem; the report is returned either way unless the
// files cannot be read at all.
func Check(ctx context.Context, dir string) (*CheckReport, error) {
	rep, err := CheckTree(ctx, dir)
	if rep == nil {
		return nil, err
	}
	m, problems, merr := publish.Verify(dir)
	switch {
	case merr != nil:
		problems = []string{fmt.Sprintf("no readable %s: %v", publish.ManifestFile, merr)}
	case m.Kind != ManifestKind:
		problems = append(problems, fmt.Sprintf("%s says this is %q, not a dataset", publish.ManifestFile, m.Kind))
	default:
		problems = append(problems, manifestProblems(m, rep)...)
	}
	if len(problems) == 0 {
		return rep, err
	}
	rep.Problems = append(problems, rep.Problems...)
	if err == nil || !errors.Is(err, ErrContaminated) {
		err = fmt.Errorf("check %s: %d problems, first: %s: %w", dir, len(rep.Problems), rep.Problems[0], ErrInvalid)
	}
	return rep, err
}

// sha256Hex matches a SHA-256 digest written as Manifest.Inputs is.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// manifestProblems compares the manifest's own fields with what the files
// say: a manifest copied from another dataset, or edited, describes files
// it did not come with. The inputs digest digests the store's records,
// which the files cannot give back: only its form is checked.
func manifestProblems(m *publish.Manifest, rep *CheckReport) []string {
	var out []string
	versions := slices.Sorted(maps.Keys(rep.versions))
	switch {
	case m.CurateVersion == "":
		out = append(out, fmt.Sprintf("%s has no curate_version", publish.ManifestFile))
	case len(versions) > 0 && (len(versions) > 1 || versions[0] != m.CurateVersion):
		out = append(out, fmt.Sprintf("%s says curate_version %q; the rows say pipeline_version %q", publish.ManifestFile, m.CurateVersion, strings.Join(versions, ", ")))
	}
	if got := slices.Sorted(slices.Values(m.Splits)); !slices.Equal(got, slices.Sorted(slices.Values(rep.splits))) {
		out = append(out, fmt.Sprintf("%s lists splits %v; the shards hold %v", publish.ManifestFile, m.Splits, rep.splits))
	}
	if m.Inputs != "" && !sha256Hex.MatchString(m.Inputs) {
		out = append(out, fmt.Sprintf("%s's inputs_digest %q is not a SHA-256", publish.ManifestFile, m.Inputs))
	}
	return out
}

// CheckTree is Check without the manifest: the files of a dataset that is
// being built (Write checks its temporary directory with it before
// publishing).
func CheckTree(ctx context.Context, dir string) (*CheckReport, error) {
	p, problems, err := scanDataset(ctx, dir, false)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	rep := &CheckReport{Dir: dir, Problems: problems, versions: map[string]bool{}}
	var files []string
	for _, split := range []string{record.SplitTrain, record.SplitTest} {
		files = append(files, splitFiles(dir, p.Files[split]...)...)
		if len(p.Files[split]) > 0 {
			rep.splits = append(rep.splits, split)
		}
	}
	rows := parquetSet{files: files}
	mode := cardMode(filepath.Join(dir, ReadmeFile))
	if err := rows.each(func(_ int, in *record.Instance) error {
		rep.versions[in.Provenance.PipelineVersion] = true
		if in.Split == record.SplitTest {
			rep.Counts.Test++
		} else {
			rep.Counts.Train++
		}
		rep.Problems = append(rep.Problems, rowProblems(*in)...)
		rep.Problems = append(rep.Problems, cutProblems(*in, mode)...)
		return ctx.Err()
	}); err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	var testFrom *time.Time
	if c := p.Contamination; c != nil {
		if t, err := time.Parse(dateLayout, c.TestFrom); err == nil {
			testFrom = &t
		} else {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: test_from %q is not a date", ContaminationFile, c.TestFrom))
		}
		if c.After != rep.Counts {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s says train %d, test %d; the files hold train %d, test %d",
				ContaminationFile, c.After.Train, c.After.Test, rep.Counts.Train, rep.Counts.Test))
		}
	}
	rep.Problems = append(rep.Problems, cardProblems(filepath.Join(dir, ReadmeFile), rep.Counts)...)

	tmpl, err := modelinput.Load()
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	found, _, err := findViolations(rows, testFrom, tmpl)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", dir, err)
	}
	for _, f := range found {
		rep.Violations = append(rep.Violations, f.Violation)
	}
	switch {
	case len(rep.Violations) > 0:
		return rep, fmt.Errorf("check %s: %d violations (%s), %d problems: %w", dir, len(rep.Violations), kindSummary(rep.Violations), len(rep.Problems), ErrContaminated)
	case len(rep.Problems) > 0:
		return rep, fmt.Errorf("check %s: %d problems, first: %s: %w", dir, len(rep.Problems), rep.Problems[0], ErrInvalid)
	}
	return rep, nil
}

// rowProblems lists what is malformed in one row.
func rowProblems(in record.Instance) []string {
	var out []string
	bad := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("instance %s: ", in.InstanceID)+fmt.Sprintf(format, args...))
	}
	if want := InstanceID(in.Target.ArxivID); want == "" || in.InstanceID != want {
		bad("instance_id is not derived from target arxiv_id %q", in.Target.ArxivID)
	}
	if len(in.Sources) < MinSources {
		bad("%d sources, want at least %d", len(in.Sources), MinSources)
	}
	for i, s := range in.Sources {
		if s.DocNumber != i+1 {
			bad("source %d has doc_number %d", i+1, s.DocNumber)
			break
		}
	}
	if f := emptyCardField(&in.Gold); f != "" {
		bad("gold card has an empty %s", f)
	}
	if in.NumIdeas < 1 {
		bad("num_ideas %d", in.NumIdeas)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		bad("empty prompt")
	}
	return out
}

// cutProblems lists the kept sources of a row that the knowledge cut
// under mode does not allow: under strict, a source on arXiv whose
// version_date is after its instance's knowledge_cutoff, or not known
// (knowledgecut.Check, to the day the row gives).
func cutProblems(in record.Instance, mode knowledgecut.Mode) []string {
	if mode != knowledgecut.Strict {
		return nil
	}
	cutoff, _ := time.Parse(dateLayout, in.KnowledgeCutoff)
	var out []string
	for _, s := range in.Sources {
		if InstanceID(s.ArxivID) == "" {
			continue // not on arXiv: no versions to cut by
		}
		date, _ := time.Parse(dateLayout, s.VersionDate)
		if err := knowledgecut.Check(mode, cutoff, date); err != nil {
			out = append(out, fmt.Sprintf("instance %s: source %d (%s %s, dated %q; knowledge_cutoff %q): %v",
				in.InstanceID, s.DocNumber, s.ArxivID, s.Version, s.VersionDate, in.KnowledgeCutoff, err))
		}
	}
	return out
}

// knowledgeCutLine is how the dataset card states the mode of the cut.
var knowledgeCutLine = regexp.MustCompile("(?m)^Knowledge cut: `(strict|flag|off)`")

// cardMode is the knowledge cut the dataset card says the rows were made
// under; "" when it says none (a dataset of an older curate).
func cardMode(path string) knowledgecut.Mode {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	m := knowledgeCutLine.FindSubmatch(b)
	if m == nil {
		return ""
	}
	return knowledgecut.Mode(m[1])
}

var numExamples = regexp.MustCompile(`(?m)^  - name: (train|test)\n    num_examples: (\d+)$`)

// cardProblems compares the split sizes in the dataset card's YAML header
// with the rows the files hold.
func cardProblems(path string, c SplitCounts) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("no dataset card: %v", err)}
	}
	want := map[string]int{record.SplitTrain: c.Train, record.SplitTest: c.Test}
	found := map[string]bool{}
	var out []string
	for _, m := range numExamples.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[2])
		found[m[1]] = true
		if n != want[m[1]] {
			out = append(out, fmt.Sprintf("%s says %s has %d examples; the files hold %d", ReadmeFile, m[1], n, want[m[1]]))
		}
	}
	for _, s := range []string{record.SplitTrain, record.SplitTest} {
		if !found[s] {
			out = append(out, fmt.Sprintf("%s gives no num_examples for %s", ReadmeFile, s))
		}
	}
	return out
}
