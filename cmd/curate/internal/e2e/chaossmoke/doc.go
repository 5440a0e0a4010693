// Package chaossmoke holds a smoke of the chaos harness (internal/chaos;
// make chaos runs it for real): one round of each of a few kinds and
// sabotaged rounds it must catch. The harness runs this test binary as
// curate (see TestMain).
package chaossmoke
