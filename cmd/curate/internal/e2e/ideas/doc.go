// Package ideas holds end-to-end tests of the idea-evaluation data: the
// tuples and post-knowledge stages and curate export --format innoeval,
// on the simulated world with the model and on the demo.
package ideas
