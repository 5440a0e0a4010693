// Package sim simulates, in-process and at any scale, every service curate
// talks to: one protocol-faithful fake per API, for end-to-end tests,
// benchmarks, the offline demo and the unit tests of the clients.
//
// The services that serve papers read them from a Literature (Pages,
// S2Source, Entries, OAIRecords), of which there are two:
//
//   - A World is a deterministic synthetic literature generated from a
//     seed: N target papers dated across 2024–2026 (so both dataset
//     splits fill), a pool of older papers they cite, and for each target
//     a bibliography whose sources are cited with a cue phrase ("builds
//     directly on", "first raised by", "breaks down when", "We extend
//     the") and whose other references are not. Nothing is stored: pages,
//     Semantic Scholar records and Atom entries are generated when asked
//     for, so a world of 5,000 targets costs almost no memory. Every title
//     carries a coined name no other paper has; all of it is invented.
//   - A Corpus holds a literature in memory: pages, S2 records, reference
//     lists, Atom entries and OAI-PMH records added one by one (tests),
//     loaded from files laid out as the services answer (LoadCorpus: the
//     demo corpus), or loaded from recorded responses (the shared
//     fixtures, see simtest).
//
// Start serves a Literature as these services, each on its own port of
// 127.0.0.1 (NewService makes one, for any listener), speaking the real
// protocols:
//
//	arxiv      GET /html/ID: a LaTeXML page, or 404 "No HTML for"
//	ar5iv      GET /html/ID: the page of papers ar5iv has, else 307 to
//	           https://arxiv.org/abs/ID
//	s2         GET /graph/v1/paper/ID, GET .../ID/references (offset
//	           paging, the 10,000 window, "data": null for a withheld
//	           list), POST /graph/v1/paper/batch (null for unknown ids, in
//	           order); fields checked and projected
//	arxiv-api  GET or POST /api/query: id_list lookups and cat: and
//	           submittedDate: searches, Atom entries with v1 dates and
//	           categories, paging, the API's error feeds
//	oai-pmh    GET /oai: Identify, GetRecord, ListRecords and
//	           ListIdentifiers (arXiv, arXivRaw, oai_dc; from, until, set;
//	           resumption tokens), the protocol's errors in 200s
//	llm        OpenAI: POST /v1/chat/completions, a model that answers
//	           from the request's JSON schema (SchemaModel) unless the
//	           test's answer hook answers first (Options.LLMAnswer;
//	           CurateModel plays a diligent model for curate's own
//	           prompts), reporting prefix-cache hits as cached_tokens;
//	           POST /v1/files (multipart, purpose=batch), GET
//	           /v1/files/ID/content, /v1/batches (create, get, list,
//	           cancel) with OpenAI's batch lifecycle
//	anthropic  Anthropic: POST /v1/messages (tool use, cache_control
//	           breakpoints, cache read/creation usage, rate-limit headers)
//	           and /v1/messages/batches with results out of order, the
//	           same model answering as llm does
//	pdfhost    the open-access PDFs of a World with WorldConfig.OpenAccess
//	           (and its hostile URLs: redirects inside, HTML, oversize)
//	grobid     GROBID's REST API (see Grobid), converting the PDF host's
//	           PDFs into TEI written from the papers' text
//	internal   a service inside the network that no download may reach
//
// The last three only a World serves.
//
// Three fakes a test also sets up on its own: GROBID (NewGrobid), a
// PDF-to-TEI service answering the TEI registered per PDF; a PDF host
// (NewPDFSite), the files, redirects and sign-in pages of an open-access
// host, which is also the World's PDF host; and a robots.txt
// (NewRobotsFile), which every simulated site serves in front of its
// pages. Wrap puts any of them behind a Service (limits, faults,
// scripted faults, the call log).
// The wire format of Semantic Scholar is declared once, here (S2Paper,
// S2Edge, ...), for the World, the demo corpus's generator and the tests.
// Subpackage simtest serves the services in tests and loads the shared
// fixtures; subpackage conformance holds the suite every Literature's
// services, and the recorded fixtures themselves, must pass.
//
// Service names (Arxiv, S2, ...) are defined here once and equal the
// clients' httpx service names.
//
// Each Service enforces Limits — a token-bucket rate (a request over it
// gets 429, with Retry-After if set), a cap on requests in flight, and a
// latency — and injects Faults: server errors, reset connections, bursts
// of 429 and, for the LLMs, invalid answers, Anthropic's 529 and failed,
// expired and errored batches and batch lines. Fault decisions are drawn from
// the seed and each request's identity, so they repeat run after run. A
// test can also script faults per path (Service.Script): a status with the
// service's own error body, Retry-After, a redirect, a reset connection or
// a truncated body. Every request is logged as a Call with its identity,
// path, query and outcome, and counted in Stats, so tests can assert what
// was asked, how often, and what was asked again (Repeats). A service may
// also echo the request as an endpoint or proxy that leaks it would
// (Echo): its credential headers and planted keys, in every encoding, in
// errors for a share of requests and in its real answers.
//
// The world itself holds two kinds of misbehaviour, by target index:
// WorldConfig.NoHTML (no page on arXiv or ar5iv) and WorldConfig.Withheld
// (a Semantic Scholar reference list withheld by the publisher).
package sim
