// Package batch holds end-to-end tests of curate's LLM providers and modes
// against the simulated services: one world through the OpenAI-compatible
// service, OpenAI's Batch API and Anthropic's Messages API in sync and
// batch mode (batch Parquet equal to sync), OpenAI's strict schemas, the
// demo through each provider, the --llm-mode flags, the budget applied
// before a batch goes up and the batch queue limit.
package batch
