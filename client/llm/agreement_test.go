package llm

import (
	"bufio"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

var updateAgreement = flag.Bool("update-agreement", false, "write the verdicts of the schemas of testdata/agreement that have none, from Validate")

// The agreement corpus: every schema curate sends (one file each, which
// the stage that sends it checks is its schema byte for byte), and for
// each a corpus of answers: valid ones made from the schema (and from its
// OpenAI strict-mode form, whose optional properties come back as null)
// and every mutation of them the mutators make (wrong types, properties
// missing and extra, enum misses, lengths and counts out of bounds,
// numbers out of range or not whole, JSON broken), with the verdict of
// the validator curate had before the JSON Schema library took over
// (commit "llm: the agreement corpus covers every schema curate sends"
// ran both and recorded that they agree on every answer), or for a
// schema added since, the library's own (By says which). paper_task_cards
// is the paper task's schema before the idea tuple joined it (papers-v1):
// kept for the home-made validator's verdicts on it.
// TestValidatorAgreement holds Validate to those verdicts.
const agreementDir = "testdata/agreement"

type verdict struct {
	Doc   string `json:"doc"`
	Valid bool   `json:"valid"`
	// Reason is the validator's error (what the model is told), "" for a
	// valid doc.
	Reason string `json:"reason,omitempty"`
	// By is the validator that gave the verdict: "" for the home-made
	// one, "library" for Validate.
	By string `json:"by,omitempty"`
}

// agreementSchemas loads the corpus's schemas by name.
func agreementSchemas(t *testing.T) map[string]*Schema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(agreementDir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s: %v", agreementDir, err)
	}
	out := map[string]*Schema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".schema.json")
		s, err := NewSchema(name, b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[name] = s
	}
	return out
}

// agreementText is the paper the valid answers quote (short sentences:
// short answers keep the corpus small).
const agreementText = `Readers fail on scans. Audits find the gaps. Rotation breaks it.`

// corpus returns the answers checked against s: valid ones and their
// mutations, each once, in a fixed order.
func corpus(t *testing.T, s *Schema) []string {
	t.Helper()
	var docs []string
	seen := map[string]bool{}
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			docs = append(docs, d)
		}
	}
	for _, form := range []json.RawMessage{s.JSON(), s.WireSchema(DialectOpenAI)} {
		for _, seed := range []string{"a", "b"} {
			a, err := sim.SchemaAnswer(form, agreementText, seed)
			if err != nil {
				t.Fatalf("%s: no valid answer: %v", s.Name(), err)
			}
			var v any
			if err := json.Unmarshal(a, &v); err != nil {
				t.Fatal(err)
			}
			add(string(a))
			for _, m := range mutate(v) {
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				add(string(b))
			}
		}
	}
	for _, raw := range []string{``, `{`, `{"a":1} {}`, `null`, `[]`, `"text"`, `1e400`, `{"references": 1e400}`, `{} `, "\n{}\n"} {
		add(raw)
	}
	return docs
}

// mutate returns v changed in one place each way the mutators know, for
// every place of v.
func mutate(v any) []any {
	// At this place: other types and shapes.
	var out []any
	long := strings.Repeat("é", 150)
	out = append(out, "x", "", long, 1.5, 2.0, -1.0, 0.0, 1e9, true, false, nil, []any{}, []any{"x"}, []any{map[string]any{}},
		map[string]any{}, map[string]any{"x": 1.0}, "not-a-label", "[Evidence Gap] x", "Document 1.")
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		for _, k := range keys {
			without := cloneMap(v)
			delete(without, k)
			out = append(out, without)
			for _, m := range mutate(v[k]) {
				c := cloneMap(v)
				c[k] = m
				out = append(out, c)
			}
		}
		extra := cloneMap(v)
		extra["extra"] = "x"
		out = append(out, extra)
	case []any:
		out = append(out, []any{})
		if len(v) > 0 {
			out = append(out, append(slices.Clone(v), v[0]), repeat(v, 3))
			for i, e := range v {
				for _, m := range mutate(e) {
					c := slices.Clone(v)
					c[i] = m
					out = append(out, c)
				}
			}
		}
	case string:
		out = append(out, v+v, v[:len(v)/2], strings.ToUpper(v), " "+v, strings.Repeat(v, 3))
	case float64:
		out = append(out, v+0.5, -v, v+1, v-1, v*1000)
	}
	return out
}

func cloneMap(m map[string]any) map[string]any { return maps.Clone(m) }

func repeat(v []any, n int) []any {
	var out []any
	for range n {
		out = append(out, v...)
	}
	return out
}

// TestValidatorAgreement: on every schema curate sends and its corpus,
// Validate (the JSON Schema library) accepts what the home-made validator
// accepted and refuses what it refused, and tells the refusals in the
// same words nearly always. -update-agreement writes the verdicts of a
// schema new to the corpus, from Validate.
func TestValidatorAgreement(t *testing.T) {
	schemas := agreementSchemas(t)
	total, same, valid, home := 0, 0, 0, 0
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		s := schemas[name]
		path := filepath.Join(agreementDir, name+".verdicts.jsonl")
		if _, err := os.Stat(path); os.IsNotExist(err) && *updateAgreement {
			var b strings.Builder
			for _, d := range corpus(t, s) {
				err := s.Validate(json.RawMessage(d))
				v := verdict{Doc: d, Valid: err == nil, By: "library"}
				if err != nil {
					v.Reason = err.Error()
				}
				line, _ := json.Marshal(v)
				b.Write(line)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("%v (a schema new to the corpus: run with -update-agreement)", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n, sameHere, validHere := 0, 0, 0
		var refused []verdict
		for sc.Scan() {
			var v verdict
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			n++
			if v.By == "" {
				home++
			}
			err := s.Validate(json.RawMessage(v.Doc))
			if (err == nil) != v.Valid {
				t.Errorf("%s: Validate(%s) = %v; the recorded verdict is valid %v (%s)", name, clip(v.Doc, 200), err, v.Valid, v.Reason)
			}
			switch {
			case v.Valid:
				validHere++
			case err != nil && err.Error() == v.Reason:
				sameHere++
			default:
				refused = append(refused, v)
				if testing.Verbose() {
					t.Logf("%s: %s: %v; recorded %s", name, clip(v.Doc, 120), err, v.Reason)
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if n < 50 {
			t.Errorf("%s: %d answers in the corpus, want a corpus", name, n)
		}
		// What the model is told changed for no more than one refusal in
		// a hundred (a number past float64's range, so far).
		if len(refused) > (n-validHere)/100+2 {
			t.Errorf("%s: %d refusals told in other words than recorded", name, len(refused))
		}
		total, same, valid = total+n, same+sameHere, valid+validHere
	}
	t.Logf("%d schemas, %d answers (%d valid, %d with the home-made validator's verdict); %d of the %d refusals told in the same words",
		len(schemas), total, valid, home, same, total-valid)
}
