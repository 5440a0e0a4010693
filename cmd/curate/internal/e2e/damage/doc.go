// Package damage holds end-to-end tests of curate on damaged ground: a
// disk that fills up (wherever it strikes), a published dataset with a
// deleted or garbled file, stored records lost or damaged.
package damage
