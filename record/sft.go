package record

import "time"

// SFTReject is what the store keeps of a teacher answer the sft stage
// rejected (kind SFTRejects), under the request's LLM cache key, so that a
// re-run with nothing changed does not pay for it again.
type SFTReject struct {
	// Stage is the LLM stage that asked ("sft-ideas", "sft-openings",
	// "sft-trace").
	Stage string `json:"stage"`
	// Reason is why the answer was rejected, Detail the check's own words.
	Reason   string `json:"reason"`
	Detail   string `json:"detail"`
	Attempts int    `json:"attempts"`
	// Raw is the answer as the teacher gave it.
	Raw   string    `json:"raw"`
	Model string    `json:"model"`
	At    time.Time `json:"at"`
}

// SFTRejects are the sft stage's rejected teacher answers.
var SFTRejects = KindOf[SFTReject]("sft-reject")
