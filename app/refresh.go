package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/licenses"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// discoveredKey is where the targets found by harvesting are kept (a JSON
// list).
const discoveredKey = "refresh/discovered"

// OAIOptions say which new papers a refresh harvests from arXiv's OAI-PMH
// feed.
type OAIOptions struct {
	Sets []string
	// Since is the first harvest's start (zero: 7 days ago); later
	// harvests of a set continue from the last.
	Since time.Time
	// Categories, when set, keep only papers with one of these primary
	// categories.
	Categories []string
}

// SetHarvest is what harvesting one set found.
type SetHarvest struct {
	Set     string
	From    time.Time
	Records int
	New     int
	// Licenses counts the licences recorded from the records (new targets,
	// and papers the store holds), not counting those it already had.
	Licenses int
}

// Discover returns every target harvested so far, harvesting each set of
// opt first (the App needs Config.OAIBase). Without sets it makes no
// request.
func (a *App) Discover(ctx context.Context, opt OAIOptions) ([]string, []SetHarvest, error) {
	var known []string
	if v, err := a.Store.Value(ctx, discoveredKey); err == nil {
		if err := json.Unmarshal(v, &known); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", discoveredKey, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	if len(opt.Sets) == 0 {
		return known, nil, nil
	}
	found, sets, err := a.harvest(ctx, opt)
	if err != nil {
		return nil, sets, err
	}
	all := MergeTargets(known, found)
	sort.Strings(all)
	data, err := json.Marshal(all)
	if err != nil {
		return nil, sets, err
	}
	if err := a.Store.SetValue(ctx, discoveredKey, data); err != nil {
		return nil, sets, err
	}
	return all, sets, nil
}

// oaiFromKey is where the next harvest date of a set is kept.
func oaiFromKey(set string) string { return "refresh/oai/" + set + "/from" }

// harvest lists each set's records since its last harvest and returns the
// new papers: records first submitted (v1) on or after the harvest's start,
// in the wanted categories. Records of older papers that were merely
// updated are not new targets. The licence each record names is stored
// for the new papers and for the papers the store holds a Document of:
// the dataset card counts them, and no lookup need ask for them.
func (a *App) harvest(ctx context.Context, opt OAIOptions) ([]string, []SetHarvest, error) {
	if a.OAI == nil {
		return nil, nil, errors.New("harvest: no OAI-PMH base configured")
	}
	held := map[string]bool{}
	docs, err := record.Documents.Items(ctx, a.Store)
	if err != nil {
		return nil, nil, fmt.Errorf("harvest: %w", err)
	}
	for _, id := range docs {
		held[id] = true
	}
	first := opt.Since
	if first.IsZero() {
		first = time.Now().UTC().AddDate(0, 0, -7)
	}
	wantCat := map[string]bool{}
	for _, c := range opt.Categories {
		wantCat[c] = true
	}
	var found []string
	var sets []SetHarvest
	for _, set := range opt.Sets {
		from := first
		if v, err := a.Store.Value(ctx, oaiFromKey(set)); err == nil {
			if from, err = time.Parse(time.RFC3339, string(v)); err != nil {
				return nil, sets, fmt.Errorf("read %s: %w", oaiFromKey(set), err)
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, sets, err
		}
		// New submissions of the harvest window; a day of slack covers
		// records whose v1 date is the eve of the window's first datestamp.
		newSince := from.AddDate(0, 0, -1).Truncate(24 * time.Hour)
		var setFound []string
		licensed := 0
		collect := func(r oaipmh.Record) error {
			isNew := !r.Deleted && r.Meta != nil && !r.Meta.Created.Before(newSince) &&
				(len(wantCat) == 0 || wantCat[r.Meta.Primary])
			if isNew {
				setFound = append(setFound, r.ID)
			}
			if isNew || held[r.ID] {
				wrote, err := licenses.Put(ctx, a.Store, r.ID, licenses.FromRecord(r, time.Now()))
				if err != nil {
					return err
				}
				if wrote {
					licensed++
				}
			}
			return nil
		}
		q := oaipmh.Query{From: from, Set: set}
		h, err := a.OAI.ListRecords(ctx, q, collect)
		if errors.Is(err, oaipmh.ErrBadResumptionToken) {
			// arXiv's tokens expire daily: start the window again.
			setFound = nil
			h, err = a.OAI.ListRecords(ctx, q, collect)
		}
		if err != nil {
			return nil, sets, fmt.Errorf("harvest set %s from %s: %w", set, from.Format("2006-01-02"), err)
		}
		next := h.ResponseDate
		if next.IsZero() {
			next = time.Now().UTC()
		}
		if err := a.Store.SetValue(ctx, oaiFromKey(set), []byte(next.UTC().Format(time.RFC3339))); err != nil {
			return nil, sets, err
		}
		sets = append(sets, SetHarvest{Set: set, From: from, Records: h.Records, New: len(setFound), Licenses: licensed})
		found = append(found, setFound...)
	}
	return found, sets, nil
}

// MergeTargets returns the union of lists of IDs, in a stable order,
// without two IDs of one paper; invalid IDs are kept (Targets reports
// them).
func MergeTargets(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, id := range l {
			k := id
			if keys, _ := Targets([]string{id}); len(keys) == 1 {
				k = keys[0]
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// Changelog says how a dataset version differs from the one before.
type Changelog struct {
	Version  string   `json:"version"`
	Previous string   `json:"previous,omitempty"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Changed  []string `json:"changed"`
	// Licenses lists the targets of both versions whose recorded licence
	// is new or changed: the card's licence mix changed with them.
	Licenses []string `json:"licenses,omitempty"`
	Train    int      `json:"train"`
	Test     int      `json:"test"`
}

// VersionOutcome is what PublishVersion did: the version published, or
// why none was.
type VersionOutcome struct {
	Published bool
	Latest    string // OUT/latest
	// Version is the new version's name, or the latest one's when nothing
	// was published; Log its changelog.
	Version string
	Log     Changelog
	// Unchanged says why nothing was published: "inputs" (no input changed)
	// or "instances" (inputs changed, no instance did).
	Unchanged string
}

// HoldVersions takes the publishing lock of ROOT, where refresh publishes
// versions, and checks that ROOT/latest is absent or a symlink (a refresh
// switches it by renaming a new link over it, which would delete a file of
// the user's there): another process publishing there, or a latest that is
// not curate's, is ErrCannotRun. A refresh holds it from before its first
// request to its publish (DatasetOptions.Locked).
func HoldVersions(root string) (release func() error, err error) {
	unlock, err := publish.Lock(root)
	if err != nil {
		return nil, Fail(ErrCannotRun, err)
	}
	latest := filepath.Join(root, "latest")
	if fi, err := os.Lstat(latest); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		unlock()
		return nil, Fail(ErrCannotRun, fmt.Errorf("refresh %s: %s is not the symlink refresh switches to the latest version: %w; move it away", root, latest, publish.ErrNotOurs))
	}
	return unlock, nil
}

// PublishVersion builds the dataset into ROOT/versions/<time>/ and switches
// ROOT/latest to it in one step, with a changelog against the previous
// version, under ROOT's publishing lock; the store is the caller's, locked.
// Nothing is published when no instance changed and no target's recorded
// licence did (a licence learned later changes the card).
func PublishVersion(ctx context.Context, st *store.Store, log *slog.Logger, version, root string, opt DatasetOptions) (*VersionOutcome, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	if !opt.Locked {
		release, err := HoldVersions(root)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if err := os.MkdirAll(filepath.Join(root, "versions"), 0o755); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	out := &VersionOutcome{Latest: filepath.Join(root, "latest")}
	prevDir, _ := filepath.EvalSymlinks(out.Latest)

	// The inputs without the creation day: a new day alone is no new
	// version.
	undated := opt.Options
	undated.CreatedAt = time.Time{}
	digest, err := InputsDigest(ctx, st, version, opt.Keys, undated, opt.Compression)
	if err != nil {
		return nil, lostInput(err)
	}
	digestKey := "refresh/inputs/" + root
	if prevDir != "" {
		if v, err := st.Value(ctx, digestKey); err == nil && string(v) == digest {
			if _, problems, err := publish.Verify(prevDir); err == nil && len(problems) == 0 {
				out.Version, out.Unchanged = filepath.Base(prevDir), "inputs"
				return out, nil
			}
		}
	}
	remember := func() {
		if err := st.SetValue(context.WithoutCancel(ctx), digestKey, []byte(digest)); err != nil {
			log.Warn("could not remember the published inputs", "err", err)
		}
	}

	prev := map[string]string{}
	prevLic := map[string]string{}
	prevVersion := ""
	if prevDir != "" {
		prevVersion = filepath.Base(prevDir)
		pub, err := dataset.ReadDataset(ctx, prevDir)
		if err == nil {
			// The stages' fields too, so an instance whose only change is
			// one of them is told from one unchanged.
			_, err = dataset.ReadFields(ctx, pub, builtin().Fields())
		}
		if err == nil {
			prevLic, err = dataset.ReadLicenses(prevDir)
		}
		if err != nil {
			// A damaged latest version is replaced, never built upon.
			log.Warn("the latest version cannot be read; the new version's changelog lists every instance as added", "dir", prevDir, "err", err)
			prevVersion += " (unreadable)"
		} else {
			for _, in := range pub.Instances {
				prev[in.InstanceID] = instanceDigest(in)
			}
		}
	}
	res, err := LoadAndBuild(ctx, st, opt.Keys, opt.Options)
	if err != nil {
		return nil, lostInput(err)
	}
	defer res.Close()
	if c := res.Counts(); c.Train+c.Test == 0 && prevDir != "" {
		// A night on which every target failed (or waits) publishes no
		// empty version over the latest.
		return nil, Fail(ErrIncomplete, fmt.Errorf("%w (%s); %s is left as it was", ErrNothingToPublish, droppedText(res.Dropped), out.Latest))
	}
	lic, err := Licenses(ctx, st, res)
	if err != nil {
		return nil, err
	}
	name := time.Now().UTC().Format("20060102T150405Z")
	for n := 2; ; n++ { // two refreshes within a second
		if _, err := os.Stat(filepath.Join(root, "versions", name)); os.IsNotExist(err) {
			break
		}
		name = time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", n)
	}
	cl := Changelog{Version: name, Previous: prevVersion, Added: []string{}, Removed: []string{}, Changed: []string{}}
	now := map[string]bool{}
	if err := res.Each(func(in *record.Instance) error {
		now[in.InstanceID] = true
		if in.Split == record.SplitTest {
			cl.Test++
		} else {
			cl.Train++
		}
		d, ok := prev[in.InstanceID]
		switch {
		case !ok:
			cl.Added = append(cl.Added, in.InstanceID)
		case d != instanceDigest(*in):
			cl.Changed = append(cl.Changed, in.InstanceID)
		}
		id := in.Target.ArxivID
		was, had := prevLic[id]
		is, has := lic[id]
		if ok && (had != has || was != is) {
			cl.Licenses = append(cl.Licenses, id)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for id := range prev {
		if !now[id] {
			cl.Removed = append(cl.Removed, id)
		}
	}
	sort.Strings(cl.Added)
	sort.Strings(cl.Changed)
	sort.Strings(cl.Removed)
	sort.Strings(cl.Licenses)
	if prevDir != "" && len(prev) > 0 && len(cl.Added)+len(cl.Removed)+len(cl.Changed)+len(cl.Licenses) == 0 {
		remember()
		out.Version, out.Unchanged, out.Log = prevVersion, "instances", cl
		return out, nil
	}
	extra, err := changelogFiles(cl)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "versions", name)
	if _, err := dataset.Write(ctx, dir, res, dataset.WriteOptions{
		ShardRows: opt.ShardRows, JSONL: opt.JSONL, Report: true, Version: version, Inputs: digest, Extra: extra, Compression: opt.Compression,
		Licenses: lic,
	}); err != nil {
		return nil, err
	}
	// Switch the pointer in one step: a new symlink renamed over the old.
	tmp := filepath.Join(root, ".latest-"+name)
	if err := os.Symlink(filepath.Join("versions", name), tmp); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	if err := os.Rename(tmp, out.Latest); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("refresh: switch %s: %w", out.Latest, err)
	}
	if err := atomicdir.SyncDir(root); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	remember()
	out.Published, out.Version, out.Log = true, name, cl
	return out, nil
}

// instanceDigest identifies an instance's content, ignoring when it was
// built.
func instanceDigest(in record.Instance) string {
	in.Provenance.CreatedAt = ""
	fields := make(map[string]json.RawMessage, len(in.Fields))
	for k, v := range in.Fields {
		// As read back from Parquet, where an empty list is none.
		fields[k] = dataset.NormalField(v)
	}
	in.Fields = fields
	data, _ := json.Marshal(in)
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// changelogFiles renders a version's changelog.json and CHANGELOG.md.
func changelogFiles(cl Changelog) (map[string][]byte, error) {
	data, err := json.MarshalIndent(cl, "", "  ")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Changes in %s\n\nSince %s: %d added, %d removed, %d changed (%d train, %d test now).\n",
		cl.Version, cmp.Or(cl.Previous, "nothing"), len(cl.Added), len(cl.Removed), len(cl.Changed), cl.Train, cl.Test)
	for _, part := range []struct {
		name string
		ids  []string
	}{{"Added", cl.Added}, {"Removed", cl.Removed}, {"Changed", cl.Changed}, {"Licence recorded or changed", cl.Licenses}} {
		if len(part.ids) > 0 {
			fmt.Fprintf(&b, "\n## %s\n\n- %s\n", part.name, strings.Join(part.ids, "\n- "))
		}
	}
	return map[string][]byte{"changelog.json": append(data, '\n'), "CHANGELOG.md": []byte(b.String())}, nil
}
