package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/oaipmh"
	"github.com/groundwork/curate/store"
)

const envOAIBase = "CURATE_OAI_BASE"

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

func addOAIFlags(fs *flag.FlagSet, env *cmdEnv, o *oaiFlags) {
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

// oaiFromKey is where the next harvest date of a set is kept.
func oaiFromKey(set string) string { return "refresh/oai/" + set + "/from" }

// harvest lists each set's records since its last harvest and returns the
// new papers: records first submitted (v1) on or after the harvest's start,
// in the wanted categories. Records of older papers that were merely
// updated are not new targets.
func harvest(ctx context.Context, env *cmdEnv, opt *refreshOptions, st *store.Store) ([]string, error) {
	g := &opt.run.flags.global
	log, err := g.logger(env.stderr)
	if err != nil {
		return nil, err
	}
	hc, err := g.httpClient(log, oaipmh.ServiceConfig(opt.oai.base, g.arxivInterval))
	if err != nil {
		return nil, err
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, err := oaipmh.New(svc, oaipmh.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	first := time.Now().UTC().AddDate(0, 0, -7)
	if opt.oai.since != "" {
		if first, err = time.Parse("2006-01-02", opt.oai.since); err != nil {
			return nil, fmt.Errorf("%w: --oai-since %q: want YYYY-MM-DD", errUsage, opt.oai.since)
		}
	}
	wantCat := map[string]bool{}
	for _, c := range splitList(opt.oai.categories) {
		wantCat[c] = true
	}
	var found []string
	for _, set := range opt.oai.sets {
		from := first
		if v, err := st.Value(ctx, oaiFromKey(set)); err == nil {
			if from, err = time.Parse(time.RFC3339, string(v)); err != nil {
				return nil, fmt.Errorf("read %s: %w", oaiFromKey(set), err)
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		// New submissions of the harvest window; a day of slack covers
		// records whose v1 date is the eve of the window's first datestamp.
		newSince := from.AddDate(0, 0, -1).Truncate(24 * time.Hour)
		var setFound []string
		collect := func(r oaipmh.Record) error {
			if r.Deleted || r.Meta == nil || r.Meta.Created.Before(newSince) {
				return nil
			}
			if len(wantCat) > 0 && !wantCat[r.Meta.Primary] {
				return nil
			}
			setFound = append(setFound, r.ID)
			return nil
		}
		q := oaipmh.Query{From: from, Set: set}
		h, err := c.ListRecords(ctx, q, collect)
		if errors.Is(err, oaipmh.ErrBadResumptionToken) {
			// arXiv's tokens expire daily: start the window again.
			setFound = nil
			h, err = c.ListRecords(ctx, q, collect)
		}
		if err != nil {
			return nil, fmt.Errorf("harvest set %s from %s: %w", set, from.Format("2006-01-02"), err)
		}
		next := h.ResponseDate
		if next.IsZero() {
			next = time.Now().UTC()
		}
		if err := st.SetValue(ctx, oaiFromKey(set), []byte(next.UTC().Format(time.RFC3339))); err != nil {
			return nil, err
		}
		fmt.Fprintf(env.stderr, "curate refresh: set %s since %s: %d records, %d new papers\n", set, from.Format("2006-01-02"), h.Records, len(setFound))
		found = append(found, setFound...)
	}
	return found, nil
}
