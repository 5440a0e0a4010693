package holdout

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestValidation: the validation IDs depend on the IDs alone (not their
// order or duplicates), hold at most half of them, grow by adding to the
// smaller draw, and change little when IDs come and go.
func TestValidation(t *testing.T) {
	var ids []string
	for i := range 40 {
		ids = append(ids, fmt.Sprintf("2501.%05d", i))
	}
	for _, tt := range []struct{ size, n, want int }{{100, 40, 20}, {5, 40, 5}, {0, 40, 0}, {-1, 40, 0}, {3, 1, 0}, {1, 2, 1}, {1, 0, 0}} {
		if got := len(Validation(ids[:tt.n], tt.size)); got != tt.want || Size(tt.size, tt.n) != tt.want {
			t.Errorf("Validation(%d IDs, %d) holds %d (Size %d), want %d", tt.n, tt.size, got, Size(tt.size, tt.n), tt.want)
		}
	}
	five := Validation(ids, 5)
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	if got := Validation(append(rev, ids[:7]...), 5); !maps.Equal(got, five) {
		t.Errorf("order or duplicates changed the draw: %v, want %v", got, five)
	}
	for id := range five {
		if !Validation(ids, 6)[id] {
			t.Errorf("%s left validation when it grew", id)
		}
	}
	// Dropping an ID that is not drawn leaves the draw as it was.
	var rest []string
	for _, id := range ids {
		if !five[id] {
			rest = append(rest, id)
		}
	}
	if got := Validation(append(slices.Clone(rest[1:]), slices.Collect(maps.Keys(five))...), 5); !maps.Equal(got, five) {
		t.Errorf("dropping %s changed the draw: %v, want %v", rest[0], got, five)
	}
}
