// Package atomicdir publishes a directory atomically and crash-safely.
//
// Replace builds the new contents in a temporary directory beside the
// target (".OUT.tmp-*"), syncs it, and then swaps it into place: on Linux
// by one renameat2(RENAME_EXCHANGE), so OUT is at every moment either the
// old or the new directory; elsewhere by two renames, between which OUT is
// briefly absent while the old directory is complete beside it (a stop
// there is undone by the next Replace, which puts it back first). The
// directory it replaces is kept as OUT.prev (one generation) or removed.
// A failure or a crash before the swap leaves OUT untouched; the temporary
// directory a crash leaves behind is removed by the next Replace of the
// same OUT.
//
// Replace never deletes what its caller did not write. The caller says
// what it wrote in a publication (Options.Written, from its manifest);
// whatever else OUT holds — a .git/ history, notes, a symlink — is the
// user's, and is carried into the new directory as hard links before the
// swap, so it is never absent from OUT; the old directory then loses only
// the caller's files and those links. A directory that is no publication
// of the caller's, or whose user's files lie inside the caller's own
// directories (where a reader of the publication would take them for part
// of it), is refused (ErrNotOurs) before anything is built.
//
// One Replace per OUT at a time: a second would remove the first's
// temporary directory as stale. Callers serialize: internal/publish, the
// one way curate publishes, holds a lock on OUT around Replace.
package atomicdir
