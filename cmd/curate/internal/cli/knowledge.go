package cli

import (
	"cmp"
	"flag"
	"fmt"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxivmeta"
)

// knowledgeFlags are the knowledge cut's flags: --knowledge-cut,
// --arxiv-metadata, --oai-versions and --oai-harvest, and the OAI-PMH
// repository the version histories come from (--oai-base: the command's
// own when it has one, run's and refresh's, else registered by
// addOAIBase). OAI-PMH is asked for versions only with --oai-versions:
// its requests (one a paper, at arXiv's pace) are opted into, as the
// licence lookup's are.
type knowledgeFlags struct {
	mode     string
	metadata string
	oai      bool
	harvests []string
	fs       *flag.FlagSet
	// base is set by a command that configures the repository itself
	// (the demo).
	base string
}

func (f *knowledgeFlags) AddFlags(fs *flag.FlagSet, env *Env) {
	f.fs = fs
	fs.StringVar(&f.mode, "knowledge-cut", string(knowledgecut.DefaultMode), "what a target's sources may know: flag (read each source at its last version dated on or before the target's v1, the target at v1; a source read later is kept and marked revised_after_cutoff), strict (such sources are dropped), off (as served now); a source first published after its target's v1 is dropped unless off. Needs version histories: --arxiv-metadata or --oai-versions")
	fs.StringVar(&f.metadata, "arxiv-metadata", "", "arXiv's metadata snapshot (the JSON-lines arxiv-metadata-oai-snapshot.json, plain or gzip): papers' version histories without a request; indexed once into the store")
	fs.BoolVar(&f.oai, "oai-versions", false, "look up the version histories --arxiv-metadata lacks in arXiv's OAI-PMH repository (--oai-base, arXivRaw): one request per paper (the target and each source on arXiv) not stored yet, one every --arxiv-interval (3s, as arXiv asks); stored, so never asked twice")
	fs.Var(listFlag{&f.harvests}, "oai-harvest", "with --oai-versions, first harvest this OAI-PMH set's version histories whole (\"cs\", \"physics:hep-th\"; \"all\": the whole repository), about one request per 1,000 papers instead of one per paper; stored page by page, resumed, not asked again; repeatable")
}

// addOAIBase registers --oai-base, for a command that has none of its
// own.
func (f *knowledgeFlags) addOAIBase(fs *flag.FlagSet, env *Env) {
	def := cmp.Or(env.Getenv(envOAIBase), oaipmh.DefaultBaseURL)
	fs.String("oai-base", def, "arXiv OAI-PMH base URL, asked for papers' version histories with --oai-versions (env "+envOAIBase+")")
}

// repository returns the OAI-PMH base URL.
func (f *knowledgeFlags) repository() string {
	if f.base != "" || f.fs == nil {
		return f.base
	}
	if fl := f.fs.Lookup("oai-base"); fl != nil {
		return fl.Value.String()
	}
	return oaipmh.DefaultBaseURL
}

// validate checks the flags before anything is opened or asked: a mode
// that is none, a file that is no metadata snapshot, strict with no
// source of versions, a harvest without a repository.
func (f *knowledgeFlags) validate() error {
	mode, err := knowledgecut.ParseMode(f.mode)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if f.metadata != "" {
		if err := arxivmeta.Check(f.metadata); err != nil {
			return fmt.Errorf("%w: --arxiv-metadata: %v", errUsage, err)
		}
	}
	if f.oai {
		if err := checkBaseURL("--oai-base", f.repository()); err != nil {
			return err
		}
	}
	switch {
	case mode == knowledgecut.Strict && f.metadata == "" && !f.oai:
		return fmt.Errorf("%w: --knowledge-cut strict keeps only sources shown to be of their target's time, which needs version histories: give --arxiv-metadata FILE or --oai-versions", errUsage)
	case len(f.harvests) > 0 && !f.oai:
		return fmt.Errorf("%w: --oai-harvest is a way of --oai-versions: give both", errUsage)
	case f.oai && mode == knowledgecut.Off:
		return fmt.Errorf("%w: --oai-versions asks OAI-PMH for the knowledge cut, which --knowledge-cut off turns off: give one of them", errUsage)
	}
	return nil
}

// configure sets the knowledge cut of cfg (validate has run).
func (f *knowledgeFlags) configure(cfg *app.Config) {
	mode, _ := knowledgecut.ParseMode(f.mode)
	cfg.Knowledge = app.Knowledge{Mode: mode, Metadata: f.metadata}
	if f.oai && mode != knowledgecut.Off {
		cfg.Knowledge.OAI, cfg.OAIBase = true, f.repository()
		for _, set := range f.harvests {
			if set == "all" {
				set = ""
			}
			cfg.Knowledge.Harvests = append(cfg.Knowledge.Harvests, set)
		}
	}
}
