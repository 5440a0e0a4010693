// Package sft regenerates the supervised fine-tuning data of recipe.md
// "SFT hindsight traces" from a published dataset, without fetching,
// classifying or summarizing anything again: a new teacher, a new K or a
// new prompt is one run over the instances of a published dataset (read
// by the caller: app.SFT).
//
// For each instance (train split by default, ordered by ID):
//
//  1. Ideas: the teacher gets the instance's model input verbatim (its
//     stored prompt, or the same template rendered for another K) and
//     proposes K idea cards, most promising first. Teachers see an Input,
//     which has no gold card, so none can leak into the data. The answer
//     must pass the gate's answer check (package gate); a failing answer
//     is sent back once with the reason, then rejected with it.
//  2. Openings: the run draws one distinct opening sentence per instance,
//     from the teacher in batches that list the openings already used
//     (LLMTeacher) or from a fixed pool of 13,824 (Heuristic); instance i
//     in ID order gets opening i, so a resumed run asks for the same ones.
//  3. Trace: the teacher sees the sources and its own cards and writes a
//     first-person exploration that begins with the opening and arrives
//     at exactly those cards. A trace that is empty, short, carries a
//     block tag or does not begin with its opening is asked for once more
//     with the reason, then rejected.
//  4. The completion — `<think>` trace `</think>` then `<answer>` the
//     cards as a JSON array `</answer>`, or an empty think block for the
//     no-think variant — passes gate.Check or is rejected.
//  5. Rows whose prompt and completion count more than MaxTokens
//     (15,872) are dropped: counted with a Hugging Face tokenizer.json
//     (package tokenizer) or with Estimate, and TemplateOverhead for the
//     chat template.
//  6. The validation split holds out the ValSize (100) rows whose
//     instance IDs hash lowest, at most half the rows.
//
// Every teacher call goes through the llm package: its cache in the
// store makes a re-run with nothing changed free, and a run stopped by
// its Budget, an interrupt or a crash resumes where it stopped. Answers
// rejected after their retry are remembered in the store
// (record.SFTRejects), so they are not paid for again either.
//
// Write publishes the rows atomically as verl SFT Parquet, chat-messages
// Parquet for TRL and JSONL, with rejects.jsonl, sft.json (the Report)
// and a dataset card naming the teacher, K, the prompt versions, the
// gate's pass rate, the rejects by reason and the token and cost totals.
package sft
