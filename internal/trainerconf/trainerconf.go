// Package trainerconf checks the trainer settings curate's READMEs print
// (the export READMEs, the SFT card, the dataset card) against the
// trainers' own configuration, as recorded in testdata: excerpts of verl's
// and TRL's config files and registries at the commits the READMEs name,
// each file naming its repository, commit and path. It is for tests.
//
// What is checked:
//
//   - every verl override (key=value, +key=value, ++key=value) of a
//     command that runs a verl.trainer module, and every verl key in the
//     prose that names a section of the trainer's configuration: the key
//     must be in the recorded configuration of the module the line names
//     (or the first its section's code runs), not deprecated there; +key must be a new key
//     under a mapping (Hydra refuses to append a key that exists), a plain
//     key one that exists;
//   - a reward manager named (reward_manager.name, reward_model.reward_manager)
//     must be in the registry the run looks it up in: the reward loop's when
//     reward_model.use_reward_loop keeps its default (true), the legacy
//     managers' when the same command sets it false;
//   - every keyword argument of a TRL SFTConfig, GRPOConfig, SFTTrainer or
//     GRPOTrainer call, and every snake_case name in TRL prose (a line
//     naming SFTTrainer or GRPOTrainer, or any line of a section whose
//     first trainer, in its code, is one), must be a recorded field or
//     parameter, and a value of a field with choices one of them.
//
// A key the excerpts do not hold is reported: record it, with its source,
// before printing it.
package trainerconf

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Schema is what the excerpts record of one trainer.
type Schema struct {
	Trainer string
	// Keys maps each dotted verl key to its kind; Deprecated to the
	// comment that says so.
	Keys       map[string]Kind
	Deprecated map[string]string
	// Registries maps "loop" and "legacy" to the reward managers each
	// holds (verl main_ppo only).
	Registries map[string][]string
	// Fields and Params are a TRL config's fields and its trainer's
	// parameters; Choices the values a field allows.
	Fields, Params []string
	Choices        map[string][]string
}

// Kind is what a recorded verl key is.
type Kind int

const (
	Leaf    Kind = iota // a value
	Mapping             // a mapping whose keys are recorded
	Open                // an empty mapping ({}): new keys go under it
	Omitted             // a subtree the excerpt left out
)

// Schemas are the recorded trainers, by name ("verl.trainer.main_ppo",
// "SFTTrainer").
type Schemas map[string]*Schema

func (s Schemas) get(name string) *Schema {
	if s[name] == nil {
		s[name] = &Schema{Trainer: name, Keys: map[string]Kind{}, Deprecated: map[string]string{}, Registries: map[string][]string{}, Choices: map[string][]string{}}
	}
	return s[name]
}

// Load reads every excerpt in dir (its files name their trainer on a
// "# trainer:" line).
func Load(dir string) (Schemas, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return nil, err
	}
	s := Schemas{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		trainer := directive(string(data), "trainer")
		if trainer == "" {
			return nil, fmt.Errorf("trainerconf: %s names no trainer (# trainer: line)", f)
		}
		sc := s.get(trainer)
		switch ext := filepath.Ext(f); ext {
		case ".yaml":
			loadYAML(sc, string(data), directive(string(data), "prefix"))
		case ".txt":
			loadRegistries(sc, string(data))
		case ".py":
			loadPython(sc, string(data))
		default:
			return nil, fmt.Errorf("trainerconf: %s: unknown kind of excerpt %q", f, ext)
		}
	}
	return s, nil
}

func directive(data, name string) string {
	for line := range strings.Lines(data) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "# "+name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var yamlKey = regexp.MustCompile(`^( *)([A-Za-z_][A-Za-z0-9_]*):(.*)$`)

// loadYAML reads the block mappings of a YAML excerpt: indentation, keys,
// "{}" values, comments saying "deprecated" (on the line above a key or
// after it) and "left out".
func loadYAML(sc *Schema, data, prefix string) {
	type level struct {
		indent int
		key    string
	}
	var stack []level
	var comment []string
	for line := range strings.Lines(data) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			comment = append(comment, trimmed)
			continue
		}
		m := yamlKey.FindStringSubmatch(line)
		if m == nil {
			if trimmed == "" {
				comment = nil
			}
			continue // a value's continuation, a list item
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		path := []string{}
		if prefix != "" {
			path = append(path, prefix)
		}
		for _, l := range stack {
			path = append(path, l.key)
		}
		key := strings.Join(append(path, m[2]), ".")
		value, inline, _ := strings.Cut(m[3], "#")
		value = strings.TrimSpace(value)
		kind := Leaf
		switch {
		case strings.Contains(inline, "left out"):
			kind = Omitted
		case value == "{}":
			kind = Open
		case value == "":
			kind = Mapping
		}
		if _, ok := sc.Keys[key]; !ok || kind != Leaf {
			sc.Keys[key] = kind
		}
		for _, c := range append(comment, inline) {
			if strings.Contains(strings.ToLower(c), "deprecated") {
				sc.Deprecated[key] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c), "#"))
			}
		}
		comment = nil
		// A parent named on a line of its own is a mapping.
		for i := range path {
			if p := strings.Join(path[:i+1], "."); sc.Keys[p] == Leaf {
				sc.Keys[p] = Mapping
			}
		}
		stack = append(stack, level{indent, m[2]})
	}
}

var registration = regexp.MustCompile(`^(\S+):\d+: @(register|register_manager|register_manager_legacy)\("([^"]+)"\)`)

// loadRegistries reads the @register lines of the registry excerpt.
func loadRegistries(sc *Schema, data string) {
	for line := range strings.Lines(data) {
		m := registration.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		reg := "legacy"
		if strings.HasPrefix(m[1], "verl/experimental/reward_loop/") && m[2] != "register_manager_legacy" {
			reg = "loop"
		}
		sc.Registries[reg] = append(sc.Registries[reg], m[3])
	}
}

var (
	pyField  = regexp.MustCompile(`^    ([a-z_][a-z0-9_]*): .* = field\(`)
	pyParam  = regexp.MustCompile(`^        ([a-z_][a-z0-9_]*)\b`)
	pyChoice = regexp.MustCompile(`"choices": \[([^\]]*)\]`)
)

// loadPython reads the field definitions of a TRL config class and the
// parameters of its trainer's __init__ ("# class:" says which).
func loadPython(sc *Schema, data string) {
	class, field := "", ""
	for line := range strings.Lines(data) {
		line = strings.TrimRight(line, "\n")
		if v, ok := strings.CutPrefix(line, "# class:"); ok {
			class = strings.TrimSpace(v)
			continue
		}
		switch {
		case strings.HasSuffix(class, "Config"):
			if m := pyField.FindStringSubmatch(line); m != nil {
				field = m[1]
				sc.Fields = append(sc.Fields, field)
			}
			if m := pyChoice.FindStringSubmatch(line); m != nil && field != "" {
				for _, c := range strings.Split(m[1], ",") {
					sc.Choices[field] = append(sc.Choices[field], strings.Trim(strings.TrimSpace(c), `"'`))
				}
			}
		case strings.HasSuffix(class, "Trainer"):
			if m := pyParam.FindStringSubmatch(line); m != nil && m[1] != "self" {
				sc.Params = append(sc.Params, m[1])
			}
		}
	}
}

// Options say what a README's names that are no settings are.
type Options struct {
	// Columns are the column names and dotted column paths of the rows
	// the README describes (reward_model.ground_truth, num_ideas): not
	// settings.
	Columns []string
}

// Problem is one setting a README prints that its trainer does not take.
type Problem struct {
	Line    int    // 1-based line of the README
	Trainer string // the trainer the line is about
	Setting string
	Why     string
}

func (p Problem) String() string {
	return fmt.Sprintf("line %d: %s: %s: %s", p.Line, p.Trainer, p.Setting, p.Why)
}

var (
	verlModule  = regexp.MustCompile(`\bverl\.trainer\.[a-z_]+\b`)
	trlTrainer  = regexp.MustCompile(`\b(SFTTrainer|GRPOTrainer)\b`)
	override    = regexp.MustCompile(`^(\+{0,2})([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)(?:=(.*))?$`)
	codeSpan    = regexp.MustCompile("`([^`]+)`")
	snakeName   = regexp.MustCompile(`^([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:=(.*))?$`)
	trlCall     = regexp.MustCompile(`\b(SFTConfig|GRPOConfig|SFTTrainer|GRPOTrainer)\(`)
	trlCallName = map[string]string{"SFTConfig": "SFTTrainer", "GRPOConfig": "GRPOTrainer", "SFTTrainer": "SFTTrainer", "GRPOTrainer": "GRPOTrainer"}
)

// Check returns the settings readme prints that the recorded trainers do
// not take, and the settings it checked (so a test can tell a README with
// nothing wrong from one the check did not read).
func (s Schemas) Check(readme string, opts Options) (problems []Problem, checked []string) {
	c := &checker{s: s, columns: opts.Columns}
	lines := strings.Split(readme, "\n")
	mains := sectionTrainers(lines)
	inCode, lang := false, ""
	var command []int // the lines of a shell command being continued
	var pyBlock []string
	pyStart := 0
	for i, line := range lines {
		n := i + 1
		c.main = mains[i]
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			if inCode && lang == "python" {
				c.python(strings.Join(pyBlock, "\n"), pyStart)
			}
			inCode, lang, pyBlock, command = !inCode, strings.TrimSpace(fence), nil, nil
			pyStart = n + 1
			continue
		}
		switch {
		case inCode && lang == "python":
			pyBlock = append(pyBlock, line)
		case inCode:
			command = append(command, n)
			if !strings.HasSuffix(strings.TrimSpace(line), "\\") {
				c.shell(lines, command)
				command = nil
			}
		default:
			c.prose(line, n)
			// Inline calls in prose: SFTConfig(max_length=N).
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				if trlCall.MatchString(m[1]) {
					c.python(m[1], n)
				}
			}
		}
	}
	return c.problems, c.checked
}

type checker struct {
	s        Schemas
	main     string
	columns  []string
	problems []Problem
	checked  []string
}

func (c *checker) add(line int, trainer, setting, format string, args ...any) {
	c.problems = append(c.problems, Problem{line, trainer, setting, fmt.Sprintf(format, args...)})
}

// sectionTrainers gives each line the trainer of the first code block of
// its section (from one "#" heading to the next) that names one: the
// trainer the section's prose is about.
func sectionTrainers(lines []string) []string {
	out := make([]string, len(lines))
	start, main, inCode := 0, "", false
	flush := func(end int) {
		for i := start; i < end; i++ {
			out[i] = main
		}
	}
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			continue
		}
		if !inCode && strings.HasPrefix(t, "#") {
			flush(i)
			start, main = i, ""
			continue
		}
		if !inCode || main != "" {
			continue
		}
		if m := verlModule.FindString(line); m != "" {
			main = m
		} else if m := trlCall.FindStringSubmatch(line); m != nil {
			main = trlCallName[m[1]]
		}
	}
	flush(len(lines))
	return out
}

// lineTrainer is the trainer a line names, or its section's.
func (c *checker) lineTrainer(line string) string {
	if m := verlModule.FindString(line); m != "" {
		return m
	}
	if m := trlTrainer.FindString(line); m != "" {
		return m
	}
	return c.main
}

// shell checks one command of a shell block (its lines, joined at their
// backslashes): the verl overrides of a command that runs verl.
func (c *checker) shell(lines []string, command []int) {
	trainer := ""
	var words []struct {
		w    string
		line int
	}
	for _, n := range command {
		line := strings.TrimSuffix(strings.TrimSpace(lines[n-1]), "\\")
		if m := verlModule.FindString(line); m != "" && trainer == "" {
			trainer = m
		}
		// A comment of the command line names settings too.
		code, comment, _ := strings.Cut(line, "#")
		for _, w := range strings.Fields(code) {
			words = append(words, struct {
				w    string
				line int
			}{w, n})
		}
		if comment != "" {
			c.spans(comment, []string{comment}, n)
		}
	}
	if trainer == "" {
		return
	}
	var set []setting
	for _, w := range words {
		if m := override.FindStringSubmatch(w.w); m != nil && strings.Contains(w.w, "=") {
			set = append(set, setting{m[1], m[2], m[3], w.line})
		}
	}
	c.verl(trainer, set)
}

type setting struct {
	prefix, key, value string
	line               int
}

// prose checks the settings a line of text names in its code spans.
func (c *checker) prose(line string, n int) {
	var spans []string
	for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
		spans = append(spans, m[1])
	}
	c.spans(line, spans, n)
}

// spans checks the settings named in spans of line n.
func (c *checker) spans(line string, spans []string, n int) {
	trainer := c.lineTrainer(line)
	sc := c.s[trainer]
	if sc == nil {
		return
	}
	for _, span := range spans {
		if trlCall.MatchString(span) {
			continue // a call: checked as Python
		}
		var set []setting
		for _, w := range strings.Fields(span) {
			if strings.HasPrefix(trainer, "verl.") {
				o := override.FindStringSubmatch(w)
				if o == nil || slices.Contains(c.columns, o[2]) {
					continue
				}
				section, _, _ := strings.Cut(o[2], ".")
				if _, ok := sc.Keys[section]; !ok {
					continue // not a key of this trainer's sections (a column, a module path)
				}
				set = append(set, setting{o[1], o[2], o[3], n})
				continue
			}
			if o := snakeName.FindStringSubmatch(w); o != nil && !slices.Contains(c.columns, o[1]) {
				c.trl(trainer, "", o[1], o[2], n)
			}
		}
		if len(set) > 0 {
			c.verl(trainer, set)
		}
	}
}

// verl checks the overrides of one command (or one code span) of trainer.
func (c *checker) verl(trainer string, set []setting) {
	sc := c.s[trainer]
	if sc == nil {
		if len(set) > 0 {
			c.add(set[0].line, trainer, set[0].key, "no recorded configuration of %s", trainer)
		}
		return
	}
	useLoop := true
	for _, st := range set {
		if st.key == "reward_model.use_reward_loop" && strings.EqualFold(st.value, "false") {
			useLoop = false
		}
	}
	for _, st := range set {
		c.checked = append(c.checked, st.prefix+st.key)
		kind, known := sc.Keys[st.key]
		switch {
		case st.prefix == "+" && known:
			c.add(st.line, trainer, "+"+st.key, "Hydra refuses to append a key that exists: drop the +")
			continue
		case st.prefix == "+" || st.prefix == "++" && !known:
			parent := st.key
			for {
				i := strings.LastIndexByte(parent, '.')
				if i < 0 {
					c.add(st.line, trainer, st.prefix+st.key, "no recorded section to add it to")
					break
				}
				parent = parent[:i]
				if k, ok := sc.Keys[parent]; ok {
					if k == Leaf || k == Omitted {
						c.add(st.line, trainer, st.prefix+st.key, "%s is not a recorded mapping", parent)
					}
					break
				}
			}
			continue
		case !known:
			if p := omittedParent(sc, st.key); p != "" {
				c.add(st.line, trainer, st.key, "in %s, which the excerpt left out: record it", p)
			} else {
				c.add(st.line, trainer, st.key, "no such key")
			}
			continue
		case kind == Mapping || kind == Omitted:
			if st.value != "" {
				c.add(st.line, trainer, st.key, "is a mapping, not a value")
			}
		}
		if why, ok := sc.Deprecated[st.key]; ok {
			c.add(st.line, trainer, st.key, "deprecated (%q)", why)
		}
		if st.key == "reward_manager.name" || st.key == "reward_model.reward_manager" {
			reg := map[bool]string{true: "loop", false: "legacy"}[useLoop]
			if st.value != "" && !slices.Contains(sc.Registries[reg], st.value) {
				c.add(st.line, trainer, st.key+"="+st.value, "the %s registry holds no %q (it holds %s)", reg, st.value, strings.Join(sc.Registries[reg], ", "))
			}
		}
	}
}

func omittedParent(sc *Schema, key string) string {
	for p := key; strings.Contains(p, "."); {
		p = p[:strings.LastIndexByte(p, '.')]
		if sc.Keys[p] == Omitted {
			return p
		}
		if _, ok := sc.Keys[p]; ok {
			return ""
		}
	}
	return ""
}

// python checks the keyword arguments of the TRL calls in code.
func (c *checker) python(code string, line int) {
	for _, loc := range trlCall.FindAllStringSubmatchIndex(code, -1) {
		name := code[loc[2]:loc[3]]
		args, ok := callArgs(code[loc[1]:])
		at := line + strings.Count(code[:loc[0]], "\n")
		if !ok {
			c.add(at, trlCallName[name], name, "the call's parentheses do not close")
			continue
		}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || !snakeLike(k) {
				continue // positional
			}
			c.trl(trlCallName[name], name, strings.TrimSpace(k), strings.TrimSpace(v), at)
		}
	}
}

func snakeLike(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// callArgs splits the text after a call's "(" into its top-level
// arguments, up to the matching ")".
func callArgs(s string) ([]string, bool) {
	depth, start := 0, 0
	var out []string
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '(' || ch == '[' || ch == '{':
			depth++
		case ch == ')' || ch == ']' || ch == '}':
			if depth == 0 {
				return append(out, strings.TrimSpace(stripComments(s[start:i]))), true
			}
			depth--
		case ch == ',' && depth == 0:
			out = append(out, strings.TrimSpace(stripComments(s[start:i])))
			start = i + 1
		}
	}
	return nil, false
}

func stripComments(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l + " ")
	}
	return b.String()
}

// trl checks one TRL setting: a field of the trainer's config (call is
// the config class, or "" in prose) or a parameter of the trainer (call
// is the trainer), and a value among the field's choices.
func (c *checker) trl(trainer, call, name, value string, line int) {
	sc := c.s[trainer]
	if sc == nil {
		c.add(line, trainer, name, "no recorded configuration of %s", trainer)
		return
	}
	c.checked = append(c.checked, cmp.Or(call, trainer)+"."+name)
	isField, isParam := slices.Contains(sc.Fields, name), slices.Contains(sc.Params, name)
	switch {
	case strings.HasSuffix(call, "Trainer") && !isParam:
		c.add(line, trainer, call+"("+name+"=)", "%s takes no parameter %s (recorded: %s)", call, name, strings.Join(sc.Params, ", "))
		return
	case strings.HasSuffix(call, "Config") && !isField:
		c.add(line, trainer, call+"("+name+"=)", "no recorded field %s of %s", name, call)
		return
	case call == "" && !isField && !isParam:
		c.add(line, trainer, name, "no recorded field or parameter of %s", trainer)
		return
	}
	if ch := sc.Choices[name]; len(ch) > 0 && value != "" {
		if v := strings.Trim(value, `"'`); !slices.Contains(ch, v) {
			c.add(line, trainer, name+"="+value, "not one of %s", strings.Join(ch, ", "))
		}
	}
}
