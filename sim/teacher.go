package sim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The simulated model also plays the SFT teacher (curate sft): it reads
// the model input (numbered documents and the task) and answers with K
// idea cards grounded in the documents, with opening sentences for the
// thinking traces, and with a trace that begins with the opening it is
// given and arrives at the ideas listed. It tags topics (curate topics)
// and rewrites idea cards without their results (curate pairs). Answers
// depend on the prompt only.

var (
	ideasCount   = regexp.MustCompile(`a JSON array of exactly (\d+) object`)
	openingsN    = regexp.MustCompile(`Write (\d+) new opening sentences`)
	openingGiven = regexp.MustCompile(`begins with exactly this sentence: "([^"]*)"`)
	documentN    = regexp.MustCompile(`(?m)^Document (\d+): (.*)$`)
	traceIdeas   = "The ideas your thinking arrives at"
	tagTask      = "Name this topic."
	rewriteCard  = "The paper's idea card:"
	cardLabel    = regexp.MustCompile(`(?m)^(problem_gap|method): (\[[^\]]+\])`)
	titleItem    = regexp.MustCompile(`(?m)^- (.+)$`)
	longWord     = regexp.MustCompile(`[A-Za-z]{6,}`)
)

// coinWord is one of 16⁴ words coined from b.
func coinWord(b [32]byte, i int) string {
	return syllables[b[i]%16] + syllables[b[i]>>4] + syllables[b[i+1]%16] + syllables[b[i+1]>>4]
}

// ideasAnswer writes k idea cards over the prompt's documents.
func ideasAnswer(user string, variant int) string {
	k, _ := strconv.Atoi(ideasCount.FindStringSubmatch(user)[1])
	docs := documentN.FindAllStringSubmatch(user, -1)
	if variant >= 0 {
		k++ // one card too many: breaks the gate's count
	}
	type card struct {
		ProblemGap  string `json:"problem_gap"`
		CoreClaim   string `json:"core_claim"`
		Method      string `json:"method"`
		Inspiration string `json:"inspiration"`
	}
	cards := make([]card, k)
	for i := range cards {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00idea %d", user, i)))
		a, b := "1", "2"
		if len(docs) > 0 {
			a, b = docs[int(sum[0])%len(docs)][1], docs[int(sum[1])%len(docs)][1]
		}
		w := coinWord(sum, 4)
		cards[i] = card{
			ProblemGap: fmt.Sprintf("[%s] Document %s and Document %s both leave the %s effect unexplained when the setting shifts.",
				opportunityLabels[int(sum[2])%len(opportunityLabels)], a, b, w),
			CoreClaim: fmt.Sprintf("We claim that joining the methods of Document %s and Document %s makes the %s effect predictable.", a, b, w),
			Method: fmt.Sprintf("[%s] Combine the two methods and test the claim on the %s cases the documents leave open.",
				paradigmLabels[int(sum[3])%len(paradigmLabels)], w),
			Inspiration: fmt.Sprintf("Document %s measures the %s effect but never explains it. Document %s offers a mechanism but tests it in one setting. "+
				"Connecting them is not obvious because they use different vocabularies.", a, w, b),
		}
	}
	out, _ := json.Marshal(cards)
	return string(out)
}

// openingsAnswer writes n first sentences for thinking traces, different
// for every prompt (and so from the ones the prompt lists as used).
func openingsAnswer(user string, variant int) string {
	n, _ := strconv.Atoi(openingsN.FindStringSubmatch(user)[1])
	if variant >= 0 {
		n-- // one too few
	}
	leads := []string{"Okay,", "Hmm,", "Right,", "Let me see:", "So,", "Well,"}
	out := struct {
		Openings []string `json:"openings"`
	}{Openings: []string{}}
	for i := range max(n, 0) {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00opening %d", user, i)))
		out.Openings = append(out.Openings, fmt.Sprintf("%s I want to see where the %s thread and the %s thread in these papers come apart.",
			leads[int(sum[0])%len(leads)], coinWord(sum, 2), coinWord(sum, 5)))
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// traceAnswer writes the thinking that begins with the given opening and
// goes through the documents to the listed ideas.
func traceAnswer(user string, variant int) string {
	opening := "I start reading."
	if m := openingGiven.FindStringSubmatch(user); m != nil {
		opening = m[1]
	}
	if variant >= 0 {
		opening = "Without the opening asked for, I start somewhere else."
	}
	var b strings.Builder
	b.WriteString(opening)
	for _, d := range documentN.FindAllStringSubmatch(user, -1) {
		fmt.Fprintf(&b, " Document %s, %s, contributes a method but leaves open when it fails.", d[1], strings.TrimSpace(d[2]))
	}
	b.WriteString(" A first candidate would only rerun one document in a new setting, which is too incremental, so I drop it." +
		" I am not sure the documents support a causal story, so I hedge there and ask what each one assumes." +
		" Joining two of them is the less obvious move, and it is the one the final ideas make, most promising first." +
		" Each idea differs from the others in its gap, and each label fits its field.")
	return b.String()
}

// tagAnswer names a topic after the longer word its titles share most.
func tagAnswer(user string, variant int) string {
	if variant >= 0 {
		return `{"tag": ""}`
	}
	count := map[string]int{}
	for _, m := range titleItem.FindAllStringSubmatch(user, -1) {
		seen := map[string]bool{}
		for _, w := range longWord.FindAllString(m[1], -1) {
			w = strings.ToLower(w)
			if !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	best := ""
	for w, n := range count {
		if n > count[best] || n == count[best] && w < best {
			best = w
		}
	}
	if best == "" {
		best = "untitled"
	}
	b, _ := json.Marshal(map[string]string{"tag": "Shared work on " + best + " methods"})
	return string(b)
}

// rewriteAnswer writes an idea-only summary: the card's labels, and
// sentences that name no paper, number or result.
func rewriteAnswer(user string, variant int) string {
	labels := map[string]string{"problem_gap": "[Other]", "method": "[Other]"}
	for _, m := range cardLabel.FindAllStringSubmatch(user, -1) {
		labels[m[1]] = m[2]
	}
	claim := "We claim that joining two separate lines of earlier work explains when the studied effect appears."
	if variant >= 0 {
		claim = "We claim that it beats every baseline by 12 points."
	}
	b, _ := json.Marshal(map[string]string{
		"problem_gap": labels["problem_gap"] + " Earlier work describes the effect but leaves open why it appears in some settings and not in others.",
		"core_claim":  claim,
		"method":      labels["method"] + " Connect the two lines of work and test the joined account in the settings earlier work left open.",
	})
	return string(b)
}
