// Package holdout chooses the validation split that training data holds
// out of the dataset's train split: one rule for every output that has
// one (curate sft's rows, curate export's files), so a checkpoint chosen
// on validation never saw those instances in training, whatever the
// format, and the contamination-free test split stays for the final
// evaluation.
//
// The validation instances are the n whose IDs hash lowest (SHA-256 of a
// fixed prefix and the ID), at most half of them: the choice depends on
// the IDs alone, not on order, teacher, K or format, and changes little
// when instances come and go.
package holdout

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// DefaultSize is how many instances validation holds by default.
const DefaultSize = 100

// Size is how many of n train instances validation holds when size are
// asked for: at most half (rounded down), none for size ≤ 0.
func Size(size, n int) int { return min(max(size, 0), n/2) }

// Validation returns the IDs, among ids (the train split's instance IDs),
// that validation holds when size are asked for, as a set.
func Validation(ids []string, size int) map[string]bool {
	order := slices.Clone(ids)
	slices.SortFunc(order, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b)) })
	order = slices.Compact(order)
	out := map[string]bool{}
	for _, id := range order[:Size(size, len(order))] {
		out[id] = true
	}
	return out
}

// rank places an instance in the draw.
func rank(id string) uint64 {
	sum := sha256.Sum256([]byte("groundwork-sft-validation\x00" + id))
	return binary.BigEndian.Uint64(sum[:8])
}

// SplitValidation names the validation split.
const SplitValidation = "validation"
