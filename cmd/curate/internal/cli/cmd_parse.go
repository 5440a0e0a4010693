package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/groundwork/curate/app"
)

// parseCmd is `curate parse`.
type parseCmd struct{ opt app.ParseOptions }

func (c *parseCmd) AddFlags(fs *flag.FlagSet, _ *Env) {
	fs.StringVar(&c.opt.Source, "source", "", "which site served the page: arxiv or ar5iv (detected from the page when empty)")
	fs.StringVar(&c.opt.ID, "id", "", "arXiv ID of the paper (read from the page when empty)")
	fs.StringVar(&c.opt.URL, "url", "", "URL the page was fetched from")
	fs.BoolVar(&c.opt.Compact, "compact", false, "one JSON document per line instead of indented JSON")
	fs.Int64Var(&c.opt.MaxMB, "max-mb", app.MaxPageMB, "refuse a page longer than this many MiB; 0: no bound, and the page parsed whole whatever its tree costs (by default a page whose tree could pass 384 MB is parsed up to there, and says so)")
}

func (c *parseCmd) Run(_ context.Context, env *Env, files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: no FILE given", errUsage)
	}
	opt := c.opt
	opt.Files = files
	return app.Parse(env.Stdout, env.stdinReader(), opt)
}
