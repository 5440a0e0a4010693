// Package batchresume holds end-to-end tests of the curate binary
// interrupted (SIGINT) and killed (SIGKILL) while LLM batches are pending,
// and of the runs that collect them: nothing submitted twice, the Parquet
// of an uninterrupted run.
package batchresume
