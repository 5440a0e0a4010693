package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/summarize"
)

// demoCmd is `curate demo`: the whole pipeline, offline, on the bundled
// synthetic corpus, served by local stand-ins for the remote services.
type demoCmd struct{ run *runCmd }

// demoStore is the demo's own store, apart from a real one.
const demoStore = "./curate-demo"

func (c *demoCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.run = newRunCmd()
	c.run.flags.store.AddFlags(fs, env)
	c.run.flags.llm.AddFlags(fs, env)
	c.run.flags.know.AddFlags(fs, env)
	c.run.data.AddFlags(fs, env)
	fs.StringVar(&c.run.out, "out", "", "where the dataset goes (default: STORE/dataset)")
	// The demo's store is its own: --store says where, and the default is
	// not a real run's.
	if f := fs.Lookup("store"); f != nil && env.Getenv(envStore) == "" {
		f.DefValue = demoStore
		f.Value.Set(demoStore)
	}
}

func (c *demoCmd) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: the demo takes no arguments (it runs its own corpus)", errUsage)
	}
	srv, err := app.StartDemo(ctx, c.run.flags.store.store)
	if err != nil {
		return fmt.Errorf("demo: start the bundled services: %w", err)
	}
	defer srv.Close()
	c.configure(srv)
	ids := demo.TargetIDs()
	fmt.Fprintf(env.Stderr, "curate demo: a synthetic corpus of %d target papers served offline by %s\n"+
		"(every paper, author and DOI in it is invented; the services speak the real protocols)\n\n", len(ids), srv)
	if err := c.run.pipeline(ctx, env, ids, nil); err != nil {
		return err
	}
	f := &c.run.flags
	fmt.Fprintf(env.Stdout, "the dataset is in %s (open %s in a browser); the store is %s (try: curate show --store %s %s)\n",
		c.run.out, filepath.Join(c.run.out, "report.html"), f.store.store, f.store.store, ids[0])
	return nil
}

// configure sets the run's flags for the demo's services. The demo is
// about the pipeline, not politeness: the services are local, so they
// are asked quickly. No network flag is offered: the demo only ever
// talks to its own services.
func (c *demoCmd) configure(srv *sim.Servers) {
	f := &c.run.flags
	f.net = netFlags{arxivBase: srv.URL(sim.Arxiv), ar5ivBase: srv.URL(sim.Ar5iv), arxivInterval: 20 * time.Millisecond,
		timeout: 60 * time.Second, maxBody: 64 << 20, retries: 1, missingTTL: 7 * 24 * time.Hour}
	f.pdf = defaultPDFFlags()
	f.s2 = s2Flags{base: srv.URL(sim.S2), arxivAPIBase: srv.URL(sim.ArxivAPI), interval: 10 * time.Millisecond, pageLimit: 500}
	f.plausible = classify.Plausibility{MaxSources: classify.DefaultMaxSources, MaxShare: classify.DefaultMaxShare,
		NearlyAll: classify.DefaultNearlyAll, UniformLabels: classify.DefaultUniformLabels, RepeatedRationale: classify.DefaultRepeatedRationale,
		Unsupported: classify.DefaultUnsupported}
	f.minGrounding = summarize.DefaultMinGrounding
	// The papers' version histories come as in a run of the user's own:
	// the demo's arXiv API, and its OAI-PMH repository for what an entry
	// cannot settle (unless --oai-versions=false or --knowledge-cut off).
	f.know.base = srv.URL(sim.OAIPMH) + sim.OAIPath
	if f.llm.base == "" {
		f.llm.backend = "heuristic"
	}
	for _, name := range app.PerTargetNames() {
		two := 2
		c.run.workers[name] = &two
	}
	if c.run.out == "" {
		c.run.out = filepath.Join(f.store.store, "dataset")
	}
}
