package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/internal/targetlist"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// showCmd is `curate show`.
type showCmd struct {
	store storeFlags
	raw   bool
}

func (c *showCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.store.AddFlags(fs, env)
	fs.BoolVar(&c.raw, "raw", false, "print the stored raw HTML page instead of the records")
}

// shownRecord is one stored record: JSON records inline, byte records
// (raw pages) by size and hash.
type shownRecord struct {
	Blob      string            `json:"blob"`
	Bytes     int               `json:"bytes,omitempty"`
	UpdatedAt time.Time         `json:"updated_at"`
	Meta      map[string]string `json:"meta,omitempty"`
	Value     json.RawMessage   `json:"value,omitempty"`
}

type shownItem struct {
	ID      string                 `json:"id"`
	Records map[string]shownRecord `json:"records"`
	Ledger  []entry                `json:"ledger"`
}

// Run prints what the store holds for each paper as JSON. An argument
// that is neither an arXiv ID nor a store item ("s2:…", "title:…") is a
// usage error.
func (c *showCmd) Run(ctx context.Context, env *cmdEnv, ids []string) error {
	if len(ids) == 0 {
		return fmt.Errorf("%w: no ID given", errUsage)
	}
	if err := c.store.validate(); err != nil {
		return err
	}
	keys := make([]string, len(ids))
	for i, in := range ids {
		id, err := targetlist.ParseValue(in) // what --targets-from reads: URLs too
		switch {
		case err == nil:
			keys[i] = record.Key(id)
		case strings.HasPrefix(in, "s2:") || strings.HasPrefix(in, "title:") || strings.HasPrefix(in, "llm:"):
			keys[i] = in
		default:
			return fmt.Errorf("%w: %q is not an arXiv ID (nor a store item such as s2:PAPERID)", errUsage, in)
		}
	}
	st, err := app.OpenStoreReadOnly(ctx, c.store.store)
	if err != nil {
		return err
	}
	defer st.Close()
	var missing []string
	for i, key := range keys {
		if c.raw {
			page, _, err := st.GetBytes(ctx, key, record.Raw)
			if err != nil {
				return fmt.Errorf("raw page of %s: %w", ids[i], err)
			}
			if _, err := env.stdout.Write(page); err != nil {
				return err
			}
			continue
		}
		item := shownItem{ID: key, Records: map[string]shownRecord{}}
		recs, err := st.Records(ctx, key)
		if err != nil {
			return fmt.Errorf("records of %s: %w", ids[i], err)
		}
		for _, r := range recs {
			data, err := st.Blob(r.Blob)
			if err != nil {
				return fmt.Errorf("%s record of %s: %w", r.Kind, ids[i], err)
			}
			sr := shownRecord{Blob: string(r.Blob), UpdatedAt: r.UpdatedAt, Meta: r.Meta}
			if json.Valid(data) {
				sr.Value = data
			} else {
				sr.Bytes = len(data)
			}
			item.Records[r.Kind] = sr
		}
		es, err := st.Entries(ctx, key)
		if err != nil {
			return fmt.Errorf("ledger of %s: %w", ids[i], err)
		}
		item.Ledger = entries(es)
		if len(recs) == 0 && len(es) == 0 {
			missing = append(missing, ids[i])
			continue
		}
		if err := printJSON(env.stdout, item); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the store %s holds nothing for %s: %w", st.Dir(), strings.Join(missing, ", "), store.ErrNotFound)
	}
	return nil
}
