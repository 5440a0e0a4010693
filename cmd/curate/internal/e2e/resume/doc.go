// Package resume holds end-to-end tests of the curate binary killed at
// seeded random moments and interrupted (one SIGINT drains, two abandon
// work in flight): nothing completed is asked again, the resumed run
// writes the same files byte for byte.
package resume
