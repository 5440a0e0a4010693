// Package dataset is the last stage of the pipeline: it turns the stored
// targets, selections and idea cards into the published dataset, one row
// (record.Instance) per target, in Parquet train and test splits that
// pandas, pyarrow, DuckDB and Hugging Face datasets open directly.
//
// The steps, each usable on its own:
//
//   - LoadTargets reads each target's Graph, Selections, summarize Result
//     and Document from the store into TargetInputs.
//   - Consolidate builds the instances: the selected sources that have a
//     card, numbered in a stable order (first mention in the target, then
//     bibliography order); the gold card; the target's metadata and domain
//     (Domain); the model input rendered from the one versioned template
//     (modelinput.Template) asking for K ideas; the
//     provenance. Targets with fewer than MinSources sources, no gold card
//     or no v1 date are dropped with their reason, as are targets a split's
//     category filter rejects. Test is a v1 date on or after
//     Options.TestFrom.
//   - Decontaminate finds what would leak a test target into training (see
//     Rules) and resolves it by Policy; Build does both steps.
//   - Write publishes a Result atomically (see Write for the layout and
//     the swap); Check re-verifies a published directory from its files
//     alone; ReadDataset reads one back.
//   - Export writes trainer formats (verl RL and SFT, chat messages, TRL
//     prompt-completion and prompt-only; see ExportFormats) and
//     Report writes report.html and report.json with the numbers users
//     check first.
//
// Parquet is written with parquet-go: every slice is a standard 3-level
// LIST, nested records are STRUCTs, pages are Snappy compressed (the
// codec every reader has; WriteOptions.Compression picks another), row groups
// are cut by row count and buffered size so memory stays bounded, and the
// schema is pinned by testdata/schema.golden.
package dataset
