// Package crawl holds end-to-end tests of how curate asks the services:
// robots.txt and crawl delays, page archives, the crawl flags, a machine
// that is offline, the arXiv API down past its retries, and curate
// estimate against what a run then asks.
package crawl
