// Package store keeps the on-disk state of a curate run, so that a run can be
// killed at any point and resumed, and so that nightly runs only do new work.
//
// A store is a directory (curate's --store flag) holding two things:
//
//   - blobs/ab/<sha256>.zst: content-addressed blobs (raw HTML pages, JSON
//     records, Semantic Scholar pages, LLM requests and responses), zstd
//     compressed, named by the SHA-256 of their uncompressed bytes. A blob is
//     written to a temporary file, synced and renamed into place, so it is
//     either complete or absent; a blob that fails its hash on read is
//     reported as [ErrCorrupt] and treated as absent by [Store.HasBlob].
//   - ledger.db: an SQLite database (WAL mode) with the current record of
//     each kind for each item (pointing at a blob), the status of each item in
//     each stage, and small run-level values.
//
// A record's blob is always written before its row, so after a crash a row
// never points at a blob that was not fully written. Item ids are opaque keys
// and never become file names.
//
// One process should write to a store at a time ([Store.Lock]); others may
// open the same directory and read while it writes.
package store
