package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/groundwork/curate/dataset"
)

// Kinds is the table of round kinds. A kind needing its own world makes
// a Home with Round.NewHome (its own faults, pages, keys), runs curate
// there through Round.At and checks its own dataset.
func Kinds() []Kind {
	return []Kind{
		{"kill-dataset", "curate dataset with other options, SIGKILLed at a random moment; the same command then completes", killDataset},
		{"kill-run", "curate run with more targets, SIGKILLed at a random moment; the same command then resumes and completes", killRun},
		{"two-writers", "two curate dataset at once on one --out, from one store or two: each publishes or is refused by a lock", twoWriters},
		{"usage-error", "a run or dataset with a bad flag aimed at the published dataset: exit 2, no request, nothing changed", usageError},
		{"damage-published", "a published file damaged: --check says so, and the next curate dataset repairs it or refuses (never calls it up to date)", damagePublished},
		{"damage-blob", "a stored blob lost or garbled: the next run asks for it again or makes it again, and completes", damageBlob},
		{"truncate-wal", "a run SIGKILLed, then the ledger's WAL truncated: status reads it, the next run completes", truncateWAL},
		{"user-files", "a file of the user's added to the output directory, then a republish (dataset or report): it survives; one put among the shards is refused, named", userFilesRound},
		{"lost-robots", "the stored robots.txt blobs lost: the next run or fetch asks for them again and completes (it exited 1 forever)", lostRobots},
		{"copied-gold", "a test gold card copied into a training row, the manifest rewritten to match: --check fails on it", copiedGold},
		{"planted-keys", "every service echoes the request with the S2 key, the LLM key and a proxy's password planted (errors and answers), a run killed sometimes, then published: no form of a key in stdout, stderr, status --json, show, any store file or blob, the dataset", PlantedKeys(false)},
		{"quiet-injections", "a world whose papers carry planted instructions (70% of the references as sources, all of a few, a dictated gold card; quiet or addressed) and a model that obeys them, a run killed sometimes, published with and without --include-suspect: no planted target published unless asked for, and then flagged; --check passes", QuietInjections()},
		{"hostile-pages", "one to three papers' pages (targets, a source now and then) built to cost a parser the most memory per byte, tiny tags always among them, each just under the 64 MiB cap, two or three fetched at once, a run killed sometimes: the run finishes, each Document says conversion.truncated (the parse budget), no command's peak RSS (rusage) reaches 1 GB", HostilePages(0, 0)},
	}
}

func killDataset(r *Round) {
	h := r.Home
	h.Vary(r.Rand)
	res := r.KillAfter(r.Moment("dataset"), h.DatasetArgs(h.Store)...)
	r.Notef("killed %v after %s (exit %d)", res.Killed, res.Wall.Round(timeUnit), res.Code)
	r.Invariant("after the kill")
	if res = r.Curate(h.DatasetArgs(h.Store)...); res.Code != 0 {
		r.Failf("the dataset after the kill: exit %d:\n%s", res.Code, firstLines(res.Stderr, 10))
	}
}

func killRun(r *Round) {
	h := r.Home
	if h.More() {
		if err := h.TakeMore(2); err != nil {
			r.Failf("%v", err)
			return
		}
	} else {
		h.Vary(r.Rand)
	}
	res := r.KillAfter(r.Moment("run"), h.RunArgs()...)
	r.Notef("%d targets; killed %v after %s (exit %d)", h.Taken, res.Killed, res.Wall.Round(timeUnit), res.Code)
	r.Invariant("after the kill")
	if res = r.Curate(h.RunArgs()...); res.Code != 0 {
		r.Failf("the run after the kill: exit %d:\n%s", res.Code, firstLines(res.Stderr, 10))
	}
}

func twoWriters(r *Round) {
	h := r.Home
	h.Vary(r.Rand)
	other := h.Store
	if r.Rand.IntN(2) == 0 {
		other = filepath.Join(filepath.Dir(h.Store), "store2")
		os.RemoveAll(other)
		if err := copyTree(h.Store, other, func(rel string) bool { return rel != "lock" }); err != nil {
			r.Failf("copy the store: %v", err)
			return
		}
	}
	a := r.Start(-1, h.DatasetArgs(h.Store)...)
	b := r.Start(-1, h.DatasetArgs(other, "--test-from", "2025-12-01")...)
	ok := 0
	for i, res := range []Result{a(), b()} {
		switch {
		case res.Code == 0:
			ok++
		case res.Code == 2 && (strings.Contains(res.Stderr, "publishing there") || strings.Contains(res.Stderr, "using the store")):
		default:
			r.Failf("writer %d: exit %d:\n%s", i+1, res.Code, firstLines(res.Stderr, 10))
		}
	}
	if ok == 0 {
		r.Failf("neither writer published")
	}
	r.Notef("%d published, one store: %v", ok, other == h.Store)
}

// badFlags are usage errors, with the commands that take the flag.
var badFlags = []struct {
	flags []string
	run   bool // only curate run takes it
}{
	{[]string{"--shard-rows", "-1"}, false},
	{[]string{"--test-from", "2026-13-01"}, false},
	{[]string{"--contamination", "ignore"}, false},
	{[]string{"--created-at", "yesterday"}, false},
	{[]string{"--num-ideas", "-3"}, false},
	{[]string{"--retries", "-1"}, true},
	{[]string{"--llm-concurrency", "0"}, true},
	{[]string{"--budget-usd", "-1"}, true},
	{[]string{"--stages", "fetch,publish"}, true},
	{[]string{"--s2-base", "api.semanticscholar.org"}, true},
	{[]string{"--timeout", "0"}, true},
	{[]string{"--fetch-workers", "-2"}, true},
}

func usageError(r *Round) {
	h := r.Home
	bad := badFlags[r.Rand.IntN(len(badFlags))]
	args := h.DatasetArgs(h.Store, bad.flags...)
	if bad.run || r.Rand.IntN(2) == 0 {
		args = h.RunArgs(bad.flags...)
	}
	n := h.Servers.Requests()
	res := r.Curate(args...)
	if res.Code != 2 || !strings.Contains(res.Stderr, bad.flags[0]) {
		r.Failf("curate %s %s: exit %d, want 2 naming the flag:\n%s", args[0], strings.Join(bad.flags, " "), res.Code, firstLines(res.Stderr, 5))
	}
	if got := h.Servers.Requests() - n; got != 0 {
		r.Failf("%d requests before the usage error", got)
	}
	if now, _ := treeDigest(h.Out); now != r.before {
		r.Failf("a usage error changed the published dataset")
	}
	r.Notef("%s %s", args[0], strings.Join(bad.flags, " "))
}

func damagePublished(r *Round) {
	h := r.Home
	d := damages[r.Rand.IntN(len(damages))]
	if err := d.do(h.Out, r.Rand); err != nil {
		r.Failf("damage: %v", err)
		return
	}
	r.Notef("%s", d.name)
	if check := r.Curate("dataset", "--check", h.Out); check.Code == 0 {
		r.Failf("--check passes a dataset with %s", d.name)
	}
	res := r.Curate(h.DatasetArgs(h.Store)...)
	switch {
	case strings.Contains(res.Stdout, "is up to date"):
		r.Failf("curate dataset calls a dataset with %s up to date", d.name)
	case res.Code == 0:
		r.Notef("rebuilt")
	case res.Code == 2 && d.mayRefuse && strings.Contains(res.Stderr, "refusing to replace"):
		r.Notef("refused, naming what it cannot tell from the user's files")
		r.Restore()
	default:
		r.Failf("curate dataset after %s: exit %d:\n%s", d.name, res.Code, firstLines(res.Stderr, 10))
		r.Restore()
	}
}

func damageBlob(r *Round) {
	h := r.Home
	recs, err := Records(r.Context(), h.Store, "")
	if err != nil || len(recs) == 0 {
		r.Failf("records: %d, %v", len(recs), err)
		return
	}
	rec := recs[r.Rand.IntN(len(recs))]
	lose := r.Rand.IntN(2) == 0
	if err := DamageBlob(h.Store, rec.Blob, lose); err != nil && !os.IsNotExist(err) {
		r.Failf("damage the blob of %s %s: %v", rec.Kind, rec.Item, err)
		return
	}
	how := map[bool]string{true: "lost", false: "garbled"}[lose]
	res := r.Curate(h.RunArgs()...)
	r.Notef("%s record of %s %s; told: %v", rec.Kind, rec.Item, how, strings.Contains(res.Stderr, "lost or damaged"))
	if res.Code != 0 {
		r.Failf("the run after the %s %s blob: exit %d:\n%s", how, rec.Kind, res.Code, firstLines(res.Stderr, 10))
	}
}

func truncateWAL(r *Round) {
	h := r.Home
	if h.More() {
		if err := h.TakeMore(1); err != nil {
			r.Failf("%v", err)
			return
		}
	} else {
		h.Vary(r.Rand)
	}
	res := r.KillAfter(r.Moment("run"), h.RunArgs()...)
	wal := filepath.Join(h.Store, "ledger.db-wal")
	fi, err := os.Stat(wal)
	cut := int64(-1)
	if err == nil && fi.Size() > 0 {
		cut = r.Rand.Int64N(fi.Size())
		if err := os.Truncate(wal, cut); err != nil {
			r.Failf("truncate the WAL: %v", err)
		}
	}
	r.Notef("killed %v after %s; WAL cut to %d bytes", res.Killed, res.Wall.Round(timeUnit), cut)
	if st := r.Curate("status", "--store", h.Store); st.Code != 0 && st.Code != 2 {
		r.Failf("status after the cut: exit %d:\n%s", st.Code, firstLines(st.Stderr, 5))
	}
	r.Invariant("after the cut")
	if res = r.Curate(h.RunArgs()...); res.Code != 0 {
		r.Failf("the run after the cut: exit %d:\n%s", res.Code, firstLines(res.Stderr, 10))
	}
}

func userFilesRound(r *Round) {
	h := r.Home
	if r.Rand.IntN(4) == 0 {
		// Among the shards, where a loader would read it: named, refused,
		// kept; moved out, the dataset publishes again.
		stray := filepath.Join(h.Out, dataset.DataDir, "my-notes.txt")
		if err := os.WriteFile(stray, []byte("mine"), 0o644); err != nil {
			r.Failf("%v", err)
			return
		}
		h.Vary(r.Rand)
		res := r.Curate(h.DatasetArgs(h.Store)...)
		if res.Code != 2 || !strings.Contains(res.Stderr, "data/my-notes.txt") {
			r.Failf("a file of the user's among the shards: exit %d, want 2 naming it:\n%s", res.Code, firstLines(res.Stderr, 5))
		}
		if b, err := os.ReadFile(stray); err != nil || string(b) != "mine" {
			r.Failf("the user's file among the shards: %q %v", b, err)
		}
		if err := os.Remove(stray); err != nil {
			r.Failf("%v", err)
		}
		r.Notef("one among the shards: refused")
		return
	}
	rel := fmt.Sprintf("notes/round-%d.md", r.N)
	if err := h.AddUserFile(rel, fmt.Sprintf("notes of round %d", r.N)); err != nil {
		r.Failf("%v", err)
		return
	}
	if r.Rand.IntN(3) == 0 {
		if res := r.Curate("report", h.Out); res.Code != 0 {
			r.Failf("curate report: exit %d:\n%s", res.Code, firstLines(res.Stderr, 10))
		}
		r.Notef("%s, then curate report", rel)
		return
	}
	h.Vary(r.Rand)
	if res := r.Curate(h.DatasetArgs(h.Store)...); res.Code != 0 {
		r.Failf("the republish: exit %d:\n%s", res.Code, firstLines(res.Stderr, 10))
	}
	r.Notef("%s, then a republish", rel)
}

func lostRobots(r *Round) {
	h := r.Home
	recs, err := Records(r.Context(), h.Store, "robots-txt")
	if err != nil || len(recs) == 0 {
		r.Failf("robots-txt records: %d, %v", len(recs), err)
		return
	}
	lose := r.Rand.IntN(2) == 0
	for _, rec := range recs {
		if err := DamageBlob(h.Store, rec.Blob, lose); err != nil && !os.IsNotExist(err) {
			r.Failf("%v", err)
		}
	}
	args := h.RunArgs()
	if r.Rand.IntN(3) == 0 {
		args = append([]string{"fetch", "--store", h.Store, "--targets", h.Targets}, h.base()...)
	}
	n := h.Servers.Requests()
	res := r.Curate(args...)
	if res.Code != 0 {
		r.Failf("curate %s after losing robots.txt: exit %d:\n%s", args[0], res.Code, firstLines(res.Stderr, 10))
	}
	if !strings.Contains(res.Stderr, "lost or damaged") {
		r.Failf("curate %s did not say the robots.txt record was lost", args[0])
	}
	if h.Servers.Requests() == n {
		r.Failf("robots.txt was not asked for again")
	}
	r.Notef("%d robots.txt blobs %s; curate %s", len(recs), map[bool]string{true: "lost", false: "garbled"}[lose], args[0])
}

func copiedGold(r *Round) {
	h := r.Home
	train, test, err := CopyGold(h.Out, r.Rand)
	if err != nil {
		r.Failf("copy a gold: %v", err)
		r.Restore()
		return
	}
	check := r.Curate("dataset", "--check", h.Out)
	if check.Code != 1 || !strings.Contains(check.Stdout, dataset.KindTestGoldInTrainGold) {
		r.Failf("--check of a dataset whose train %s has the gold of test %s: exit %d, want 1 naming %s:\n%s",
			train, test, check.Code, dataset.KindTestGoldInTrainGold, firstLines(check.Stdout, 8))
	}
	r.Notef("train %s given the gold of test %s: --check exit %d", train, test, check.Code)
	r.Restore()
}

// timeUnit rounds the durations the log shows.
const timeUnit = 10 * time.Millisecond
