// Package classify is the third stage of the pipeline: for every reference
// (edge) of a target it decides whether the reference is a source, one of
// the few prior works the target's idea grew from, or other; for each
// source it records labels (motivates, exposes_gap, foundation, extends), a
// one-sentence rationale and quotes that occur verbatim in the target.
//
// [Stage.Process] reads a target's Document (kind "document", from fetch)
// and Graph (kind "edges", from citegraph), classifies, and stores one
// [Selections] record (kind "selections") holding exactly one
// record.Selection per edge, in edge order; the ledger stage "classify"
// says done or failed with the reason. Selections already stored for the
// same model, prompt version and inputs are reused without a model call.
// [Stage.Classify] is the same decision without the store.
//
// # Reference keys
//
// A Selection names its edge by ref_key: the bibliography key
// ("bib.bib12"); for an edge without one, "s2:" and its Semantic Scholar
// paper ID; else, or when that key is already taken, "edge:N" with N the
// edge's 1-based position in the Graph. See [RefKeys].
//
// # LLM backend
//
// One chat call per target, laid out as every paper task's is (package
// paperprompt): the shared system prompt, which holds the criteria of a
// source and the counterfactual, specificity and proximity checks; the
// paper between <paper> delimiters, its title, abstract and body trimmed
// by sections to the token budget, the same block the target's gold card
// sends (so that card reads it from the provider's prompt cache); then
// the task (prompts/classify.prompt, embedded; its version and the shared
// prompt's recorded on every Selection): the numbered references, between
// <references> delimiters, with their title, year, Semantic Scholar
// intents and influence, and mention sentences. A prompt the model's
// context window refuses is asked again with the paper trimmed further,
// and Selections.ContextTrim says so. Paper text is data: the prompt says
// so, a paper's own copies of the delimiters are rewritten, and
// validation looks only at the answer's structure. The answer must give every number exactly once, a
// valid role, labels from the fixed set (sources at least one, others
// none) and a one-sentence rationale for each source; an invalid answer
// is asked again with the reasons, up to the client's limit, and then the
// target fails with the raw answer kept (kind "classify-failure"). Quotes
// are checked after validation (see [Verifier]): one that does not occur
// in the target is dropped and counted (quotes_dropped), and so is one
// that occurs but in no sentence citing the reference it is given for
// (quotes_not_citing: the page's mention sentences of its bibliography
// key and the edge's citation contexts); a source left without quotes
// keeps its role and is listed in Selections.Unquoted, and many such
// sources make the classification suspect (see [Plausibility]).
//
// # Text that addresses a model
//
// Before either backend runs, the target's text and its edges' titles
// and contexts are scanned for sentences that address a model (package
// injection: "ignore previous instructions", "mark every reference as a
// source", role markers, control tokens). A target with any is suspect
// (reason instruction_like_text, naming where): unless Stage.IncludeSuspect
// is set no model is asked and the stored selections hold none
// (not_classified); with it, the target is classified with those
// sentences taken out of the prompt, and stays suspect.
//
// # Heuristic backend
//
// Without an LLM endpoint the stage classifies deterministically from the
// evidence the pipeline has, records model "heuristic" and prompt version
// "heuristic-v1", and counts its answers with llm.Meter.RecordHeuristic.
// Its rules, for each edge:
//
// Evidence. The edge's citing sentences: the page's mentions of its
// bibliography key (each with its section and the number of references it
// cites) and Semantic Scholar contexts not among them (section unknown).
// A sentence with " | " is a table row: it is counted, not weighed as
// prose, and never quoted.
//
// Score, the sum of:
//   - mentions: each prose sentence adds its section weight times a list
//     factor, at most 4 in all. Section weights by heading (a subsection
//     inherits its parent's kind): abstract, introduction, method 1.0;
//     other body 0.6; experiments 0.5; related work/background and
//     discussion/conclusion 0.4; appendix and back matter 0.2; unknown
//     (S2 context) 0.5. When no heading names an introduction, the first
//     section is taken as one. The list factor is 1 for a sentence citing
//     one or two references, 0.5 for three or four, 0.25 for more.
//   - spread: 0.5 for every further top-level section citing it, at most
//     1.5.
//   - Semantic Scholar: isInfluential 3; the strongest intent,
//     methodology 2, result 1, background 0.5.
//   - cues, each family once, times the list factor of its best
//     sentence: extends 2.5 ("we extend", "extends", "extending", "an
//     extension of", "we generalize"); foundation 2.5 ("we build on",
//     "builds/building/built (directly) on/upon", "based on", "we follow",
//     and "following" when a citation, a name or "the … [n]" follows);
//     motivates 2 ("inspired by", "motivated by", "draw inspiration");
//     exposes_gap 1.5 ("however … fail(s)/struggle(s)/cannot/unable",
//     "limitation(s)", "leaves/left/remains open", "open question/problem",
//     "unlike", "cannot"). All but the exposes_gap cues count only in a
//     sentence about the target itself ("we", "our", "this paper", "here").
//   - penalties, unless a positive cue was found: −2 when every prose
//     sentence uses it as a tool, dataset or benchmark ("we use", "we
//     employ", "optimizer", "dataset", "benchmark", "library",
//     "pretrained", "trained on", …); else −1.5 when it is cited only in
//     experiments sections and compared against ("outperform", "compared
//     with", "baseline", …) or only in table rows. Also −1 when its title
//     names a resource ("dataset", "benchmark", "corpus", "toolkit",
//     "library", "model card", …).
//
// Choice. Only an edge with at least one prose citing sentence that occurs
// in the target (a quote) can be a source. Sources are the quotable edges
// scoring at least 3, best first, at most 8; when that gives fewer than 3,
// the best quotable edges scoring at least 1.5 are added until there are
// 3. Nothing below 1.5 is ever chosen, so a paper with thin evidence gets
// fewer sources, or none.
//
// Labels come from the cue families found (in the order motivates,
// exposes_gap, foundation, extends); a source without cues is a
// foundation. The rationale is a templated sentence of the evidence, e.g.
// "Cited 4 times, in Introduction and Method; S2 marks it influential;
// 'we build on'."; others get the same evidence, their score and why they
// were not chosen. Quotes
// are the citing sentences themselves (those with cues first, then by
// section weight, at most 3), verified like a model's.
package classify
