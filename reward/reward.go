// Package reward ships the recipe's RL reward as a Python file that
// trainers load directly (verl's custom_reward_function.path, a TRL
// GRPOTrainer reward function): the schema gate, the validity bonus and
// the set-level score with pluggable impact and distance judges. See
// groundwork_reward.py's docstring for its use.
//
// The file's gate rules are generated from the Go gate (gate.Spec)
// into the block between its GATE SPEC markers, so the two gates have one
// definition: TestSpecCurrent fails when the checked-in file differs from
// what Generate makes of it (go test ./reward -update rewrites it), and
// gate's agreement test runs the file on every gate test case.
package reward

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/groundwork/curate/gate"
)

// FileName is the reward file's name in this directory; exports ship it
// as ExportName.
const (
	FileName   = "groundwork_reward.py"
	ExportName = "reward.py"
)

// DataSource is the verl data_source the reward scores.
const DataSource = "groundwork/ideation"

// Epsilon is the bonus of a rollout that passes the gate.
const Epsilon = 0.05

//go:embed groundwork_reward.py
var source []byte

// Source returns the reward file as checked in (a new slice each call).
func Source() []byte { return bytes.Clone(source) }

// Markers of the generated block.
const (
	beginMarker = "# --- BEGIN GATE SPEC (generated from curate's gate package; do not edit) ---\n"
	endMarker   = "# --- END GATE SPEC ---\n"
)

// Generate returns src with the block between the GATE SPEC markers
// replaced by the Go gate's spec.
func Generate(src []byte) ([]byte, error) {
	i := bytes.Index(src, []byte(beginMarker))
	j := bytes.Index(src, []byte(endMarker))
	if i < 0 || j < i {
		return nil, fmt.Errorf("generate %s: no GATE SPEC markers", FileName)
	}
	var b bytes.Buffer
	b.Write(src[:i+len(beginMarker)])
	b.WriteString("GATE_SPEC = json.loads(r\"\"\"\n")
	b.Write(gate.SpecJSON())
	b.WriteString("\n\"\"\")\n")
	b.Write(src[j:])
	return b.Bytes(), nil
}
