// Package batch holds end-to-end tests of curate's LLM batch mode and its
// flags against the simulated services: a world through the
// OpenAI-compatible service in sync mode and OpenAI's Batch API (batch
// Parquet equal to sync; Anthropic's is package providers), OpenAI's
// strict schemas, the --llm-mode flags, the budget applied before a batch
// goes up and the batch queue limit.
package batch
