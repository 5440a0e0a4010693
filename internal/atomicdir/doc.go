// Package atomicdir publishes a directory atomically and crash-safely.
//
// Replace builds the new contents in a temporary directory beside the
// target (".OUT.tmp-*"), syncs it, and then swaps it into place: on Linux
// by one renameat2(RENAME_EXCHANGE), so OUT is at every moment either the
// old or the new directory; elsewhere by two renames, between which OUT is
// briefly absent while the old directory is complete beside it. The
// directory it replaces is kept as OUT.prev (one generation) or removed.
// A failure or a crash before the swap leaves OUT untouched; the temporary
// directory a crash leaves behind is removed by the next Replace of the
// same OUT. Replace never moves aside a directory that is neither empty
// nor recognized by the caller's Owns predicate.
//
// One Replace per OUT at a time: a second would remove the first's
// temporary directory as stale. Callers serialize: internal/publish, the
// one way curate publishes, holds a lock on OUT around Replace.
package atomicdir
