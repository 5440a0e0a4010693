// Package summarize is the summarize stage of the pipeline: it writes the
// idea card (recipe.md "The idea card", schema.md "Idea card") of every
// target — its gold card, the held-out idea — and of every source the
// classify stage selected for it, and it reports how the cards' taxonomy
// labels are distributed, so a summarizer that collapses onto one label is
// seen.
//
// # Cards
//
// Summarize writes one card of a kind: CardGold (problem_gap, core_claim,
// method, inspiration) or CardSource (the same plus results and
// takeaways), from a paper's parsed Document or from its abstract alone.
// The requests are laid out as every paper task's is (package
// paperprompt): the shared system prompt, which carries the field
// definitions and the full 7 + 7 taxonomy with its decision rules, the
// paper as one block, then the task, a versioned file embedded from
// prompts/ (gold.prompt, source.prompt). A target's gold-card request is
// the same as its classify request up to the end of the paper, so it
// reads the paper from the provider's prompt cache. The task's version
// and the shared prompt's go on every card with the model.
//
// A gold card is written from the target alone. Its inspiration names the
// prior work the way the paper cites it (authors and year, or title) and
// never uses "Document N": the numbered list of an instance does not exist
// when a card is written, and a card is shared by every instance that
// uses the paper (as a target or as a source), so it cannot depend on any
// one instance's numbering. The same holds for source cards. The dataset
// stage, which numbers the sources, may map the names to its numbers; the
// judge that compares ideas ignores inspiration anyway.
//
// # Validation
//
// Every answer is checked before it is accepted (and an answer that fails
// is sent back to the model with the reasons, as often as the llm client
// allows; what stays invalid is recorded as a Failure with the raw
// answer):
//
//   - every field of the kind is non-empty; a gold card has no results or
//     takeaways;
//   - problem_gap opens with exactly one bracketed opportunity-pattern
//     label and method with exactly one bracketed method-paradigm label
//     (case and spacing around "/" are forgiven and the label is rewritten
//     in its canonical spelling), or [Other]; a label of the other axis,
//     an unknown label, a second label anywhere in the field, or a label
//     with no text after it is rejected;
//   - core_claim is a claim: no label, not a question, not opening like a
//     gap ("There is no …", "It remains unclear …", "The lack of …", "No
//     existing …", or a prior-work subject such as "Existing methods" with
//     a shortcoming verb such as "lack" or "fail" in its first eight
//     words, after an optional "We claim that"), and not a near copy of
//     problem_gap: a Jaccard similarity of their content words (three
//     letters or more, stopwords left out) of 0.7 or more is rejected;
//   - no field refers to "Document N".
//
// The labels are parsed into the card's Opportunity and Paradigm. Validate
// applies the same rules to a stored card.
//
// # Grounding and planted instructions
//
// The prompts enclose the paper's title and text in one <paper>…</paper>
// block that the system prompt calls data, the paper's own copies of the
// delimiters rewritten; sentences of the text that address a model
// (package injection) are taken out. A gold card, written or reused, is
// then judged against its paper (see Grounded): under MinGrounding of its
// claim words in the paper's abstract and introduction, or a field that
// addresses a model, makes it suspect. The Summary says why, the ledger
// says suspect, and unless IncludeSuspect the target's sources are not
// summarized: nothing more is spent on an instance that is held back.
//
// Papers longer than the token budget (four bytes a token, DefaultBudget
// by default) are trimmed by section priority, not at a byte count: the
// abstract, the introduction, method sections, results, conclusion and
// discussion, then the rest, appendices last; sections are recognized by
// keywords in their headings (see Trim). A prompt the model's context
// window refuses is asked again with the paper trimmed further, and the
// card's result says so.
//
// # Heuristic backend
//
// With no LLM (or model llm.HeuristicModel), cards come from Heuristic: an
// extractive, deterministic builder that records model "heuristic" and
// prompt version HeuristicPromptVersion, and whose cards pass the same
// validation. Sentences of 30-600 bytes and six words or more are taken
// from the abstract and the introduction (the first section when none is
// called so):
//
//   - problem_gap: the first sentence with a gap cue ("however",
//     "remains", "lack", "challeng", "limited", "limitation", "unclear",
//     "no existing", "open question", "poorly understood", "unknown",
//     "difficult", "struggle", "fail") and no claim cue; else the first
//     sentence;
//   - method: the first sentence announcing a contribution ("we propose",
//     "we introduce", "we present", "we develop", "our approach", "our
//     method", "we design", "we derive", …), abstract before introduction;
//     else one describing the work ("in this paper", "here we", "we
//     study", …); else the first unused sentence;
//   - core_claim: the first sentence with a claim cue ("we show", "we
//     find", "we demonstrate", "our results", "we prove", "we observe",
//     …), else the abstract read from its end, that passes the claim test;
//   - inspiration: up to three citing sentences from the introduction and
//     related work, those with prior-work cues ("previous", "existing",
//     "building on", "extends", …) first;
//   - results (source cards): up to three sentences of the results
//     sections, those with result cues ("outperform", "improv", "achiev",
//     "accuracy", "%", …) first; without results sections, result
//     sentences of the conclusion and the abstract's findings;
//   - takeaways (source cards): up to two conclusion sentences, those with
//     cues ("suggest", "implication", "future", "should", …) first.
//
// The two labels come from keyword rules. Each rule maps words to one
// label; a keyword ending in "*" matches words starting with it. A rule
// scores two points per match in the title and in the gap sentence (for
// the opportunity) or the method sentence (for the paradigm), and one per
// match in the abstract. The highest score wins; a tie goes to the rule
// listed first; no match at all gives [Other], which the label report
// counts — never a silent default label.
//
//	opportunity (tie order)  keywords
//	Puzzle / Contradiction   paradox*, surpris*, contradict*, trade-off*, tension*, inconsisten*, …
//	Failure / Risk Gap       robust*, bias, safety, privacy, risk*, uncertain*, reliab*, reproducib*, attack*, fail*, …
//	Resource Bottleneck      efficien*, cost*, expensive, scalab*, scaling, compute, memory, latency, scarc*, …
//	Explanation Gap          theorem*, bound, proof*, formal*, explain*, mechanis*, why, understand*, causal*, …
//	Scope Mismatch           generaliz*, transfer*, assumption*, realistic, regime*, heterogene*, nonlinear*, …
//	Evidence Gap             benchmark*, measur*, evaluat*, dataset*, metric*, quantif*, diagnos*, audit*, estimat*, …
//	Bridge Opportunity       bridg*, unif*, connect*, reconcil*, integrat*, interdisciplin*, cross-domain
//
//	paradigm (tie order)     keywords
//	Formal Derivation        theorem*, bound, proof*, formal*, deriv*, defin*, taxonom*, equation*, formulat*, …
//	Robustification          robust*, debias*, mitigat*, defen*, safety, privacy, reliab*, calibrat*, …
//	Optimization / Search    efficien*, optimi*, search*, tuning, scalab*, fast*, select*, cost*, compress*, …
//	Relax / Extend Scope     generaliz*, extend*, transfer*, relax*, broader, assumption*, adapt*, nonlinear*, …
//	Artifact / System        framework*, system, tool, toolkit*, library, platform*, software, implement*, pipeline*, …
//	Empirical Mapping        benchmark*, measur*, evaluat*, dataset*, empiric*, analys*, compar*, experiment*, simulat*, …
//	Synthesis / Unification  bridg*, unif*, reconcil*, integrat*, connect*
//
// Specific signals come first in the tie order and the broad ones last;
// Bridge and Synthesis, the labels LLM summarizers collapse onto, come
// last of all, and "combine" is no Synthesis keyword (a method with several
// parts is not a synthesis).
//
// # The stage and the store
//
// Stage.ProcessTarget writes a target's gold card and a source card for
// each SourceRef. A source with an arXiv ID gets its page through the
// Fetch hook (the fetch stage's own store entry, so a paper already
// stored, for instance as a target, is not downloaded again) and a
// full-text card; a source without one, or whose page does not exist or
// has no body, is summarized from the Document the pdfs stage made of its
// open-access PDF when there is one with body text (text_level
// "pdf_full_text"), else from its Semantic Scholar abstract (text_level
// "abstract"); a source with neither is recorded as unsummarizable with
// the reason.
//
// Each paper is stored under its own item: the versionless arXiv ID,
// "s2:"+paperId for a paper known only to Semantic Scholar, or
// "title:"+normalized title as a last resort. Its cards are records of
// kind CardKind(card kind, model, prompt version), for example
//
//	2507.11127  card:gold:gpt-5.4-mini:summarize-gold-v2+papers-v1
//	2507.11127  card:source:gpt-5.4-mini:summarize-source-v2+papers-v1
//	s2:649def34 card:source:heuristic:heuristic-v2
//
// with meta text_level and card_kind. So there is one card per (paper,
// card kind, model, prompt version): a source shared by many targets is
// summarized once, and a paper that is a target in one instance and a
// source in another has one gold and one source card. A stored card is
// reused as long as it passes Validate and the store holds no more of the
// paper's text than it was written from (record.TextRank: a card from the
// abstract is written again once a PDF full text is stored, one from the
// PDF once the arXiv page is; should that rewrite fail, the old card
// stands until the next run); Force rewrites each card once per Stage. A card whose answers stayed invalid is recorded under
// FailureKind(…) with the reason and the raw answer and tried again on
// the next run. Beside the cards, each paper with cards has a
// KindCardIndex marker (so CardsInStore can find them), and each target a
// KindResult record with its Result: per source the key, text level, card
// or reason, and the counts of cards written, reused, failed and
// unsummarizable. The ledger entry of stage "summarize" for the target is
// done, or failed with the reasons when the gold card or a source card
// failed.
//
// # Label health
//
// Stats counts the labels of a set of cards (CardsInStore gathers all the
// stage wrote) and LabelStats.Report prints the two distributions with
// their normalized entropy, flagging a collapse: Bridge Opportunity above
// 2.5 times its 12% share in human papers, Synthesis / Unification above
// 2.5 times its 5%, or an axis with normalized entropy under 0.7.
package summarize
