package pairs

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/atomicdir"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
)

// Files of a pairs directory.
const (
	PairsParquet = "pairs.parquet"
	PairsJSONL   = "pairs.jsonl"
	PapersJSONL  = "papers.jsonl"
	ReadmeFile   = "README.md"
)

// ManifestKind is the kind a pairs directory's manifest names.
const ManifestKind = "pairs"

// Row is one row of pairs.parquet: a pair in one ordering, as a judge is
// asked it. Each pair has two rows, A and B swapped, so that a judge's
// position bias cancels; Winner says which idea had the more uptake.
type Row struct {
	PairID   string  `json:"pair_id" parquet:"pair_id"`
	Ordering int     `json:"ordering" parquet:"ordering"` // 1: A is the pair's first arXiv ID; 2: swapped
	IdeaA    Summary `json:"idea_a" parquet:"idea_a"`
	IdeaB    Summary `json:"idea_b" parquet:"idea_b"`
	Winner   string  `json:"winner" parquet:"winner"` // "A" or "B"
	ArxivA   string  `json:"arxiv_id_a" parquet:"arxiv_id_a"`
	ArxivB   string  `json:"arxiv_id_b" parquet:"arxiv_id_b"`
	Year     int     `json:"year" parquet:"year"`
	// The counts behind the label, and when they were read.
	CitationsA   int    `json:"citations_a" parquet:"citations_a"`
	CitationsB   int    `json:"citations_b" parquet:"citations_b"`
	InfluentialA int    `json:"influential_citations_a" parquet:"influential_citations_a"`
	InfluentialB int    `json:"influential_citations_b" parquet:"influential_citations_b"`
	CountsReadA  string `json:"counts_read_at_a" parquet:"counts_read_at_a"`
	CountsReadB  string `json:"counts_read_at_b" parquet:"counts_read_at_b"`
	// RewriteModel is the LLM that wrote the summaries, or "heuristic".
	RewriteModel         string `json:"rewrite_model" parquet:"rewrite_model"`
	RewritePromptVersion string `json:"rewrite_prompt_version" parquet:"rewrite_prompt_version"`
}

// Rows returns both orderings of every pair, in pair order.
func Rows(pairs []Pair) []Row {
	out := make([]Row, 0, 2*len(pairs))
	for _, p := range pairs {
		a, b, winner := p.Winner, p.Loser, "A"
		if a.ArxivID > b.ArxivID {
			a, b, winner = b, a, "B"
		}
		for ord := 1; ord <= 2; ord++ {
			out = append(out, Row{
				PairID: p.ID, Ordering: ord, IdeaA: a.Rewrite.Summary, IdeaB: b.Rewrite.Summary, Winner: winner,
				ArxivA: a.ArxivID, ArxivB: b.ArxivID, Year: p.Claim.Year,
				CitationsA: a.Citations, CitationsB: b.Citations, InfluentialA: a.Influential, InfluentialB: b.Influential,
				CountsReadA: a.CountsReadAt, CountsReadB: b.CountsReadAt,
				RewriteModel: a.Rewrite.Model, RewritePromptVersion: a.Rewrite.PromptVersion,
			})
			a, b = b, a
			winner = map[string]string{"A": "B", "B": "A"}[winner]
		}
	}
	return out
}

// WriteOptions configure Write.
type WriteOptions struct {
	Version     string             // curate's, for the manifest
	Compression parquetcodec.Codec // "": parquetcodec.Default
}

// Write publishes r in directory out through publish.Dir (a lock, a
// manifest of every file, an atomic swap):
//
//	out/pairs.parquet   both orderings of every pair (Row), the winner known
//	out/pairs.jsonl     every Pair: both papers, their counts and rewrites, the claim
//	out/papers.jsonl    every target considered, with its status
//	out/README.md       the rules, the counts, how to judge the pairs
func Write(ctx context.Context, out string, r *Result, o WriteOptions) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{PairsParquet, func(w io.Writer) error {
			pw := parquet.NewGenericWriter[Row](w, parquetcodec.CreatedBy(o.Version), o.Compression.WriterOption())
			if rows := Rows(r.Pairs); len(rows) > 0 {
				if _, err := pw.Write(rows); err != nil {
					return err
				}
			}
			return pw.Close()
		}},
		{PairsJSONL, func(w io.Writer) error { return atomicdir.EncodeJSONL(w, r.Pairs) }},
		{PapersJSONL, func(w io.Writer) error { return atomicdir.EncodeJSONL(w, r.Considered) }},
		{ReadmeFile, func(w io.Writer) error { _, err := io.WriteString(w, readme(r)); return err }},
	}
	_, err := publish.Dir(ctx, out, publish.Options{
		Kind: ManifestKind, Version: o.Version, Splits: []string{"train"},
		Describe: fmt.Sprintf("a pairs directory (no %s of kind %s)", publish.ManifestFile, ManifestKind),
	}, func(tmp string) error {
		for _, f := range files {
			if err := atomicdir.WriteFileFunc(filepath.Join(tmp, f.name), f.write); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write pairs %s: %w", out, err)
	}
	return nil
}

// ReadParquet reads the rows of a pairs.parquet file.
func ReadParquet(path string) ([]Row, error) {
	rows, err := parquet.ReadFile[Row](path)
	if err != nil {
		return nil, fmt.Errorf("read pairs %s: %w", path, err)
	}
	return rows, nil
}

func readme(r *Result) string {
	o := r.Options
	var b strings.Builder
	b.WriteString("# Impact-judge validation pairs\n\n")
	fmt.Fprintf(&b, "Pairs of training targets (arXiv v1 before %s) published in %d–%d, in the same calendar year and at most %d months apart, whose Semantic Scholar citation counts differ by a ratio of at least %g and by at least %d citations, with both influential-citation counts above 0 and the winner's at least %d higher. ",
		o.TestFrom.Format("2006-01-02"), o.FromYear, o.ToYear, o.MaxMonths, o.MinRatio, o.MinGap, o.MinInfluentialGap)
	b.WriteString("The winner is the paper with more citations. Each paper is in at most one pair (the pairs closest in time are taken first).\n\n")
	fmt.Fprintf(&b, "**%d pairs (%d papers)**, from %d candidate pairs.\n\n", len(r.Pairs), 2*len(r.Pairs), r.Candidates)
	switch {
	case r.Rewriter == "":
	case llm.IsHeuristic(r.Rewriter):
		fmt.Fprintf(&b, "**The summaries were written by the heuristic backend (`%s`), not a model**: each is the paper's gold card with every sentence that holds a number, a result or a title term removed. Use `curate pairs --llm endpoint` for rewrites a judge should see.\n\n", r.RewriterVersion)
	default:
		fmt.Fprintf(&b, "The summaries were written by `%s` (prompt `%s`) from each paper's gold card and abstract.\n\n", r.Rewriter, r.RewriterVersion)
	}
	b.WriteString("Every summary passed the check that it reveals no results or metrics (no digit at all, no result language) and repeats no title term (the name before a colon, coined or capitalized words such as \"LoRA\", any four consecutive title words); a paper whose summary failed is left out (`papers.jsonl`, status `rewrite_rejected`).\n\n")
	counts := map[string]int{}
	for _, c := range r.Considered {
		counts[c.Status]++
	}
	b.WriteString("| targets considered | |\n|---|---:|\n")
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "| `%s` | %d |\n", s, counts[s])
	}
	if counts[StatusNoInfluential] > 0 {
		b.WriteString("\nTargets whose stored Semantic Scholar record lacks `influentialCitationCount` cannot be paired: refresh their citegraph records once it is requested.\n")
	}
	b.WriteString("\n## Files\n\n")
	b.WriteString("- `pairs.parquet`: two rows per pair, one per ordering (`ordering` 1 and 2, A and B swapped): `idea_a`, `idea_b` (problem_gap, core_claim, method), `winner` (`A` or `B`), the arXiv IDs, the citation and influential-citation counts and when they were read, the rewrite's model and prompt.\n")
	b.WriteString("- `pairs.jsonl`: every pair with both papers (title, v1 date, counts, summary) and the claim (year, days apart, ratio, gaps).\n")
	b.WriteString("- `papers.jsonl`: every target of the store with why it was or was not paired.\n\n")
	b.WriteString("## Judging\n\nAsk the judge which idea is likely to have the higher long-term impact, once per row; a pair counts as agreement when the judge picks the winner. The paper reports the strict win rate of one prompt per pair; asking both orderings and counting a split verdict as a tie measures the judge's position bias too.\n\n")
	b.WriteString("```python\nimport pandas as pd\nrows = pd.read_parquet(\"pairs.parquet\")\nrows[\"correct\"] = [judge(a, b) == w for a, b, w in zip(rows.idea_a, rows.idea_b, rows.winner)]  # judge returns \"A\" or \"B\"\nprint(rows.groupby(\"pair_id\").correct.mean().value_counts())\n```\n")
	return b.String()
}
