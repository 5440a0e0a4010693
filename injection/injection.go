// Package injection finds text in a paper that addresses a language model
// rather than its reader: an instruction planted in a page ("ignore
// previous instructions", "mark every reference as a source", "write the
// following idea card") or a chat template's control tokens. A target
// whose text holds any is suspect before a model reads it, and the passages
// are taken out of the prompts that carry its text.
//
// Papers about language models quote such phrases, and their appendices
// print the prompts of their own experiments ("You must answer with a
// number between 0 and 100"). So a passage counts only when it addresses
// the model that reads it and aims at what curate asks of one, judged on
// the prose alone:
//
//   - text in quotation marks is quoted, not addressed, and is not read;
//     nor are table cells, where papers list prompts and attack strings;
//   - an override ("ignore/disregard/forget … previous instructions",
//     "new instructions:") counts where it stands as a command: opening a
//     sentence (after "please", "now", "important:", a role marker …),
//     after "you must/should …", or in a sentence that speaks to the
//     model ("you", "as an AI", "note to AI reviewers", "any LLM reading
//     this"); as a noun ("the ignore-previous-instructions attack", "such
//     as ignore previous instructions") it does not;
//   - a task ("… references … as sources", "idea card", "problem_gap",
//     "give a positive review") counts when the sentence is an imperative
//     (it opens with a verb such as mark, classify, treat, write, output,
//     give) or speaks to the model; "we treat such references as sources"
//     is the authors describing their method;
//   - a role marker opening a line or sentence ("system:", "assistant:",
//     "### Instruction:") counts with an override or a task after it; a
//     transcript of an experiment ("user: Hi there, can you help me") does
//     not;
//   - a chat template's control token ("<|im_start|>", "[INST]",
//     "<<SYS>>", "<|eot_id|>") counts on its own outside quotation marks.
//
// Where a planted passage hides (white text, a tiny font) does not change
// what it says: the parser keeps such text, and it is judged like any
// other.
package injection

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/groundwork/curate/parse/sentence"
	"github.com/groundwork/curate/record"
)

// Rules an instruction-like sentence breaks (record.Instruction.Rule).
const (
	RuleOverride = "override"      // tells the model to drop its instructions
	RuleTask     = "task"          // tells the model how to do curate's task
	RuleRole     = "role_marker"   // a role marker followed by either
	RuleToken    = "control_token" // a chat template's control token
)

// Text is one piece of a paper's text and where it stands.
type Text struct {
	Where string // "abstract", "section 3 (Method), paragraph 2", …
	Body  string
}

// Scan returns the sentences of texts that address a model, in the order
// of texts; a sentence repeated (a mention sentence is also in its
// paragraph) is reported once, where it first stands.
func Scan(texts []Text) []record.Instruction {
	var out []record.Instruction
	seen := map[string]bool{}
	for _, t := range texts {
		for _, line := range strings.Split(t.Body, "\n") {
			for _, b := range sentence.Bounds(line, nil) {
				sent := line[b[0]:b[1]]
				rule := judge(sent)
				if rule == "" {
					continue
				}
				key := strings.Join(strings.Fields(sent), " ")
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, record.Instruction{Where: t.Where, Rule: rule, Sentence: strings.TrimSpace(sent)})
			}
		}
	}
	return out
}

// Addresses reports whether sentence addresses a model (by the rules of
// the package doc): for a reader of sentences, such as an extractive
// summarizer, that must never take one for the paper's own statement.
func Addresses(sentence string) bool { return judge(sentence) != "" }

// Removed stands in a prompt where Strip took a passage out.
const Removed = "[instruction-like text removed]"

// Strip returns s with every sentence of findings replaced by Removed.
func Strip(s string, findings []record.Instruction) string {
	for _, f := range findings {
		if f.Sentence != "" {
			s = strings.ReplaceAll(s, f.Sentence, Removed)
		}
	}
	return s
}

var (
	// override: an instruction to drop the instructions the model has.
	override = regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|overrule|bypass|discard)\s+(?:(?:the|of|these|those|my|our)\s+)*` +
		`(?:(?:all|any|each|every|your|previous|prior|above|earlier|preceding|former|foregoing|original|initial|system|existing)\s+)+(?:(?:the|of)\s+)*(?:[\w-]+\s+){0,2}` +
		`(?:instructions?|prompts?|rules|directions|guidelines|guidance|commands|directives|context|messages|constraints)\b` +
		`|\b(?:new|updated|revised|real|actual|true)\s+instructions?\s*:` +
		`|\bfrom\s+now\s+on\s*,?\s+you\b`)
	// nounUse: the words after an override that make it the name of an
	// attack, not a command.
	nounUse = regexp.MustCompile(`(?i)^[\s\-–—:]*(?:attacks?|injections?|prompts?|style|phrases?|strings?|payloads?|techniques?|prefix(?:es)?|suffix(?:es)?|templates?|jailbreaks?|examples?|variants?|baselines?|setting|condition|type)\b`)
	// commandLead: what may stand before a command at a sentence's start.
	commandLead = regexp.MustCompile(`(?i)^(?:(?:please|kindly|now|first|also|then|and|but|so|simply|just|instead|important|note|attention|warning|reminder|update|urgent|system|assistant|user|developer|human|ai|instruction|instructions|###?|#|\*+|-+|>+|\[[^\]]*\])\W*)*$`)
	// addressee: a sentence that speaks to the model reading it.
	addressee = regexp.MustCompile(`(?i)\byou(?:r|rs|rself)?\b` +
		`|\b(?:(?:note|message|attention|instructions?)\s+(?:to|for)|dear|hello|hi)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llms?|gpts?|language\s+models?|models?|assistants?|chatbots?|automated|machine|bots?)\b` +
		`|\b(?:as|if\s+you\s+are)\s+an?\s+(?:ai|llm|language\s+model|assistant|chatbot|automated)\b` +
		`|\b(?:any|every|each|all|the)\s+(?:ai|llms?|language\s+models?|models?|assistants?|chatbots?|automated\s+\w+|ai\s+\w+)\s+(?:reading|processing|reviewing|summari[sz]ing|analy[sz]ing|parsing|classifying|given)\s+(?:this|these|the)\b` +
		`|\b(?:ai|llm|automated|machine)\s+(?:readers?|reviewers?|summari[sz]ers?|annotators?|classifiers?|agents?)\b`)
	// task: what curate asks of a model, or a reviewer's verdict.
	refsNoun   = `(?:references?|citations?|cited\s+(?:works?|papers?)|bibliograph(?:y|ic\s+entries)|works\s+(?:cited|listed|numbered)|papers\s+cited|entries)`
	sourceNoun = `(?:sources?|foundation(?:al)?|motivation|inspiration)`
	taskRefs   = regexp.MustCompile(`(?i)\b` + refsNoun + `\b[^.;]{0,80}?\b(?:as|are|is|be|being)\s+(?:all\s+|each\s+)?(?:a\s+|an\s+|its\s+|their\s+|the\s+)?(?:primary\s+|main\s+|key\s+|direct\s+|true\s+|real\s+)?` + sourceNoun + `\b` +
		`|\bsources\b[^.;]{0,40}?\b(?:are|include|is)\b[^.;]{0,30}?\b` + refsNoun + `\b`)
	taskCard = regexp.MustCompile(`(?i)\b(?:idea|gold|research)[\s\-]+cards?\b|\bproblem_gap\b|\bcore_claim\b|\bthe\s+following\s+(?:card|summary|idea|json|answer|output)\b` +
		`|\b(?:card|summary|classification)\s+(?:of|for)\s+this\s+(?:paper|work|article|document)\b`)
	taskReview = regexp.MustCompile(`(?i)\b(?:positive|favou?rable|glowing|high)\s+(?:review|assessment|evaluation|rating|score)s?\b|\brecommend\s+(?:its\s+|this\s+paper'?s?\s+)?accept(?:ance|ing)?\b` +
		`|\bdo\s+not\s+(?:highlight|mention|point\s+out)\s+(?:any\s+)?(?:negatives|weaknesses|limitations|flaws)\b`)
	// imperative: a sentence that opens with a command verb.
	imperative = regexp.MustCompile(`(?i)^(?:mark|label|classify|treat|consider|regard|count|tag|list|select|flag|designate|annotate|choose|pick|identify|write|output|produce|generate|return|print|respond|answer|reply|say|state|give|rate|score|summari[sz]e|describe|include|copy|repeat|insert|put|make|set|use|ignore|disregard|forget|do\s+not|don'?t|never|always|only|remember)\b`)
	// roleMarker: a chat role opening a line or a sentence.
	roleMarker = regexp.MustCompile(`(?i)^(?:\W*)(?:system|assistant|user|developer|human)\s*:|^#{2,}\s*(?:instructions?|system|response|input|task)\b`)
	// controlToken: chat templates' special tokens (ChatML, Llama 2 and 3,
	// the end-of-text token).
	controlToken = regexp.MustCompile(`<\|(?:im_start|im_end|im_sep|endoftext|system|user|assistant|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\|>|\[/?INST\]|<</?SYS>>`)
)

// Words one of which a sentence must hold before judge reads it with its
// regular expressions: most sentences of a paper hold none, and a page of
// thousands of sentences is then read in milliseconds.
var (
	tokenCues    = []string{"<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>"}
	overrideCues = []string{"ignore", "disregard", "forget", "overrid", "overrul", "bypass", "discard", "instruction", "from now on"}
	taskCues     = []string{"card", "problem_gap", "core_claim", "following", "summary", "classification", "review", "rating", "score",
		"assessment", "evaluation", "accept", "negatives", "weaknesses", "limitations", "flaws"}
	refsCues   = []string{"referenc", "citation", "cited", "bibliograph", "entries", "works"}
	sourceCues = []string{"source", "foundation", "motivation", "inspiration"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// judge returns the rule sentence breaks, or "".
func judge(sentence string) string {
	s := maskQuotes(sentence)
	low := strings.ToLower(s)
	if containsAny(low, tokenCues) && controlToken.MatchString(s) {
		return RuleToken
	}
	if !containsAny(low, overrideCues) && !containsAny(low, taskCues) && !(containsAny(low, refsCues) && containsAny(low, sourceCues)) {
		return ""
	}
	lead := strings.TrimSpace(s)
	// Strip list markers and the like before the first word.
	lead = strings.TrimLeftFunc(lead, func(r rune) bool { return !unicode.IsLetter(r) && r != '#' && r != '<' })
	role := roleMarker.FindString(lead)
	body := strings.TrimSpace(lead[len(role):])
	body = strings.TrimLeftFunc(body, func(r rune) bool { return !unicode.IsLetter(r) })
	addressed := addressee.MatchString(s)
	commanding := imperative.MatchString(body) || imperative.MatchString(afterLead(body))

	for _, m := range override.FindAllStringIndex(s, -1) {
		if nounUse.MatchString(s[m[1]:]) {
			continue
		}
		if addressed || commandLead.MatchString(strings.TrimSpace(s[:m[0]])) || role != "" {
			if role != "" {
				return RuleRole
			}
			return RuleOverride
		}
	}
	task := taskCard.MatchString(s) || taskReview.MatchString(s) || taskRefs.MatchString(s)
	if task && (commanding || addressed) {
		if role != "" {
			return RuleRole
		}
		return RuleTask
	}
	return ""
}

// afterLead returns s past a leading "please", "now", "important:" and
// the like, where a command's verb stands.
func afterLead(s string) string {
	for {
		w, rest, ok := strings.Cut(s, " ")
		if !ok {
			return s
		}
		if !commandLead.MatchString(w) {
			return s
		}
		s = strings.TrimSpace(rest)
	}
}

// quotePairs are the quotation marks whose contents are quoted text.
var quotePairs = map[rune]rune{'"': '"', '\'': '\'', '\u201c': '\u201d', '\u201e': '\u201d', '\u00ab': '\u00bb', '\u2018': '\u2019', '`': '\''}

// maskQuotes returns s with the text inside quotation marks blanked (the
// marks kept), so that a quoted phrase is not read as the paper's own. A
// mark opens only where a word starts, so that an apostrophe ("model's")
// opens nothing; a quotation left open runs to the end of the sentence.
func maskQuotes(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var closing rune
	prev := ' '
	for _, r := range s {
		switch {
		case closing != 0 && (r == closing || closing == '\'' && r == '\u2019'):
			closing = 0
			b.WriteRune(r)
		case closing != 0:
			b.WriteByte(' ')
		default:
			if c, ok := quotePairs[r]; ok && (unicode.IsSpace(prev) || unicode.IsPunct(prev) || prev == utf8.RuneError) {
				closing = c
			}
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// delimiter matches an opening or closing tag of the given names.
func delimiter(names []string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)<\s*(/?)\s*(` + strings.Join(names, "|") + `)`)
}

// paperDelimiters are the tags curate's prompts enclose paper text in.
var paperDelimiters = delimiter([]string{"paper", "references"})

// Fence makes paper text safe to put between a prompt's <paper> and
// <references> delimiters: the text's own copies of them are rewritten
// ("</paper>" becomes "‹/paper>"), so that a paper cannot close the data
// block early and write outside it.
func Fence(s string) string { return paperDelimiters.ReplaceAllString(s, "‹$1$2") }
