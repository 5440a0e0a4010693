// Package refresh holds end-to-end tests of curate refresh (OAI-PMH
// discovery, new versions, nothing to publish) and of the licences it and
// curate licenses record.
package refresh
