// Package sim simulates, in-process and at any scale, every service curate
// talks to, for end-to-end tests and benchmarks of the whole pipeline.
//
// A World is a deterministic synthetic literature generated from a seed: N
// target papers dated across 2024–2026 (so both dataset splits fill), a
// pool of older papers they cite, and for each target a bibliography whose
// sources are cited with a cue phrase ("builds directly on", "first raised
// by", "breaks down when", "We extend the") and whose other references are
// not. Nothing is stored: pages, Semantic Scholar records and Atom entries
// are generated when asked for, so a world of 5,000 targets costs almost
// no memory. Every title carries a coined name no other paper has; all of
// it is invented.
//
// Start serves a World as nine services, each on its own port of
// 127.0.0.1, speaking the real protocols:
//
//	arxiv      GET /html/ID: a LaTeXML page, or 404 "No HTML for"
//	ar5iv      GET /html/ID: the page of papers only ar5iv has, else 307
//	           to https://arxiv.org/abs/ID
//	s2         GET /graph/v1/paper/ID, GET .../ID/references (offset
//	           paging; "data": null for a withheld list), POST
//	           /graph/v1/paper/batch
//	arxiv-api  GET /api/query?id_list=: Atom entries with v1 dates and
//	           categories
//	llm        OpenAI: POST /v1/chat/completions, a model that reads
//	           curate's classify and summarize prompts and answers validly
//	           (see Answer), reporting prefix-cache hits as cached_tokens;
//	           POST /v1/files (multipart, purpose=batch), GET
//	           /v1/files/ID/content, /v1/batches (create, get, list,
//	           cancel) with OpenAI's batch lifecycle
//	anthropic  Anthropic: POST /v1/messages (tool use, cache_control
//	           breakpoints, cache read/creation usage, rate-limit headers)
//	           and /v1/messages/batches with results out of order
//	pdfhost    the open-access PDFs of a world with WorldConfig.OpenAccess
//	           (and its hostile URLs: redirects inside, HTML, oversize)
//	grobid     GROBID's REST API (see Grobid), converting the PDF host's
//	           PDFs into TEI written from the papers' text
//	internal   a service inside the network that no download may reach
//
// Each Service enforces Limits — a token-bucket rate (a request over it
// gets 429, with Retry-After if set), a cap on requests in flight, and a
// latency — and injects Faults: server errors, reset connections, bursts
// of 429 and, for the LLMs, invalid answers, Anthropic's 529 and failed,
// expired and errored batches and batch lines. Fault decisions are drawn from
// the seed and each request's identity, so they repeat run after run.
// Every request is logged as a Call with its identity and outcome, and
// counted in Stats, so tests can assert what was asked, how often, and
// what was asked again (Repeats).
//
// The world itself holds two kinds of misbehaviour, by target index:
// WorldConfig.NoHTML (no page on arXiv or ar5iv) and WorldConfig.Withheld
// (a Semantic Scholar reference list withheld by the publisher).
package sim
