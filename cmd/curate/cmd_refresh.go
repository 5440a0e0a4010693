package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/stages"
	"github.com/groundwork/curate/store"
)

// Keys of the refresh state in the store.
const (
	discoveredKey = "refresh/discovered" // targets found by harvesting, JSON list
)

type refreshOptions struct {
	run     runOptions
	oai     oaiFlags
	publish string
}

func runRefreshCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt refreshOptions
	fs := newFlagSet(env, "refresh", "--out DIR [--targets FILE] [--oai-set SET ...] [--budget-usd X]")
	addStageFlags(fs, env, &opt.run.flags)
	addDatasetFlags(fs, &opt.run.data)
	addOAIFlags(fs, env, &opt.oai)
	fs.StringVar(&opt.publish, "out", "", "dataset root: each refresh that changes the dataset writes OUT/versions/<time>/ and points OUT/latest at it")
	addWorkerFlags(fs, &opt.run.workers)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if opt.publish == "" {
		fs.Usage()
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	if err := opt.run.validate(env); err != nil {
		return err
	}
	if err := opt.oai.validate(); err != nil {
		return err
	}
	ids, err := opt.run.flags.ids(env, rest)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	return runRefresh(ctx, env, &opt, ids)
}

// runRefresh discovers targets (the targets file as it is now, plus papers
// harvested from arXiv's OAI-PMH feed since the last harvest), runs every
// stage (work already done is reused, changed prompts or models redo only
// their stage), and publishes a new dataset version when anything changed,
// all under the store's lock. Exit status: 0 all done, 1 some targets
// failed (listed), 2 could not run.
func runRefresh(ctx context.Context, env *cmdEnv, opt *refreshOptions, fileIDs []string) error {
	dopts, err := opt.run.data.options(env.getenv)
	if err != nil {
		return err
	}
	e, err := openLocked(ctx, env, &opt.run.flags)
	if err != nil {
		return err
	}
	defer e.Close()
	discovered, err := discover(ctx, env, opt, e.store)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("refresh: discover targets: %w", err)}
	}
	targets := mergeTargets(fileIDs, discovered)
	if len(targets) == 0 {
		return &exitError{code: 2, err: errors.New("refresh: no targets: give --targets FILE or --oai-set")}
	}
	fmt.Fprintf(env.stderr, "curate refresh: %d targets (%d from the targets file, %d harvested so far)\n", len(targets), len(fileIDs), len(discovered))

	keys, bad := targetKeys(targets)
	stageErr := runStages(ctx, env, e, stages.Order, keys, bad, opt.run.workers.byStage())
	if !completed(stageErr) {
		return stageErr // interrupted or unable to go on: publish nothing
	}
	if err := publishVersion(ctx, env, e, opt, dopts, keys); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	return stageErr
}

// mergeTargets returns the union of the file's and the harvested targets,
// in a stable order, without duplicates.
func mergeTargets(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, id := range l {
			k, err := stages.Key(id)
			if err != nil {
				k = id // invalid IDs are reported by runStages
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// discover harvests new targets and returns every target harvested so far.
func discover(ctx context.Context, env *cmdEnv, opt *refreshOptions, st *store.Store) ([]string, error) {
	var known []string
	if v, err := st.Value(ctx, discoveredKey); err == nil {
		if err := json.Unmarshal(v, &known); err != nil {
			return nil, fmt.Errorf("read %s: %w", discoveredKey, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if len(opt.oai.sets) == 0 {
		return known, nil
	}
	found, err := harvest(ctx, env, opt, st)
	if err != nil {
		return nil, err
	}
	all := mergeTargets(known, found)
	sort.Strings(all)
	data, err := json.Marshal(all)
	if err != nil {
		return nil, err
	}
	if err := st.SetValue(ctx, discoveredKey, data); err != nil {
		return nil, err
	}
	return all, nil
}

// changelog says how a dataset version differs from the one before.
type changelog struct {
	Version  string   `json:"version"`
	Previous string   `json:"previous,omitempty"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Changed  []string `json:"changed"`
	Train    int      `json:"train"`
	Test     int      `json:"test"`
}

// publishVersion builds the dataset into OUT/versions/<time>/ and switches
// OUT/latest to it in one step, with a changelog against the previous
// version, under OUT's publishing lock. Nothing is published when no
// instance changed.
func publishVersion(ctx context.Context, env *cmdEnv, e *stageEnv, opt *refreshOptions, dopts dataset.Options, keys []string) error {
	root, err := filepath.Abs(opt.publish)
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	unlock, err := publish.Lock(root)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer unlock()
	if err := os.MkdirAll(filepath.Join(root, "versions"), 0o755); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	latest := filepath.Join(root, "latest")
	prevDir, _ := filepath.EvalSymlinks(latest)

	// The inputs without the creation day: a new day alone is no new
	// version.
	undated := dopts
	undated.CreatedAt = time.Time{}
	digest, err := inputsDigest(ctx, e.store, keys, undated, opt.run.data.codec)
	if err != nil {
		return err
	}
	digestKey := "refresh/inputs/" + root
	if prevDir != "" {
		if v, err := e.store.Value(ctx, digestKey); err == nil && string(v) == digest {
			if _, problems, err := publish.Verify(prevDir); err == nil && len(problems) == 0 {
				fmt.Fprintf(env.stderr, "curate refresh: no input changed; %s stays the latest version\n", filepath.Base(prevDir))
				return nil
			}
		}
	}
	remember := func() {
		if err := e.store.SetValue(context.WithoutCancel(ctx), digestKey, []byte(digest)); err != nil {
			e.log.Warn("could not remember the published inputs", "err", err)
		}
	}

	prev := map[string]string{}
	prevVersion := ""
	if prevDir != "" {
		prevVersion = filepath.Base(prevDir)
		pub, err := dataset.ReadDataset(ctx, prevDir)
		if err != nil {
			// A damaged latest version is replaced, never built upon.
			e.log.Warn("the latest version cannot be read; the new version's changelog lists every instance as added", "dir", prevDir, "err", err)
			prevVersion += " (unreadable)"
		} else {
			for _, in := range pub.Instances {
				prev[in.InstanceID] = instanceDigest(in)
			}
		}
	}
	res, err := loadAndBuild(ctx, e.store, keys, dopts)
	if err != nil {
		return err
	}
	name := time.Now().UTC().Format("20060102T150405Z")
	for n := 2; ; n++ { // two refreshes within a second
		if _, err := os.Stat(filepath.Join(root, "versions", name)); os.IsNotExist(err) {
			break
		}
		name = time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", n)
	}
	log := changelog{Version: name, Previous: prevVersion, Added: []string{}, Removed: []string{}, Changed: []string{}}
	now := map[string]bool{}
	for _, in := range res.Instances {
		now[in.InstanceID] = true
		if in.Split == record.SplitTest {
			log.Test++
		} else {
			log.Train++
		}
		switch d, ok := prev[in.InstanceID]; {
		case !ok:
			log.Added = append(log.Added, in.InstanceID)
		case d != instanceDigest(in):
			log.Changed = append(log.Changed, in.InstanceID)
		}
	}
	for id := range prev {
		if !now[id] {
			log.Removed = append(log.Removed, id)
		}
	}
	sort.Strings(log.Added)
	sort.Strings(log.Changed)
	sort.Strings(log.Removed)
	if prevDir != "" && len(prev) > 0 && len(log.Added)+len(log.Removed)+len(log.Changed) == 0 {
		remember()
		fmt.Fprintf(env.stderr, "curate refresh: no instance changed; %s stays the latest version\n", log.Previous)
		return nil
	}
	extra, err := changelogFiles(log)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "versions", name)
	if _, err := dataset.Write(ctx, dir, res, dataset.WriteOptions{
		ShardRows: opt.run.data.shardRows, JSONL: opt.run.data.jsonl, Report: true,
		Version: version, Inputs: digest, Extra: extra, Compression: opt.run.data.codec,
	}); err != nil {
		return err
	}
	// Switch the pointer in one step: a new symlink renamed over the old.
	tmp := filepath.Join(root, ".latest-"+name)
	if err := os.Symlink(filepath.Join("versions", name), tmp); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if err := os.Rename(tmp, latest); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("refresh: switch %s: %w", latest, err)
	}
	if err := atomicdir.SyncDir(root); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	remember()
	fmt.Fprintf(env.stderr, "curate refresh: published %s (%d train, %d test): %d added, %d removed, %d changed; %s -> versions/%s\n",
		name, log.Train, log.Test, len(log.Added), len(log.Removed), len(log.Changed), latest, name)
	return nil
}

// instanceDigest identifies an instance's content, ignoring when it was
// built.
func instanceDigest(in record.Instance) string {
	in.Provenance.CreatedAt = ""
	data, _ := json.Marshal(in)
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// changelogFiles renders a version's changelog.json and CHANGELOG.md.
func changelogFiles(log changelog) (map[string][]byte, error) {
	data, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Changes in %s\n\nSince %s: %d added, %d removed, %d changed (%d train, %d test now).\n",
		log.Version, cmp.Or(log.Previous, "nothing"), len(log.Added), len(log.Removed), len(log.Changed), log.Train, log.Test)
	for _, part := range []struct {
		name string
		ids  []string
	}{{"Added", log.Added}, {"Removed", log.Removed}, {"Changed", log.Changed}} {
		if len(part.ids) > 0 {
			fmt.Fprintf(&b, "\n## %s\n\n- %s\n", part.name, strings.Join(part.ids, "\n- "))
		}
	}
	return map[string][]byte{"changelog.json": append(data, '\n'), "CHANGELOG.md": []byte(b.String())}, nil
}
