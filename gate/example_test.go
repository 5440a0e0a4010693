package gate_test

import (
	"fmt"

	"github.com/groundwork/curate/gate"
)

// A reward function checks a rollout before any judge is called.
func ExampleCheck() {
	rollout := `<think>
Document 1 measures answers only; Document 2 has spans but no audit.
</think>
<answer>
[{"problem_gap": "[Evidence Gap] Nobody checks that the cited span supports the answer.",
  "core_claim": "We claim that span audits expose most reader errors.",
  "method": "[Evidence Gap] Build an audit benchmark.",
  "inspiration": "Document 1 and Document 2 leave the audit open."}]
</answer>`
	cards, err := gate.Check(rollout, 1)
	fmt.Println(len(cards), gate.ReasonOf(err))
	fmt.Println(err)
	// Output:
	// 0 wrong_axis
	// gate: wrong_axis: card 1: method uses [Evidence Gap], a label of the other axis; the axes never share labels: use one of [Synthesis / Unification], [Relax / Extend Scope], [Robustification], [Formal Derivation], [Empirical Mapping], [Artifact / System], [Optimization / Search], or [Other]
}
