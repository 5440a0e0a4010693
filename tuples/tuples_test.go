package tuples_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/tuples"
)

var update = os.Getenv("UPDATE_GOLDEN") != ""

// paper is a small hand-written paper (fictional) with a coined name in
// its title, an abbreviation it defines, a citation, a table reference.
func paper() *record.Document {
	title := "Vexor: Contrastive Sampling for Low-Resource Translation"
	return &record.Document{
		ID: "2503.00001", Title: &title,
		Abstract: "Translation systems for low-resource languages lose fluency when parallel data is scarce. " +
			"We introduce Vexor, which samples contrastive pairs from monolingual text. " +
			"On four benchmarks Vexor improves BLEU by 2.1 points over the strongest baseline.",
		Sections: []record.Section{
			{ID: "S1", Heading: "Introduction", Level: 1, Paragraphs: []string{
				"Back-translation remains costly for languages with little data [3]. " +
					"We ask whether contrastive sampling can replace back-translation altogether. " +
					"It is cheap.",
			}},
			{ID: "S2", Heading: "Method", Level: 1, Paragraphs: []string{
				"Vexor builds on retrieval-augmented generation (RAG) over monolingual corpora. " +
					"First, RAG retrieves sentences close to the source. " +
					"Then a contrastive loss separates good and bad translations. " +
					"Table 2 lists the hyper-parameters.",
			}},
			{ID: "S3", Heading: "Experiments", Level: 1, Paragraphs: []string{
				"We evaluate on four FLORES benchmarks with five baselines. " +
					"Vexor improves BLEU by 2.1 points on average.",
			}},
		},
		References: []record.Reference{{Key: "bib.bib3", Text: "A. Author. Back-translation at scale for every language. 2020."}},
	}
}

// TestSchema holds the answer's schema to its golden literal and checks
// what it refuses.
func TestSchema(t *testing.T) {
	golden := filepath.Join("testdata", "schema.json")
	got := tuples.Schema.JSON()
	if update {
		os.WriteFile(golden, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != string(got) {
		t.Errorf("schema changed (UPDATE_GOLDEN=1 to accept):\n%s\nwant\n%s", got, want)
	}
	good := `{"summary":[{"claim":"c","quote":"q"}],"motivations":[{"claim":"c","quote":"q"}],"research_questions":[{"claim":"c","quote":"q"}],` +
		`"methods":[{"claim":"c","quote":"q","steps":[{"claim":"s","quote":"q"}]}],"experimental_settings":[],"expected_results":[]}`
	if err := tuples.Schema.Validate(json.RawMessage(good)); err != nil {
		t.Fatalf("a good answer: %v", err)
	}
	for name, bad := range map[string]string{
		"no motivations":  strings.Replace(good, `"motivations":[{"claim":"c","quote":"q"}]`, `"motivations":[]`, 1),
		"two summaries":   strings.Replace(good, `"summary":[{"claim":"c","quote":"q"}]`, `"summary":[{"claim":"c","quote":"q"},{"claim":"d","quote":"q"}]`, 1),
		"an empty claim":  strings.Replace(good, `"research_questions":[{"claim":"c"`, `"research_questions":[{"claim":""`, 1),
		"no quote":        strings.Replace(good, `"motivations":[{"claim":"c","quote":"q"}]`, `"motivations":[{"claim":"c"}]`, 1),
		"another field":   strings.Replace(good, `"summary"`, `"novelty":[],"summary"`, 1),
		"no methods":      strings.Replace(good, `"methods":[{"claim":"c","quote":"q","steps":[{"claim":"s","quote":"q"}]}]`, `"methods":[]`, 1),
		"a field missing": strings.Replace(good, `,"expected_results":[]`, ``, 1),
	} {
		if err := tuples.Schema.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: passes the schema", name)
		}
	}
	if _, err := tuples.Decode(json.RawMessage(good)); err != nil {
		t.Error(err)
	}
}

func TestTermsOf(t *testing.T) {
	terms := tuples.TermsOf(paper())
	want := tuples.Terms{"Vexor": "contrastive Sampling for Low-Resource Translation", "RAG": "retrieval-augmented generation"}
	if terms["RAG"] != want["RAG"] || !strings.EqualFold(terms["Vexor"], want["Vexor"]) || len(terms) != 2 {
		t.Errorf("terms %q, want %q", terms, want)
	}
}

// TestVerify: every way a claim fails, and what is kept.
func TestVerify(t *testing.T) {
	doc := paper()
	c := func(claim, quote string) record.Claim { return record.Claim{Claim: claim, Quote: quote} }
	in := record.IdeaTuple{
		Summary: []record.Claim{
			c("Vexor (contrastive sampling for low-resource translation) samples contrastive pairs from monolingual text.", "We introduce Vexor, which samples contrastive pairs"),
			c("A second summary sentence that is also quoted properly.", "samples contrastive pairs from monolingual text"),
		},
		Motivations: []record.Claim{
			c("Low-resource translation loses fluency when parallel data is scarce.", "Translation systems for low-resource languages lose fluency"),
			c("Low-resource translation loses fluency when parallel data is scarce.", "lose fluency when parallel data is scarce"), // repeated
			c("Back-translation is expensive.", "Back-translation is really quite expensive"),                                      // paraphrased quote
			c("Back-translation is costly for languages with little data [3].", "Back-translation remains costly for languages"),   // citation mark
			c("It is cheap for the system.", "It is cheap."),                                                                       // pronoun opener; quote too short too
			c("Back-translation remains costly for rare languages.", "remains costly"),                                             // two words
		},
		ResearchQuestions: []record.Claim{
			c("Can contrastive sampling replace back-translation altogether?", "We ask whether contrastive sampling can replace back-translation altogether."),
			c("Does back-translation scale to every language?", "Back-translation at scale for every language."), // the bibliography is not the paper's prose
		},
		Methods: []record.MethodClaim{
			{Claim: "Retrieval-augmented generation (RAG) over monolingual corpora supplies the pairs.", Quote: "builds on retrieval-augmented generation (RAG) over monolingual corpora",
				Steps: []record.Claim{
					c("RAG (retrieval-augmented generation) retrieves sentences close to the source.", "First, RAG retrieves sentences close to the source."),
					c("RAG retrieves sentences close to the source.", "First, RAG retrieves sentences close to the source."), // RAG unexplained
				}},
			{Claim: "The hyper-parameters are listed in Table 2.", Quote: "Table 2 lists the hyper-parameters.",
				Steps: []record.Claim{c("A contrastive loss separates good and bad translations.", "Then a contrastive loss separates good and bad translations.")}},
		},
		ExperimentalSettings: []record.Claim{
			c("Vexor is evaluated on four FLORES benchmarks with five baselines.", "We evaluate on four FLORES benchmarks with five baselines."),                  // Vexor unexplained
			c("The evaluation uses four FLORES benchmarks with five baselines. It also uses more.", "We evaluate on four FLORES benchmarks with five baselines."), // two sentences
		},
		ExpectedResults: []record.Claim{
			c("Contrastive sampling improves BLEU by 2.1 points on average.", "Vexor improves BLEU by 2.1 points on average."),
			c(strings.Repeat("word ", 61), "Vexor improves BLEU by 2.1 points on average."),
		},
	}
	r := tuples.Build("2503.00001", doc, in, tuples.Made{Backend: record.TupleBackendLLM, Model: "m"})
	got := r.Idea
	claims := func(cs []record.Claim) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Claim)
		}
		return out
	}
	if want := []string{in.Summary[0].Claim}; !slices.Equal(claims(got.Summary), want) {
		t.Errorf("summary %q", claims(got.Summary))
	}
	if got.Summary[0].Quote != "We introduce Vexor, which samples contrastive pairs" {
		t.Errorf("the kept quote %q is not the paper's text", got.Summary[0].Quote)
	}
	if want := []string{in.Motivations[0].Claim}; !slices.Equal(claims(got.Motivations), want) {
		t.Errorf("motivations %q", claims(got.Motivations))
	}
	if want := []string{in.ResearchQuestions[0].Claim}; !slices.Equal(claims(got.ResearchQuestions), want) {
		t.Errorf("research questions %q", claims(got.ResearchQuestions))
	}
	if len(got.Methods) != 1 || got.Methods[0].Claim != in.Methods[0].Claim || len(got.Methods[0].Steps) != 1 || !strings.HasPrefix(got.Methods[0].Steps[0].Claim, "RAG (retrieval") {
		t.Errorf("methods %+v", got.Methods)
	}
	if len(got.ExperimentalSettings) != 0 || !slices.Equal(claims(got.ExpectedResults), []string{in.ExpectedResults[0].Claim}) {
		t.Errorf("settings %q results %q", claims(got.ExperimentalSettings), claims(got.ExpectedResults))
	}
	why := map[string]int{}
	for _, d := range r.Dropped {
		why[d.Why]++
		if d.Detail == "" || d.Field == "" {
			t.Errorf("drop %+v says not what failed", d)
		}
	}
	// Unverified: the paraphrase, the two-word quote, the bibliography's
	// sentence; not self-contained: [3], "It", RAG and Vexor unexplained,
	// Table 2 (its step goes with it); not atomic: two sentences, 61
	// words; extra: the second summary.
	wantWhy := map[string]int{record.DropUnverified: 3, record.DropNotSelfContained: 5, record.DropNotAtomic: 2, record.DropExtra: 1}
	for k, n := range wantWhy {
		if why[k] != n {
			t.Errorf("%s: %d drops, want %d (%+v)", k, why[k], n, r.Dropped)
		}
	}
	if r.Unverified != 3 || r.NotSelfContained != 5 || r.NotAtomic != 2 || len(r.Missing) != 0 || !tuples.Complete(r) || r.Heuristic {
		t.Errorf("record %+v", r)
	}

	// Every required field emptied by verification: the tuple is
	// incomplete and says which.
	bare := tuples.Build("2503.00001", doc, record.IdeaTuple{Methods: in.Methods[1:]}, tuples.Made{Backend: record.TupleBackendLLM})
	if want := []string{record.TupleMotivations, record.TupleResearchQuestions, record.TupleMethods}; !slices.Equal(bare.Missing, want) || tuples.Complete(bare) {
		t.Errorf("missing %v, want %v", bare.Missing, want)
	}
}

// TestSelfContained and TestAtomic: the cheap checks alone.
func TestSelfContained(t *testing.T) {
	terms := tuples.Terms{"Vexor": "contrastive sampling for translation", "RAG": "retrieval-augmented generation", "Zed": ""}
	for claim, ok := range map[string]bool{
		"Contrastive sampling lowers the cost of translation.":      true,
		"Results in Section 4 show gains.":                          false,
		"As Fig. 3 shows, loss falls.":                              false,
		"The bound of Eq. (2) holds.":                               false,
		"Details are in Appendix B of the work.":                    false,
		"Prior systems [4, 5] fail.":                                false,
		"This shows the idea works.":                                false,
		"Vexor lowers cost.":                                        false,
		"Vexor (contrastive sampling for translation) lowers cost.": true,
		"Vexor, a contrastive sampler, lowers cost.":                true,
		"Using retrieval-augmented generation (RAG) helps.":         true,
		"Zed helps.":                                 false,
		"Zed (a small model) helps.":                 true,
		"Vexorian ideas and RAGs are not the terms.": true,
		"The method uses contrastive sampling for translation, called Vexor.":  true,
		"Back-translation with a 5% budget improves accuracy in 2 of 3 cases.": true,
	} {
		if why, got := tuples.SelfContained(claim, terms); got != ok {
			t.Errorf("%q: %v (%s), want %v", claim, got, why, ok)
		}
	}
	for claim, ok := range map[string]bool{
		"One claim, e.g. this one, with an abbreviation.": true,
		"One claim. Another claim.":                       false,
		"":                                                false,
		strings.Repeat("w ", 60):                          true,
		strings.Repeat("w ", 61):                          false,
	} {
		if why, got := tuples.Atomic(claim); got != ok {
			t.Errorf("atomic %q: %v (%s), want %v", claim, got, why, ok)
		}
	}
}
