// Package realpages holds end-to-end tests of curate run on recorded real
// arXiv and ar5iv pages (../shared/fixtures, read at test time and never
// copied into the repository; the tests skip without them): the pages
// served by the simulated services, with what Semantic Scholar, the arXiv
// API and OAI-PMH would say of them made at test time from the pages
// themselves, through the knowledge cut, the idea tuples, post-knowledge
// and the innoeval export.
package realpages
