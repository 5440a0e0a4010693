package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/groundwork/curate/app"
)

// showCmd is `curate show`.
type showCmd struct {
	store storeFlags
	raw   bool
}

func (c *showCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	fs.BoolVar(&c.raw, "raw", false, "print the stored raw HTML page instead of the records")
}

// Run prints what the store holds for each paper as JSON. An argument
// that is neither an arXiv ID nor a store item ("s2:…", "title:…") is a
// usage error.
func (c *showCmd) Run(ctx context.Context, env *Env, ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("%w: no ID given", errUsage)
	}
	if err := c.store.validate(); err != nil {
		return err
	}
	return app.Show(ctx, c.store.store, ids, c.raw,
		func(it *app.ShownItem) error { return printJSON(env.Stdout, it) },
		func(page []byte) error { _, err := env.Stdout.Write(page); return err })
}
