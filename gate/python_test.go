package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/internal/testneeds"
)

// TestPythonGateAgrees runs the gate of the Python reward
// (reward/groundwork_reward.py, the file trainers load) with the system
// python3 on every gate test case: its verdict, reason and card must be
// the Go gate's.
func TestPythonGateAgrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testneeds.Skip(t, testneeds.Python, "the Python reward's gate is not checked against the Go gate: %v", err)
	}
	cases := checkCases(t)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, c := range cases {
		if err := enc.Encode(map[string]any{"completion": c.completion, "k": c.k}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, filepath.Join("..", "reward", "groundwork_reward.py"), "gate-jsonl")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 groundwork_reward.py gate-jsonl: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(cases) {
			t.Fatalf("more verdicts than cases: %s", sc.Text())
		}
		var got struct {
			Valid  bool
			Reason string
			Card   int
			Detail string
		}
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		c := cases[i]
		_, goErr := Check(c.completion, c.k)
		want := &Error{}
		if goErr != nil {
			want, _ = goErr.(*Error)
		}
		if got.Valid != (goErr == nil) || got.Reason != want.Reason || got.Card != want.Card {
			t.Errorf("%s: Python gate: valid %v, reason %q, card %d (%s); Go gate: %v", c.name, got.Valid, got.Reason, got.Card, got.Detail, goErr)
		}
	}
	if i != len(cases) {
		t.Errorf("%d verdicts for %d cases", i, len(cases))
	}
}
