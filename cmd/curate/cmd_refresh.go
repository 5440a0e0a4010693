package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/app"
)

const envOAIBase = "CURATE_OAI_BASE"

// changelog is how a dataset version differs from the one before
// (changelog.json).
type changelog = app.Changelog

// refreshCmd is `curate refresh`: discover targets, run every stage,
// publish a new dataset version when anything changed.
type refreshCmd struct {
	run     *runCmd
	oai     oaiFlags
	lic     licenseFlags
	publish string
}

// oaiFlags configure harvesting new targets from arXiv's OAI-PMH feed.
type oaiFlags struct {
	base       string
	sets       []string
	since      string
	categories string
}

type listFlag struct{ list *[]string }

func (l listFlag) String() string {
	if l.list == nil {
		return ""
	}
	return strings.Join(*l.list, ",")
}

func (l listFlag) Set(s string) error {
	*l.list = append(*l.list, splitList(s)...)
	return nil
}

func (o *oaiFlags) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	o.base = cmp.Or(env.getenv(envOAIBase), oaipmh.DefaultBaseURL)
	fs.StringVar(&o.base, "oai-base", o.base, "arXiv OAI-PMH base URL (env "+envOAIBase+")")
	fs.Var(listFlag{&o.sets}, "oai-set", "harvest new papers of this OAI-PMH set (\"cs\", \"physics:hep-th\", \"cs:cs:CL\"); repeatable")
	fs.StringVar(&o.since, "oai-since", "", "first harvest of a set starts at this date (YYYY-MM-DD; default 7 days ago); later ones continue from the last")
	fs.StringVar(&o.categories, "oai-categories", "", "keep only harvested papers whose primary category is in this comma-separated list")
}

// validate checks the OAI flags before anything runs.
func (o *oaiFlags) validate() error {
	if o.since != "" {
		if _, err := time.Parse("2006-01-02", o.since); err != nil {
			return fmt.Errorf("%w: --oai-since %q: want YYYY-MM-DD", errUsage, o.since)
		}
	}
	if len(o.sets) > 0 {
		return checkBaseURL("--oai-base", o.base)
	}
	return nil
}

func (o *oaiFlags) options() app.OAIOptions {
	since, _ := time.Parse("2006-01-02", o.since)
	return app.OAIOptions{Sets: o.sets, Since: since, Categories: splitList(o.categories)}
}

func (c *refreshCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.run = newRunCmd()
	c.run.flags.AddFlags(fs, env)
	c.run.data.AddFlags(fs, env)
	c.oai.AddFlags(fs, env)
	c.lic.AddFlags(fs, env, true, &c.oai.base)
	fs.StringVar(&c.publish, "out", "", "dataset root: each refresh that changes the dataset writes OUT/versions/<time>/ and points OUT/latest at it")
	c.run.workers.AddFlags(fs, env)
}

// Run discovers targets (the targets file as it is now, plus papers
// harvested from arXiv's OAI-PMH feed since the last harvest), runs every
// stage (work already done is reused, changed prompts or models redo only
// their stage), and publishes a new dataset version when anything changed,
// all under the store's lock. Exit status: 0 all done, 1 some targets
// failed (listed), 2 could not run.
func (c *refreshCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if c.publish == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	if err := c.run.validate(env); err != nil {
		return err
	}
	if err := c.oai.validate(); err != nil {
		return err
	}
	if err := c.lic.validate(); err != nil {
		return err
	}
	fileIDs, badRows, err := c.run.flags.ids(env, args)
	if err != nil {
		return err
	}
	dopts, _ := c.run.data.options(env.getenv)
	cfg, err := c.run.flags.config(env)
	if err != nil {
		return err
	}
	if len(c.oai.sets) > 0 {
		cfg.OAIBase = c.oai.base
	}
	c.lic.configure(&cfg)
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	// Held from before the first request to the publish.
	release, err := app.HoldVersions(c.publish)
	if err != nil {
		return err
	}
	defer release()
	discovered, sets, err := a.Discover(ctx, c.oai.options())
	for _, s := range sets {
		fmt.Fprintf(env.stderr, "curate refresh: set %s since %s: %d records, %d new papers, %d licences recorded\n", s.Set, s.From.Format("2006-01-02"), s.Records, s.New, s.Licenses)
	}
	if err != nil {
		return app.Fail(app.ErrCannotRun, fmt.Errorf("refresh: discover targets: %w", err))
	}
	targets := app.MergeTargets(fileIDs, discovered)
	if len(targets) == 0 && len(badRows) == 0 {
		return fmt.Errorf("%w: refresh: no targets: give --targets FILE, --targets-from FILE or --oai-set", errUsage)
	}
	fmt.Fprintf(env.stderr, "curate refresh: %d targets (%d from the targets file, %d harvested so far)\n", len(targets), len(fileIDs), len(discovered))
	keys, invalid := app.Targets(targets)
	invalid = append(badRows, invalid...)
	stageErr := runStages(ctx, env, a, app.PerTargetNames(), keys, invalid, c.run.workers.byStage())
	if !completed(stageErr) {
		return stageErr // interrupted or unable to go on: publish nothing
	}
	licErr := c.lic.run(ctx, env, a, keys, false)
	if !completed(licErr) {
		return licErr
	}
	if stageErr == nil {
		stageErr = licErr
	}
	o := c.run.data.build("", keys, dopts)
	o.Locked = true
	v, err := app.PublishVersion(ctx, a.Store, a.Log, version, c.publish, o)
	if errors.Is(err, app.ErrNothingToPublish) && stageErr != nil {
		// Say it, and exit as the stages did (1, or 75 when waiting).
		fmt.Fprintf(env.stderr, "curate refresh: %v\n", err)
		return stageErr
	}
	if err != nil {
		return err
	}
	switch {
	case v.Unchanged == "inputs":
		fmt.Fprintf(env.stdout, "curate refresh: no input changed; %s stays the latest version\n", v.Version)
	case v.Unchanged != "":
		fmt.Fprintf(env.stdout, "curate refresh: no instance changed; %s stays the latest version\n", v.Version)
	default:
		fmt.Fprintf(env.stdout, "curate refresh: published %s (%d train, %d test): %d added, %d removed, %d changed; %s -> versions/%s\n",
			v.Version, v.Log.Train, v.Log.Test, len(v.Log.Added), len(v.Log.Removed), len(v.Log.Changed), v.Latest, v.Version)
	}
	return stageErr
}
