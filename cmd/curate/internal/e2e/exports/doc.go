// Package exports holds end-to-end tests of what curate makes from a
// store or a published dataset: the demo end to end, trainer exports and
// the gate, SFT traces, topics and pairs (in sync and batch mode).
package exports
