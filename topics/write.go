package topics

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
)

// Files of a topics directory.
const (
	TopicsParquet = "topics.parquet"
	TopicsJSONL   = "topics.jsonl"
	GroupsJSONL   = "groups.jsonl"
	SeedsJSONL    = "seeds.jsonl"
	ReportFile    = "report.md"
)

// Write publishes r in directory out:
//
//	out/topics.parquet   the selected topics, one row each, in selection order
//	out/topics.jsonl     the same rows as JSON lines
//	out/groups.jsonl     every group (of two papers or more, or kept) with its verdict
//	out/seeds.jsonl      every seed considered: kept with its influential set, or why not
//	out/report.md        options, seed and group counts, group sizes, the selection
//
// Nothing in them depends on the time or the order of the inputs, so the
// same Result writes the same bytes. The write is atomic
// (publish.Dir, with a manifest of every file): under a lock on out, the
// files are written and synced in a temporary directory beside out, which
// then takes out's place (on Linux by one atomic exchange; elsewhere out
// is briefly absent between two renames); the directory it replaces is
// removed. Write refuses to replace a
// directory that is neither empty nor a topics directory.
func Write(ctx context.Context, out string, r *Result, opts WriteOptions) (err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("write topics %s: %w", out, err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{TopicsParquet, func(w io.Writer) error { return EncodeParquet(w, r, opts.Compression, opts.Version) }},
		{TopicsJSONL, func(w io.Writer) error { return atomicdir.EncodeJSONL(w, r.Topics) }},
		{GroupsJSONL, func(w io.Writer) error { return atomicdir.EncodeJSONL(w, r.Groups) }},
		{SeedsJSONL, func(w io.Writer) error { return atomicdir.EncodeJSONL(w, r.Seeds) }},
		{ReportFile, func(w io.Writer) error { return WriteReport(w, r) }},
	}
	_, err = publish.Dir(ctx, out, publish.Options{
		Kind: ManifestKind, Version: opts.Version, Splits: r.Options.Splits,
		Describe: fmt.Sprintf("a topics directory (no %s of kind %s)", publish.ManifestFile, ManifestKind),
	}, func(tmp string) error {
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := atomicdir.WriteFileFunc(filepath.Join(tmp, f.name), f.write); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write topics %s: %w", out, err)
	}
	return nil
}

// ManifestKind is the kind a topics directory's manifest names.
const ManifestKind = "topics"

// WriteOptions configure Write.
type WriteOptions struct {
	Version string // curate's, for the manifest
	// Compression is the Parquet page codec ("": parquetcodec.Default).
	Compression parquetcodec.Codec
}

// EncodeParquet writes r's topics to w as one Parquet file, its pages
// compressed with codec ("": parquetcodec.Default), with the options as
// key/value metadata "groundwork.topics.options" and curate at version
// named in its footer.
func EncodeParquet(w io.Writer, r *Result, codec parquetcodec.Codec, version string) error {
	opt, err := json.Marshal(r.Options)
	if err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[Topic](w,
		parquetcodec.CreatedBy(version),
		codec.WriterOption(),
		parquet.KeyValueMetadata("groundwork.topics.options", string(opt)))
	if len(r.Topics) > 0 {
		if _, err := pw.Write(r.Topics); err != nil {
			return fmt.Errorf("write topics as parquet: %w", err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("write topics as parquet: %w", err)
	}
	return nil
}

// ReadParquet reads the topics of a topics.parquet file.
func ReadParquet(path string) ([]Topic, error) {
	rows, err := parquet.ReadFile[Topic](path)
	if err != nil {
		return nil, fmt.Errorf("read topics %s: %w", path, err)
	}
	return rows, nil
}

// WriteReport writes the Markdown report of r: the options, what became
// of the seeds and the groups, a table of group sizes, and the selection.
func WriteReport(w io.Writer, r *Result) error {
	var b strings.Builder
	o := r.Options
	fmt.Fprintf(&b, "# Topics\n\n")
	fmt.Fprintf(&b, "Seeds are grouped when their influential-citation sets have IoU ≥ %g (maximal cliques: every two supporting papers are similar). ", o.IoU)
	fmt.Fprintf(&b, "A group is kept with at least %d supporting papers and %d to %d background papers. ", o.MinSupport, o.MinBackground, o.MaxBackground)
	fmt.Fprintf(&b, "Up to %d topics are selected by greedy maximum diversity under 1 − Jaccard of background sets (seed %d).\n\n", o.Budget, o.Seed)
	filters := []string{}
	if o.PublishedOnly {
		filters = append(filters, "published papers only (a venue that is not a preprint server)")
	}
	if o.TopPercent > 0 {
		filters = append(filters, fmt.Sprintf("the top %g%% by citation count within each year", o.TopPercent))
	}
	if len(filters) == 0 {
		filters = append(filters, "none")
	}
	fmt.Fprintf(&b, "Seed filters: %s.\n\n", strings.Join(filters, "; "))
	fmt.Fprintf(&b, "Splits drawn on: %s (a paper is test when first published on or after %s; supporting and background papers of other splits are left out, and every paper's split is recorded).",
		strings.Join(o.Splits, " and "), o.TestFrom)
	if slices.Contains(o.Splits, "test") {
		b.WriteString(" **Test papers were asked for by name: these topics hold papers of the dataset's test split; do not train on them if you evaluate on that split.**")
	}
	b.WriteString("\n\n")

	fmt.Fprintf(&b, "## Seeds\n\n| status | seeds |\n|---|---:|\n")
	seedCounts := map[string]int{}
	for _, s := range r.Seeds {
		seedCounts[s.Status]++
	}
	for _, k := range sortedKeys(seedCounts) {
		fmt.Fprintf(&b, "| %s | %d |\n", k, seedCounts[k])
	}
	fmt.Fprintf(&b, "| total | %d |\n\n", len(r.Seeds))

	fmt.Fprintf(&b, "## Groups\n\n")
	fmt.Fprintf(&b, "%d seeds are similar to no other seed. ", r.Singletons)
	verdicts := map[string]int{}
	for _, g := range r.Groups {
		verdicts[g.Verdict]++
	}
	fmt.Fprintf(&b, "%d groups:", len(r.Groups))
	for _, k := range sortedKeys(verdicts) {
		fmt.Fprintf(&b, " %s %d;", k, verdicts[k])
	}
	fmt.Fprintf(&b, " %d candidates for the selection.\n\n", r.Candidates)
	if len(r.Groups) > 0 {
		// Group sizes: supporting papers by background size.
		type size struct{ support, background int }
		sizes := map[size]int{}
		var supports, backgrounds []int
		for _, g := range r.Groups {
			sizes[size{g.Support, g.BackgroundSize}]++
			supports = append(supports, g.Support)
			backgrounds = append(backgrounds, g.BackgroundSize)
		}
		slices.Sort(supports)
		supports = slices.Compact(supports)
		slices.Sort(backgrounds)
		backgrounds = slices.Compact(backgrounds)
		fmt.Fprintf(&b, "Group sizes (rows: supporting papers; columns: background papers):\n\n| support |")
		for _, bg := range backgrounds {
			fmt.Fprintf(&b, " %d |", bg)
		}
		fmt.Fprintf(&b, "\n|---:|%s\n", strings.Repeat("---:|", len(backgrounds)))
		for _, s := range supports {
			fmt.Fprintf(&b, "| %d |", s)
			for _, bg := range backgrounds {
				if n := sizes[size{s, bg}]; n > 0 {
					fmt.Fprintf(&b, " %d |", n)
				} else {
					b.WriteString(" |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "## Selection\n\n")
	if len(r.Topics) == 0 {
		fmt.Fprintf(&b, "No topic: no group met the bounds.\n")
	} else {
		fmt.Fprintf(&b, "| rank | topic | tag | category | support | background | min IoU | distance | nearest |\n|---:|---|---|---|---:|---:|---:|---:|---|\n")
		for _, t := range r.Topics {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %d | %d | %.3f | %.3f | %s |\n", t.Rank, t.ID, mdCell(t.Tag), cmp.Or(t.Category, "-"),
				t.Stats.Support, t.Stats.BackgroundSize, t.Stats.MinIoU, t.Selection.Distance, cmp.Or(t.Selection.Nearest, "-"))
		}
		for _, t := range r.Topics {
			fmt.Fprintf(&b, "\n### %d. %s (%s)\n\n", t.Rank, mdCell(t.Tag), t.ID)
			fmt.Fprintf(&b, "Tag by %s (%s)", t.TagModel, t.TagPromptVersion)
			if t.TagFallback != "" {
				fmt.Fprintf(&b, "; fallback: %s", t.TagFallback)
			}
			fmt.Fprintf(&b, ".\n\nSupporting papers:\n\n")
			for _, s := range t.Supporting {
				fmt.Fprintf(&b, "- %s %s (%s, %d influential references)\n", s.ArxivID, mdCell(s.Title), cmp.Or(s.Venue, "no venue"), len(s.Influential))
			}
			fmt.Fprintf(&b, "\nBackground papers (%d of them cited by every supporting paper):\n\n", t.Stats.Core)
			for _, bg := range t.Background {
				fmt.Fprintf(&b, "- %s (%s; cited by %d; %s)\n", mdCell(cmp.Or(bg.Title, bg.ID)), bg.ID, bg.CitedBy, cmp.Or(bg.TextLevel, "no text"))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes text safe in a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
