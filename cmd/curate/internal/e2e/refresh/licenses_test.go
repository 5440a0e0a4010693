package refresh

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

const (
	licCCBy    = "http://creativecommons.org/licenses/by/4.0/"
	licArxivNE = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
)

// oaiLicences is a simulated OAI-PMH repository holding a record of each
// paper in lic, naming its licence ("" names none); it knows no other.
func oaiLicences(t *testing.T, c *sim.Corpus, w *sim.World, lic map[string]string) {
	t.Helper()
	for i := range w.NumTargets() {
		p := w.Target(i)
		l, ok := lic[p.ArxivID]
		if !ok {
			continue
		}
		m := sim.OAIMeta{ID: p.ArxivID, Datestamp: p.Updated, Created: p.Published, Authors: p.Authors, Title: p.Title,
			Abstract: p.Abstract, Categories: p.Categories, License: l}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
	}
}

// readCard returns a published dataset's README.md.
func readCard(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, dataset.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantMix returns the card's licence table rows for the dataset's
// targets: count per licence, "(none named ...)" and "(not recorded)".
func wantMix(in map[string]bool, lic map[string]string) (rows []string, recorded map[string]string) {
	count := map[string]int{}
	recorded = map[string]string{}
	for id := range in {
		l, ok := lic[id]
		switch {
		case !ok:
			count["(not recorded)"]++
		case l == "":
			count["(none named in the arXiv metadata)"]++
			recorded[id] = ""
		default:
			count[l]++
			recorded[id] = l
		}
	}
	for l, n := range count {
		rows = append(rows, fmt.Sprintf("| %s | %d |", l, n))
	}
	return rows, recorded
}

// TestE2ELicences: the licence lookup is opt-in; with --licenses a run
// asks arXiv's OAI-PMH repository once per target and the published card
// states the mix (per licence, none named, not recorded); a second run
// asks nothing; `curate licenses --recheck-missing` asks about the
// targets the repository did not know, and the next run's card counts the
// licence learned.
func TestE2ELicences(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 14, Targets: 12}, sim.Options{})
	w := s.World
	lic := map[string]string{}
	for i := range w.NumTargets() {
		id := w.Target(i).ArxivID
		switch i % 4 {
		case 0:
			lic[id] = licCCBy
		case 1:
			lic[id] = licArxivNE
		case 2:
			if i == 2 {
				lic[id] = "" // its record names no licence
			}
			// the others: unknown to the repository
		case 3:
			lic[id] = licCCBy
		}
	}
	corpus := sim.NewCorpus()
	oaiLicences(t, corpus, w, lic)
	oai := simtest.Serve(t, sim.OAIPMH, corpus)
	dir := t.TempDir()
	storeDir, out := filepath.Join(dir, "store"), filepath.Join(dir, "dataset")
	args := clitest.RunArgs(t, s, storeDir, out, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--oai-base", oai.URL+sim.OAIPath)
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}

	// 1. The default run asks nothing of the repository.
	code, _, stderr := clitest.Run(t, env, args...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	in, _ := clitest.Dataset(t, out)
	if len(in) == 0 {
		t.Fatal("an empty dataset")
	}
	if n := len(oai.Calls()); n != 0 {
		t.Errorf("a run without --licenses made %d OAI-PMH requests", n)
	}
	if c := readCard(t, out); !strings.Contains(c, fmt.Sprintf("The licence of the %d target papers is not recorded", len(in))) || !strings.Contains(c, "license: other\n") {
		t.Errorf("card without licences:\n%s", c)
	}

	// 2. --licenses: one GetRecord per target, the card states the mix.
	code, stdout, stderr := clitest.Run(t, env, append(args, "--licenses")...)
	if code != 0 {
		t.Fatalf("run --licenses: exit %d\n%s", code, stderr)
	}
	calls := oai.Calls()
	asked := map[string]int{}
	for _, c := range calls {
		q := c.Query()
		if q.Get("verb") != "GetRecord" || q.Get("metadataPrefix") != "arXiv" {
			t.Errorf("request %v, want GetRecord in arXiv's format", q)
		}
		asked[strings.TrimPrefix(q.Get("identifier"), "oai:arXiv.org:")]++
	}
	if len(calls) != w.NumTargets() || len(asked) != w.NumTargets() {
		t.Errorf("%d requests for %d targets, want one each: %v", len(calls), len(asked), asked)
	}
	if !strings.Contains(stdout, "curate dataset:") || strings.Contains(stdout, "up to date") {
		t.Errorf("the licences learned did not rebuild the dataset:\n%s", stdout)
	}
	card := readCard(t, out)
	rows, recorded := wantMix(in, lic)
	for _, row := range rows {
		if !strings.Contains(card, row+"\n") {
			t.Errorf("card lacks %q:\n%s", row, card)
		}
	}
	if !strings.Contains(card, "may not be redistributable") || !strings.Contains(card, "license: other\n") {
		t.Errorf("card: no redistribution warning or a single licence claimed for a mix:\n%s", card)
	}
	if got, err := dataset.ReadLicenses(out); err != nil || !reflect.DeepEqual(got, recorded) {
		t.Errorf("licenses.json %v, %v; want %v", got, err, recorded)
	}
	if code, msg, _ := clitest.Run(t, nil, "dataset", "--check", out); code != 0 {
		t.Errorf("the dataset fails its check: %s", msg)
	}

	// 3. Again: nothing asked (not the licences, not the record naming
	// none, not the papers the repository did not know); nothing rebuilt.
	oai.Reset()
	code, stdout, stderr = clitest.Run(t, env, append(args, "--licenses")...)
	if code != 0 || len(oai.Calls()) != 0 || !strings.Contains(stdout, "up to date") {
		t.Errorf("second run --licenses: exit %d, %d requests\n%s\n%s", code, len(oai.Calls()), stdout, stderr)
	}

	// 4. The repository learns a licence; rechecking the missing asks only
	// about the papers it did not know, and the next build counts it.
	var missing []string
	for i := range w.NumTargets() {
		if _, ok := lic[w.Target(i).ArxivID]; !ok {
			missing = append(missing, w.Target(i).ArxivID)
		}
	}
	learned := missing[0]
	for id := range in {
		if _, ok := lic[id]; !ok {
			learned = id // prefer a target in the dataset
			break
		}
	}
	lic[learned] = licCCBy
	oaiLicences(t, corpus, w, map[string]string{learned: licCCBy})
	oai.Reset()
	code, stdout, stderr = clitest.Run(t, nil, "licenses", "--store", storeDir, "--oai-base", oai.URL+sim.OAIPath, "--arxiv-interval", "1ms", "--recheck-missing")
	if code != 0 || len(oai.Calls()) != len(missing) {
		t.Errorf("curate licenses --recheck-missing: exit %d, %d requests, want %d\n%s", code, len(oai.Calls()), len(missing), stderr)
	}
	if !strings.Contains(stdout, learned+"\trecorded\t"+licCCBy+"\n") || !strings.Contains(stderr, fmt.Sprintf("curate licenses: %d targets:", w.NumTargets())) {
		t.Errorf("curate licenses output:\n%s\n%s", stdout, stderr)
	}
	code, _, stderr = clitest.Run(t, env, args...)
	if code != 0 {
		t.Fatalf("run after the lookup: exit %d\n%s", code, stderr)
	}
	card = readCard(t, out)
	rows, _ = wantMix(in, lic)
	for _, row := range rows {
		if !strings.Contains(card, row+"\n") {
			t.Errorf("after the licence learned, card lacks %q:\n%s", row, card)
		}
	}
}

// TestE2ELicencesUsage: the lookup's flags are checked before anything
// runs.
func TestE2ELicencesUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--store", dir, "--licenses", "--oai-base", "ftp://x", "2401.00001"}, "--oai-base"},
		{[]string{"licenses", "--store", dir, "--oai-base", "nope"}, "--oai-base"},
		{[]string{"licenses", "--store", dir, "not-an-id"}, "invalid arXiv IDs"},
		{[]string{"licenses", "--store", filepath.Join(dir, "none")}, "no curate store"},
	} {
		code, _, stderr := clitest.Run(t, nil, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("curate %v: exit %d, want 2 naming %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
