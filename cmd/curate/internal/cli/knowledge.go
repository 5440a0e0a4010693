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
// addOAIBase). The cut applies by default: the histories come from the
// cheapest source that has them (the snapshot, the store, the arXiv API),
// and OAI-PMH is asked, one GetRecord a paper, only for what they cannot
// settle; --oai-versions=false never asks it.
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
	fs.StringVar(&f.mode, "knowledge-cut", string(knowledgecut.DefaultMode), "what a target's sources may know: flag (read each source at its last version dated on or before the target's v1, the target at v1; a source read later is kept and marked revised_after_cutoff), strict (such sources, and those whose version is not known, are dropped), off (as served now, no version history asked for); a source first published after its target's v1 is dropped unless off. The histories come from --arxiv-metadata, the store, the arXiv API (one lookup per target for its sources) and, for what those cannot settle, OAI-PMH (--oai-versions)")
	fs.StringVar(&f.metadata, "arxiv-metadata", "", "arXiv's metadata snapshot (the JSON-lines arxiv-metadata-oai-snapshot.json, plain or gzip): papers' version histories without a request; indexed once into the store")
	fs.BoolVar(&f.oai, "oai-versions", true, "ask arXiv's OAI-PMH repository (--oai-base, arXivRaw) for the version histories nothing cheaper settles: one GetRecord per paper revised twice or more whose target's cutoff falls between its first and last versions' dates, one every --arxiv-interval (3s, as arXiv asks); stored, so never asked twice. --oai-versions=false never asks it: such sources are left unpinned (read as served now) and counted")
	fs.Var(listFlag{&f.harvests}, "oai-harvest", "first harvest this OAI-PMH set's version histories whole (\"cs\", \"physics:hep-th\"; \"all\": the whole repository), about one request per 1,000 papers, so that no paper of it costs a request; stored page by page, resumed, not asked again; repeatable")
}

// addOAIBase registers --oai-base, for a command that has none of its
// own.
func (f *knowledgeFlags) addOAIBase(fs *flag.FlagSet, env *Env) {
	def := cmp.Or(env.Getenv(envOAIBase), oaipmh.DefaultBaseURL)
	fs.String("oai-base", def, "arXiv OAI-PMH base URL, asked for the papers' version histories nothing cheaper settles (--oai-versions; env "+envOAIBase+")")
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

// given reports whether the flag name was set on the command line.
func (f *knowledgeFlags) given(name string) bool {
	set := false
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	}
	return set
}

// validate checks the flags before anything is opened or asked: a mode
// that is none, a file that is no metadata snapshot, a request of
// OAI-PMH that --knowledge-cut off or --oai-versions=false rules out.
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
	switch {
	case mode == knowledgecut.Off && f.oai && f.given("oai-versions"):
		return fmt.Errorf("%w: --oai-versions asks OAI-PMH for the knowledge cut, which --knowledge-cut off turns off: give one of them", errUsage)
	case mode == knowledgecut.Off && len(f.harvests) > 0:
		return fmt.Errorf("%w: --oai-harvest harvests version histories for the knowledge cut, which --knowledge-cut off turns off: give one of them", errUsage)
	case len(f.harvests) > 0 && !f.oai:
		return fmt.Errorf("%w: --oai-harvest asks OAI-PMH, which --oai-versions=false rules out: give one of them", errUsage)
	}
	if f.oai && mode != knowledgecut.Off {
		if err := checkBaseURL("--oai-base", f.repository()); err != nil {
			return err
		}
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
