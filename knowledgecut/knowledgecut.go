// Package knowledgecut is the knowledge cut rule: what a dataset instance
// may know is what existed when its target was written. The target's
// knowledge cutoff is its v1 date; the target is read at v1; each source
// is read at the last version dated on or before the cutoff, and a
// source first published after it (cited by a later revision of the
// target) is no source at all. A source whose text could only be had at
// a later version is kept and marked (--knowledge-cut flag, the default),
// dropped (strict), or the rule is not applied (off).
//
// These are pure functions of version histories (record.PaperVersions):
// the fetch of pinned versions, the instance fields and the dataset's
// check apply them, so the rule has one definition.
package knowledgecut

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/groundwork/curate/record"
)

// Mode is how the rule is applied (--knowledge-cut).
type Mode string

const (
	// Strict keeps only sources whose text was read at a version dated on
	// or before the cutoff.
	Strict Mode = "strict"
	// Flag keeps sources read at a later version, marked
	// revised_after_cutoff.
	Flag Mode = "flag"
	// Off applies no cut: sources are read as served now and none is
	// dropped; the versions are still recorded.
	Off Mode = "off"
	// DefaultMode is the mode when none is given.
	DefaultMode = Flag
)

// ParseMode reads a --knowledge-cut value; "" is DefaultMode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return DefaultMode, nil
	case Strict, Flag, Off:
		return m, nil
	}
	return "", fmt.Errorf("--knowledge-cut %q: want strict, flag or off", s)
}

// Cutoff returns the knowledge cutoff of a target: the date of its v1. A
// history without v1 is an error wrapping record.ErrNoV1.
func Cutoff(target record.PaperVersions) (time.Time, error) {
	if err := target.Check(); err != nil {
		return time.Time{}, fmt.Errorf("knowledge cutoff: %w", err)
	}
	v1, _ := target.First()
	return v1.Date, nil
}

// Pin is where a paper stood at a cutoff: the version to read (Version,
// Date), the version served now (Latest, LatestDate), and whether a
// version dated after the cutoff exists (Later) or the paper was first
// published after it (FirstAfter). Its shape is stored (record.Pin).
type Pin = record.Pin

// ErrUnknownGap is what PinAt wraps when the cutoff falls among versions
// the history does not list (a history known in part, as an arXiv API
// entry gives it): the pin could be one of them, and is never guessed.
var ErrUnknownGap = errors.New("the cutoff falls among versions whose dates are not known")

// PinAt returns where the paper with history v stood at cutoff. A
// history without v1 is an error wrapping record.ErrNoV1. A history
// known in part (record.PaperVersions.Partial) pins as a complete one
// does wherever the versions it lacks cannot change the pin: versions
// are numbered in the order they are submitted, so a missing version is
// dated strictly between the versions listed around it, and only a
// cutoff strictly between those two dates is in doubt; PinAt refuses it
// with an error wrapping ErrUnknownGap. The history must be as of the
// cutoff or later (a version submitted since it was read is not in it):
// that is the caller's to hold (see package versions).
func PinAt(v record.PaperVersions, cutoff time.Time) (Pin, error) {
	if cutoff.IsZero() {
		return Pin{}, fmt.Errorf("pin %s: no knowledge cutoff", v.ID)
	}
	if err := v.Check(); err != nil {
		return Pin{}, fmt.Errorf("pin: %w", err)
	}
	latest, _ := v.Latest()
	p := Pin{Latest: latest.Version, LatestDate: latest.Date}
	v1, _ := v.First()
	if v1.Date.After(cutoff) {
		p.FirstAfter, p.Later = true, true
		return p, nil
	}
	for _, x := range v.Versions {
		if x.Date.After(cutoff) {
			p.Later = true
			continue
		}
		// The highest version dated on or before the cutoff, whatever the
		// order of the dates.
		p.Version, p.Date = x.Version, x.Date
	}
	// Every version listed after the pinned one is dated after the
	// cutoff; one missing right after it is dated between, so it may be
	// on or before the cutoff unless the pinned one is dated at the
	// cutoff exactly.
	i, _ := slices.BinarySearchFunc(v.Versions, p.Version, func(x record.PaperVersion, n int) int { return x.Version - n })
	if i+1 < len(v.Versions) && v.Versions[i+1].Version > p.Version+1 && p.Date.Before(cutoff) {
		next := v.Versions[i+1]
		return Pin{}, fmt.Errorf("pin %s at %s: %w (v%d dated %s, %s not known, v%d dated %s)", v.ID, cutoff.UTC().Format(time.RFC3339), ErrUnknownGap,
			p.Version, p.Date.UTC().Format(time.RFC3339), versionRange(p.Version+1, next.Version-1), next.Version, next.Date.UTC().Format(time.RFC3339))
	}
	return p, nil
}

// versionRange names versions a to b: "v3", "v2 to v4".
func versionRange(a, b int) string {
	if a == b {
		return fmt.Sprintf("v%d", a)
	}
	return fmt.Sprintf("v%d to v%d", a, b)
}

// UnknownLag is how long after a cutoff arXiv's answer that it has no
// record of a paper stands for that cutoff: its API and OAI-PMH list a
// paper from its announcement, a working day or so after submission, a
// few days over a weekend or a holiday; a week covers them.
const UnknownLag = 7 * 24 * time.Hour

// UnknownStands reports whether p, a paper arXiv said it had no record
// of (p.UnknownAsOf), is known to have had no version at cutoff: the
// answer was given UnknownLag or more after it. Such a paper is not
// asked for again for that cutoff.
func UnknownStands(p record.PaperPin, cutoff time.Time) bool {
	return !p.UnknownAsOf.IsZero() && !cutoff.IsZero() && !p.UnknownAsOf.Before(cutoff.Add(UnknownLag))
}

// PinTarget returns the version a target is read at: v1, at its own
// cutoff.
func PinTarget(target record.PaperVersions) (Pin, error) {
	cutoff, err := Cutoff(target)
	if err != nil {
		return Pin{}, err
	}
	return PinAt(target, cutoff)
}

// Read is what an instance records of the text it used: the version read,
// its date, and whether that version is dated after the cutoff (a source
// read as served now because the pinned version's text was not to be
// had; a target read later than v1).
type Read struct {
	Version            int       `json:"version"`
	VersionDate        time.Time `json:"version_date"`
	RevisedAfterCutoff bool      `json:"revised_after_cutoff,omitempty"`
}

// ReadAt returns what an instance records of a paper with history v whose
// text was read at version used (the pinned one, or the latest when the
// pinned one's text could not be had), against cutoff.
func ReadAt(v record.PaperVersions, used int, cutoff time.Time) (Read, error) {
	x, ok := v.Version(used)
	if !ok {
		return Read{}, fmt.Errorf("paper %s read at v%d: its history has no such version", v.ID, used)
	}
	return Read{Version: used, VersionDate: x.Date, RevisedAfterCutoff: x.Date.After(cutoff)}, nil
}

// Why a source is dropped (Decision.Dropped).
const (
	// DroppedFirstAfter: the source was first published after the cutoff
	// (a later revision of the target cited it); it is never a source.
	DroppedFirstAfter = "first_published_after_cutoff"
	// DroppedAfterCutoff: under strict, the source's text was read at a
	// version dated after the cutoff.
	DroppedAfterCutoff = "read_after_cutoff"
	// DroppedUnknown: under strict, the date of the version read is not
	// known (the source's history, or its target's, could not be had), so
	// it is not shown to be of the time.
	DroppedUnknown = "version_unknown"
)

// Decision is the rule's verdict on one source.
type Decision struct {
	Keep bool
	// Dropped says why it is not kept ("" when it is).
	Dropped string
	// Read is what the instance records of it (zero for a source first
	// published after the cutoff, which has no text of the time).
	Read Read
}

// Decide applies mode to a source pinned at pin whose text was read as
// read (see ReadAt; zero when nothing was read, as for a source first
// published after the cutoff).
func Decide(mode Mode, pin Pin, read Read) Decision {
	switch {
	case mode == Off:
		return Decision{Keep: true, Read: read}
	case pin.FirstAfter:
		return Decision{Dropped: DroppedFirstAfter}
	case mode == Strict && read.VersionDate.IsZero():
		return Decision{Dropped: DroppedUnknown, Read: read}
	case mode == Strict && read.RevisedAfterCutoff:
		return Decision{Dropped: DroppedAfterCutoff, Read: read}
	}
	return Decision{Keep: true, Read: read}
}

// Counts are what a dataset card says of the cut.
type Counts struct {
	// Pinned counts the kept sources read at a version dated on or
	// before the cutoff, of which Older at a version before the latest
	// (the cut changed what was read).
	Pinned int `json:"pinned"`
	Older  int `json:"pinned_older"`
	// RevisedAfter counts the kept sources read at a version dated after
	// the cutoff (marked revised_after_cutoff).
	RevisedAfter int `json:"revised_after_cutoff"`
	// Undated counts the kept sources whose version's date is not known
	// (their history could not be had; under flag and off).
	Undated int `json:"undated"`
	// DroppedFirstAfter, DroppedAfterCutoff and DroppedUnknown count the
	// dropped sources by why.
	DroppedFirstAfter  int `json:"dropped_first_published_after"`
	DroppedAfterCutoff int `json:"dropped_read_after_cutoff"`
	DroppedUnknown     int `json:"dropped_version_unknown"`
}

// Add counts one source's decision.
func (c *Counts) Add(pin Pin, d Decision) {
	switch {
	case d.Dropped == DroppedFirstAfter:
		c.DroppedFirstAfter++
	case d.Dropped == DroppedAfterCutoff:
		c.DroppedAfterCutoff++
	case d.Dropped == DroppedUnknown:
		c.DroppedUnknown++
	case !d.Keep:
	case d.Read.VersionDate.IsZero():
		c.Undated++
	case d.Read.RevisedAfterCutoff:
		c.RevisedAfter++
	default:
		c.Pinned++
		if d.Read.Version < pin.Latest {
			c.Older++
		}
	}
}

// Dropped is the sources dropped, for any reason.
func (c Counts) Dropped() int { return c.DroppedFirstAfter + c.DroppedAfterCutoff + c.DroppedUnknown }

// ErrAfterCutoff is what Check wraps for a kept source dated after its
// instance's cutoff under strict, or not dated at all.
var ErrAfterCutoff = errors.New("a kept source's version is dated after the knowledge cutoff")

// Check is the dataset's check of one kept source: under strict its
// version date must not be after the instance's cutoff. Under flag and
// off anything kept is allowed (flag marks it).
func Check(mode Mode, cutoff, versionDate time.Time) error {
	if mode != Strict {
		return nil
	}
	if versionDate.IsZero() || cutoff.IsZero() {
		// Strict keeps what is shown to be of the time; an undated one is
		// not.
		return fmt.Errorf("%w: the version date or the cutoff is missing", ErrAfterCutoff)
	}
	if versionDate.After(cutoff) {
		return fmt.Errorf("%w (version dated %s, cutoff %s)", ErrAfterCutoff,
			versionDate.UTC().Format(time.RFC3339), cutoff.UTC().Format(time.RFC3339))
	}
	return nil
}

// Pinned returns the version a source pinned at pin is read at: its last
// version dated on or before the cutoff; 0 when the cut is off, the
// source is not pinned (its history unknown), or it is no source
// (FirstAfter). When the text the store keeps under the paper's key is
// of another version, the pinned version's is kept apart, under
// record.VersionItem.
func Pinned(mode Mode, pin *Pin) int {
	if mode == Off || pin == nil || pin.FirstAfter || pin.Version < 1 {
		return 0
	}
	return pin.Version
}

// ReadItems returns the store items a source's text is read from, in
// the order tried: the pinned version's own item (see Pinned), then the
// version served now's own item (a fallback, marked revised_after_cutoff
// when dated after the cutoff), then the paper's versionless key (the
// version served now as ar5iv keeps it, of no stated version). The key
// comes last: a target read at v1 replaces what it holds. A source first
// published after the cutoff has none unless the cut is off.
func ReadItems(mode Mode, key string, pin *Pin) []string {
	if Skip(mode, pin) {
		return nil
	}
	if v := Pinned(mode, pin); v > 0 {
		items := []string{record.VersionItem(key, v)}
		if pin.Latest > v {
			items = append(items, record.VersionItem(key, pin.Latest))
		}
		return append(items, key)
	}
	return []string{key}
}

// Skip reports whether a source pinned at pin is no source under mode:
// first published after the cutoff, so neither fetched nor carded.
func Skip(mode Mode, pin *Pin) bool { return mode != Off && pin != nil && pin.FirstAfter }
