package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/licenses"
)

// licensesCmd is `curate licenses`: record the licence arXiv's metadata
// gives each target, for the dataset card.
type licensesCmd struct {
	store   storeFlags
	net     netFlags
	lic     licenseFlags
	targets string
}

// licenseFlags are the licence lookup's flags: --licenses on run and
// refresh (the lookup is opt-in there), --recheck-missing on curate
// licenses, and --oai-base, which refresh shares with its harvest.
type licenseFlags struct {
	lookup  bool
	recheck bool
	base    *string
}

// lookupCost says how long a lookup takes, for --help.
func lookupCost() string {
	per := 1000 * oaipmh.DefaultInterval
	return fmt.Sprintf("one OAI-PMH request per target whose licence is not recorded yet, one every --arxiv-interval (%s by default, as arXiv asks): 1,000 targets take about %.0f minutes", oaipmh.DefaultInterval, per.Minutes())
}

// AddFlags registers --licenses (optIn: run and refresh) or
// --recheck-missing (curate licenses), and --oai-base unless base points
// at a --oai-base registered already.
func (f *licenseFlags) AddFlags(fs *flag.FlagSet, env *Env, optIn bool, base *string) {
	if optIn {
		fs.BoolVar(&f.lookup, "licenses", false, "before the dataset, look up each target's licence in arXiv's OAI-PMH metadata (--oai-base) for the dataset card: "+lookupCost()+"; stopped, it resumes, and a target recorded once is not asked again (see curate licenses)")
	} else {
		f.lookup = true
		fs.BoolVar(&f.recheck, "recheck-missing", false, "ask again about targets the repository had no record of when last asked (a record that names no licence is never asked again)")
	}
	f.base = base
	if base == nil {
		f.base = new(string)
		*f.base = cmp.Or(env.Getenv(envOAIBase), oaipmh.DefaultBaseURL)
		fs.StringVar(f.base, "oai-base", *f.base, "arXiv OAI-PMH base URL (env "+envOAIBase+")")
	}
}

func (f *licenseFlags) validate() error {
	if !f.lookup {
		return nil
	}
	return checkBaseURL("--oai-base", *f.base)
}

// configure adds the OAI-PMH service to cfg when the lookup is asked for.
func (f *licenseFlags) configure(cfg *app.Config) {
	if f.lookup {
		cfg.OAIBase = *f.base
	}
}

// printLicenses writes a licence lookup's counts.
func printLicenses(env *Env, sum *licenses.Summary) {
	if sum == nil {
		return
	}
	state := ""
	if sum.Stopped != "" {
		state = "; stopped (" + sum.Stopped + "): run again to resume"
	}
	fmt.Fprintf(env.Stderr, "curate licenses: %d targets: %d recorded before, %d recorded now, %d unknown to arXiv's OAI-PMH repository, %d failed; %s%s\n",
		sum.Papers, sum.Stored, sum.Recorded, sum.Missing, sum.Failed, app.Plural(sum.Requests, "request"), state)
}

// licenseLine is a target's line: ID, outcome, licence.
func licenseLine(r licenses.Result) string {
	what := "-"
	switch {
	case r.Outcome == licenses.Failed:
		what = r.Err.Error()
	case r.License.Deleted:
		what = "(deleted from arXiv)"
	case r.License.Found && r.License.License == "":
		what = "(none named)"
	case r.License.Found:
		what = r.License.License
	}
	return r.ID + "\t" + r.Outcome + "\t" + what
}

func (c *licensesCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	c.net.AddFlags(fs, env)
	c.lic.AddFlags(fs, env, false, nil)
	fs.StringVar(&c.targets, "targets", "", "file of arXiv IDs, one per line, '#' comments ('-' for stdin); default (and no IDs): every target in the store")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(fs.Output(), "\nRecords, for each target, the licence its arXiv metadata (OAI-PMH, metadataPrefix=arXiv) gives, or that it names none; "+
			"the dataset card counts them. It costs %s. Each answer is stored as it comes: interrupted, the same command resumes, and a target once answered for is not asked about again. "+
			"A refresh records the licences of the papers it harvests without asking.\n", lookupCost())
	}
}

// Run looks up the licences of the targets given, or of every target in
// the store. Exit status: 0 every target answered, 1 some lookups failed
// (asked again next time), 2 could not run, 130 interrupted.
func (c *licensesCmd) Run(ctx context.Context, env *Env, args []string) error {
	cfg, o, err := c.options(env, args)
	if err != nil {
		return err
	}
	o.OnPaper = func(r licenses.Result) { fmt.Fprintln(env.Stdout, licenseLine(r)) }
	sum, err := app.RecordLicenses(ctx, cfg, o)
	printLicenses(env, sum)
	if errors.Is(err, app.ErrInterrupted) {
		fmt.Fprintln(env.Stderr, "curate licenses: interrupted: every answer so far is stored; run the same command again to resume")
	}
	return err
}

// options checks the flags and makes the App's configuration and the
// lookup's options of them.
func (c *licensesCmd) options(env *Env, args []string) (app.Config, app.LicensesOptions, error) {
	o := app.LicensesOptions{Options: licenses.Options{RecheckMissing: c.lic.recheck}}
	for _, v := range []func() error{c.store.validate, c.net.validate, c.lic.validate} {
		if err := v(); err != nil {
			return app.Config{}, o, err
		}
	}
	ids := append([]string(nil), args...)
	if c.targets != "" {
		more, err := readTargets(c.targets, env.stdinReader())
		if err != nil {
			return app.Config{}, o, err
		}
		ids = append(ids, more...)
	}
	keys, invalid := app.Targets(ids)
	if len(invalid) > 0 {
		return app.Config{}, o, fmt.Errorf("%w: invalid arXiv IDs:\n  %s", errUsage, strings.Join(invalid, "\n  "))
	}
	if len(ids) > 0 {
		o.Keys = keys
	}
	log, err := c.store.logger(env.Stderr)
	if err != nil {
		return app.Config{}, o, err
	}
	cfg := app.Config{Version: version, Log: log, Store: c.store.store, Lock: true, Heal: true, Net: c.net.config(env), LLM: app.LLM{Heuristic: true}, Drain: env.Drain}
	c.lic.configure(&cfg)
	return cfg, o, nil
}
