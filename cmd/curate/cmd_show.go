package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/groundwork/curate/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

type showOptions struct {
	global globalOptions
	raw    bool
	ids    []string
}

func runShowCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt showOptions
	fs := newFlagSet(env, "show", "[--store DIR] ID...")
	addGlobalFlags(fs, env, &opt.global)
	fs.BoolVar(&opt.raw, "raw", false, "print the stored raw HTML page instead of the records")
	ids, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: no ID given", errUsage)
	}
	opt.ids = ids
	return runShow(ctx, env, opt)
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
	Ledger  []store.Entry          `json:"ledger"`
}

// runShow prints what the store holds for each paper as JSON.
func runShow(ctx context.Context, env *cmdEnv, opt showOptions) error {
	st, err := opt.global.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	enc := json.NewEncoder(env.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	var missing []string
	for _, in := range opt.ids {
		key := in
		if id, err := arxiv.Parse(in); err == nil {
			key = record.Key(id)
		}
		if opt.raw {
			page, _, err := st.GetBytes(ctx, key, record.Raw)
			if err != nil {
				return fmt.Errorf("show %s: %w", in, err)
			}
			if _, err := env.stdout.Write(page); err != nil {
				return err
			}
			continue
		}
		item := shownItem{ID: key, Records: map[string]shownRecord{}}
		recs, err := st.Records(ctx, key)
		if err != nil {
			return fmt.Errorf("show %s: %w", in, err)
		}
		for _, r := range recs {
			data, err := st.Blob(r.Blob)
			if err != nil {
				return fmt.Errorf("show %s %s: %w", in, r.Kind, err)
			}
			sr := shownRecord{Blob: string(r.Blob), UpdatedAt: r.UpdatedAt, Meta: r.Meta}
			if json.Valid(data) {
				sr.Value = data
			} else {
				sr.Bytes = len(data)
			}
			item.Records[r.Kind] = sr
		}
		if item.Ledger, err = st.Entries(ctx, key); err != nil {
			return fmt.Errorf("show %s: %w", in, err)
		}
		if len(recs) == 0 && len(item.Ledger) == 0 {
			missing = append(missing, in)
			continue
		}
		if err := enc.Encode(item); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("show: the store %s holds nothing for %v: %w", st.Dir(), missing, store.ErrNotFound)
	}
	return nil
}
