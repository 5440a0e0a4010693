package sim

import (
	"encoding/json"
	"regexp"
	"strings"
)

// The simulated model's idea tuple (the tuples task of the shared
// layout): claims taken from the abstract in the paper block, each with
// the abstract's sentence as its quote (verbatim, so curate's
// verification keeps it), and the paper's coined name, from its title,
// said rather than used bare: "the proposed method" wherever the sentence
// does not explain it itself ("Name, which ...").

var ideaTuple = regexp.MustCompile(`(?i)write the idea tuple`)

var (
	introduces = regexp.MustCompile(`(?i)\bwe (introduce|propose|present)\b`)
	evaluates  = regexp.MustCompile(`(?i)\b(benchmarks?|datasets?|evaluat\w+)\b`)
	improves   = regexp.MustCompile(`(?i)\b(improv\w+|outperform\w*|achiev\w+|reduc\w+)\b`)
)

type tupleClaim struct {
	Claim string        `json:"claim"`
	Quote string        `json:"quote"`
	Steps *[]tupleClaim `json:"steps,omitempty"`
}

// tupleAnswer answers the tuples task; variant (0 to 2, -1 for a valid
// answer) picks an unusable one: 1 breaks the schema (no methods), 2 the
// stage's rules (quotes the paper does not have).
func tupleAnswer(user string, variant int) string {
	ss := abstractSentences(user)
	name := ""
	if m := titleLine.FindStringSubmatch(user); m != nil {
		if head, _, ok := strings.Cut(m[1], ":"); ok && len(strings.Fields(head)) == 1 {
			name = strings.TrimSpace(head)
		}
	}
	// say makes a sentence a claim: the coined name replaced unless the
	// sentence explains it.
	say := func(s string) string {
		if name != "" && !strings.Contains(s, name+", which") && !strings.Contains(s, name+" (") {
			s = strings.ReplaceAll(s, name, "the proposed method")
		}
		if r := []rune(s); len(r) > 0 && r[0] >= 'a' && r[0] <= 'z' {
			s = strings.ToUpper(string(r[0])) + string(r[1:])
		}
		return strings.TrimSuffix(s, ".") + "."
	}
	claim := func(s string) tupleClaim { return tupleClaim{Claim: say(s), Quote: s} }
	idea := map[string][]tupleClaim{
		"summary": {}, "motivations": {}, "research_questions": {}, "methods": {},
		"experimental_settings": {}, "expected_results": {},
	}
	for i, s := range ss {
		switch {
		case i == 0:
			idea["motivations"] = append(idea["motivations"], claim(s))
			q := strings.TrimSuffix(say(s), ".")
			idea["research_questions"] = append(idea["research_questions"],
				tupleClaim{Claim: "Can one avoid the failure that " + strings.ToLower(q[:1]) + q[1:] + "?", Quote: s})
		case introduces.MatchString(s) && len(idea["summary"]) == 0:
			idea["summary"] = append(idea["summary"], claim(s))
			m := claim(s)
			m.Steps = &[]tupleClaim{}
			idea["methods"] = append(idea["methods"], m)
		case improves.MatchString(s):
			idea["expected_results"] = append(idea["expected_results"], claim(s))
			if evaluates.MatchString(s) {
				if w := strings.Fields(s); len(w) > 3 {
					idea["experimental_settings"] = append(idea["experimental_settings"],
						tupleClaim{Claim: "The method is evaluated as follows: " + strings.TrimSuffix(say(s), "."), Quote: strings.Join(w[:3], " ")})
				}
			}
		}
	}
	if len(idea["methods"]) == 0 && len(ss) > 1 {
		m := claim(ss[1])
		idea["methods"] = append(idea["methods"], m)
	}
	switch variant {
	case 1:
		delete(idea, "methods")
	case 2:
		for k, cs := range idea {
			for i := range cs {
				cs[i].Quote = "words the paper never wrote " + cs[i].Quote
			}
			idea[k] = cs
		}
	}
	out, _ := json.Marshal(map[string]any{"references": []any{}, "card": nil, "idea": idea})
	return string(out)
}
