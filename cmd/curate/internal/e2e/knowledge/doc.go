// Package knowledge holds end-to-end tests of the knowledge cut (issue
// 25's versions and dates): curate run on a simulated world of version
// histories under each --knowledge-cut mode, from OAI-PMH and from a
// metadata snapshot, with and without GROBID, and its bad inputs.
package knowledge
