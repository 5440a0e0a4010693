// Package faults holds end-to-end tests of runs under injected faults:
// server errors, reset connections, 429 bursts, invalid LLM answers, a
// withheld reference list, a paper without HTML, PDF hosts and GROBID
// failing. Every target ends accounted for, and the next run asks again
// only what did not complete.
package faults
