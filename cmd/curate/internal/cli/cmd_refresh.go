package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/oaipmh"
)

const envOAIBase = "CURATE_OAI_BASE"

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

func (o *oaiFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	o.base = cmp.Or(env.Getenv(envOAIBase), oaipmh.DefaultBaseURL)
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

func (c *refreshCmd) AddFlags(fs *flag.FlagSet, env *Env) {
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
func (c *refreshCmd) Run(ctx context.Context, env *Env, args []string) error {
	cfg, o, err := c.options(env, args)
	if err != nil {
		return err
	}
	return app.Refresh(ctx, cfg, o)
}

// options checks the flags and makes the refresh's configuration and
// options of them, with what it prints as it goes.
func (c *refreshCmd) options(env *Env, args []string) (app.Config, app.RefreshOptions, error) {
	if c.publish == "" {
		return app.Config{}, app.RefreshOptions{}, fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	for _, v := range []func() error{func() error { return c.run.validate(env) }, c.oai.validate, c.lic.validate} {
		if err := v(); err != nil {
			return app.Config{}, app.RefreshOptions{}, err
		}
	}
	fileIDs, badRows, err := c.run.flags.ids(env, args)
	if err != nil {
		return app.Config{}, app.RefreshOptions{}, err
	}
	dopts, _ := c.run.data.options(env.Getenv)
	cfg, err := c.run.flags.config(env)
	if err != nil {
		return app.Config{}, app.RefreshOptions{}, err
	}
	if len(c.oai.sets) > 0 {
		cfg.OAIBase = c.oai.base
	}
	c.lic.configure(&cfg)
	o := app.RefreshOptions{IDs: fileIDs, BadRows: badRows, OAI: c.oai.options(), Versions: c.publish, Workers: c.run.workers.byStage(),
		Licenses: c.lic.lookup, Dataset: c.run.data.build("", nil, dopts)}
	o.Watch = watchRun(env, cfg.Log, true)
	o.Watch.NotPublished = func(err error) { fmt.Fprintf(env.Stderr, "curate refresh: %v\n", err) }
	o.Harvested = func(s app.SetHarvest) {
		fmt.Fprintf(env.Stderr, "curate refresh: set %s since %s: %d records, %d new papers, %d licences recorded\n", s.Set, s.From.Format("2006-01-02"), s.Records, s.New, s.Licenses)
	}
	o.Targets = func(all, file, harvested int) {
		fmt.Fprintf(env.Stderr, "curate refresh: %d targets (%d from the targets file, %d harvested so far)\n", all, file, harvested)
	}
	o.Published = func(v *app.VersionOutcome) { printVersion(env, v) }
	return cfg, o, nil
}

// printVersion says what a refresh published.
func printVersion(env *Env, v *app.VersionOutcome) {
	switch {
	case v.Unchanged == "inputs":
		fmt.Fprintf(env.Stdout, "curate refresh: no input changed; %s stays the latest version\n", v.Version)
	case v.Unchanged != "":
		fmt.Fprintf(env.Stdout, "curate refresh: no instance changed; %s stays the latest version\n", v.Version)
	default:
		fmt.Fprintf(env.Stdout, "curate refresh: published %s (%d train, %d test): %d added, %d removed, %d changed; %s -> versions/%s\n",
			v.Version, v.Log.Train, v.Log.Test, len(v.Log.Added), len(v.Log.Removed), len(v.Log.Changed), v.Latest, v.Version)
	}
}
