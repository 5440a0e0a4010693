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
	fs.IntVar(&opt.run.workers.fetch, "fetch-workers", 2, "targets fetched at once")
	fs.IntVar(&opt.run.workers.citegraph, "citegraph-workers", 4, "targets in citegraph at once")
	fs.IntVar(&opt.run.workers.classify, "classify-workers", 4, "targets classified at once")
	fs.IntVar(&opt.run.workers.summarize, "summarize-workers", 4, "targets summarized at once")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if opt.publish == "" {
		fs.Usage()
		return fmt.Errorf("%w: --out DIR is required", errUsage)
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
// their stage), and publishes a new dataset version when anything changed.
// Exit status: 0 all done, 1 some targets failed (listed), 2 could not run.
func runRefresh(ctx context.Context, env *cmdEnv, opt *refreshOptions, fileIDs []string) error {
	discovered, err := discover(ctx, env, opt)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("refresh: discover targets: %w", err)}
	}
	targets := mergeTargets(fileIDs, discovered)
	if len(targets) == 0 {
		return &exitError{code: 2, err: errors.New("refresh: no targets: give --targets FILE or --oai-set")}
	}
	fmt.Fprintf(env.stderr, "curate refresh: %d targets (%d from the targets file, %d harvested so far)\n", len(targets), len(fileIDs), len(discovered))

	stageErr := runStages(ctx, env, &opt.run.flags, stages.Order, targets, opt.run.workers.byStage())
	var ee *exitError
	if errors.As(stageErr, &ee) && ee.code != 1 {
		return stageErr // interrupted or unusable: publish nothing
	}
	if stageErr != nil && !errors.As(stageErr, &ee) {
		return &exitError{code: 2, err: stageErr}
	}
	if err := publish(ctx, env, opt, targets); err != nil {
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
func discover(ctx context.Context, env *cmdEnv, opt *refreshOptions) ([]string, error) {
	st, err := opt.run.flags.global.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
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

// publish builds the dataset into OUT/versions/<time>/ and switches
// OUT/latest to it in one step, with a changelog against the previous
// version. Nothing is published when no instance changed.
func publish(ctx context.Context, env *cmdEnv, opt *refreshOptions, targets []string) error {
	root := opt.publish
	if err := os.MkdirAll(filepath.Join(root, "versions"), 0o755); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	latest := filepath.Join(root, "latest")
	prevDir, _ := filepath.EvalSymlinks(latest)
	unchanged, remember, err := refreshUnchanged(ctx, opt, root, targets, prevDir != "")
	if err != nil {
		return err
	}
	if unchanged {
		fmt.Fprintf(env.stderr, "curate refresh: no input changed; %s stays the latest version\n", filepath.Base(prevDir))
		return nil
	}
	defer remember()
	prev := map[string]string{}
	if prevDir != "" {
		pub, err := dataset.ReadDataset(ctx, prevDir)
		if err != nil {
			return fmt.Errorf("refresh: read the latest dataset %s: %w", prevDir, err)
		}
		for _, in := range pub.Instances {
			prev[in.InstanceID] = instanceDigest(in)
		}
	}
	version := time.Now().UTC().Format("20060102T150405Z")
	for n := 2; ; n++ { // two refreshes within a second
		if _, err := os.Stat(filepath.Join(root, "versions", version)); os.IsNotExist(err) {
			break
		}
		version = time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", n)
	}
	dir := filepath.Join(root, "versions", version)
	data := opt.run.data
	data.fresh = true // refreshUnchanged has compared the inputs already
	if err := buildDataset(ctx, env, &opt.run.flags.global, &data, dir, targets); err != nil {
		return err
	}
	pub, err := dataset.ReadDataset(ctx, dir)
	if err != nil {
		return fmt.Errorf("refresh: read back %s: %w", dir, err)
	}
	prevVersion := ""
	if prevDir != "" {
		prevVersion = filepath.Base(prevDir)
	}
	log := changelog{Version: version, Previous: prevVersion, Added: []string{}, Removed: []string{}, Changed: []string{}}
	now := map[string]bool{}
	for _, in := range pub.Instances {
		now[in.InstanceID] = true
		if in.Split == "test" {
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
	sort.Strings(log.Removed)
	if prevDir != "" && len(log.Added)+len(log.Removed)+len(log.Changed) == 0 {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("refresh: %w", err)
		}
		os.RemoveAll(dir + ".prev")
		fmt.Fprintf(env.stderr, "curate refresh: no instance changed; %s stays the latest version\n", log.Previous)
		return nil
	}
	if err := writeChangelog(dir, log); err != nil {
		return err
	}
	// Switch the pointer in one step: a new symlink renamed over the old.
	tmp := filepath.Join(root, ".latest-"+version)
	if err := os.Symlink(filepath.Join("versions", version), tmp); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if err := os.Rename(tmp, latest); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("refresh: switch %s: %w", latest, err)
	}
	fmt.Fprintf(env.stderr, "curate refresh: published %s (%d train, %d test): %d added, %d removed, %d changed; %s -> versions/%s\n",
		version, log.Train, log.Test, len(log.Added), len(log.Removed), len(log.Changed), latest, version)
	return nil
}

// refreshUnchanged reports whether the dataset inputs are those of the
// last published version, and returns a function that records the current
// inputs as published (called once the publishing step has succeeded or
// found nothing to publish).
func refreshUnchanged(ctx context.Context, opt *refreshOptions, root string, targets []string, havePrev bool) (bool, func(), error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return false, nil, err
	}
	opts, err := opt.run.data.options(func(string) string { return "" })
	if err != nil {
		return false, nil, err
	}
	opts.CreatedAt = time.Time{} // a new day alone is no new version
	var keys []string
	for _, t := range targets {
		if k, err := stages.Key(t); err == nil {
			keys = append(keys, k)
		}
	}
	st, err := opt.run.flags.global.openStore(ctx)
	if err != nil {
		return false, nil, err
	}
	defer st.Close()
	digest, err := inputsDigest(ctx, st, keys, opts)
	if err != nil {
		return false, nil, err
	}
	key := "refresh/inputs/" + abs
	prev, err := st.Value(ctx, key)
	same := err == nil && string(prev) == digest && havePrev
	remember := func() {
		st, err := opt.run.flags.global.openStore(context.WithoutCancel(ctx))
		if err != nil {
			return
		}
		defer st.Close()
		_ = st.SetValue(context.WithoutCancel(ctx), key, []byte(digest))
	}
	return same, remember, nil
}

// instanceDigest identifies an instance's content, ignoring when it was
// built.
func instanceDigest(in record.Instance) string {
	in.Provenance.CreatedAt = ""
	data, _ := json.Marshal(in)
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func writeChangelog(dir string, log changelog) error {
	data, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "changelog.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("refresh: %w", err)
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
	if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	return nil
}
