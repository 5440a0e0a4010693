// Package crawl holds end-to-end tests of how curate asks the services
// for pages: robots.txt and crawl delays, page archives, the crawl flags,
// a machine that is offline, and curate estimate against what a run then
// asks.
package crawl
