// Package providers holds end-to-end tests of the same work through each
// simulated LLM provider: a world through Anthropic's Messages API in
// sync and batch mode (batch Parquet equal to sync; OpenAI's is package
// batch), and the demo corpus through every provider and mode.
package providers
