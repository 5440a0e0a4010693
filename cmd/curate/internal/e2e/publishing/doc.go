// Package publishing holds end-to-end tests of the guarded publish path:
// a failed run never publishes, concurrent writers and the output lock,
// exports keeping splits apart, nothing to publish, a user's files in the
// output directory, and status that never writes.
package publishing
