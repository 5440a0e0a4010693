// Package prompts loads the versioned prompt templates that LLM stages
// embed in the binary, and renders them.
//
// A prompt file has front matter with a version, then a [system] and a
// [user] section, each a text/template:
//
//	---
//	version: classify-v1
//	description: which references are the target's sources
//	---
//	[system]
//	You classify the references of a scientific paper.
//	[user]
//	Title: {{.Title}}
//	{{range .Refs}}[{{.N}}] {{.Text}}
//	{{end}}
//
// The version is what a stage records on every output and what keys the
// LLM cache: change the prompt's meaning, bump the version. The section
// markers must stand alone on their line; [system] is optional, [user] is
// required. Templates fail on a missing map key and may use the functions
// json (marshal a value) and join (strings.Join). Template data is text
// from papers: text/template never executes it, so a paper cannot change
// the prompt's structure.
package prompts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/template"
	"unicode"
)

// Prompt is a parsed prompt file.
type Prompt struct {
	Name    string            // file name it was loaded from
	Version string            // the front matter's version
	Meta    map[string]string // other front-matter keys, e.g. description
	// Digest is the hex SHA-256 of the file, to spot a template edited
	// without a version bump.
	Digest string
	system *template.Template // nil without a [system] section
	user   *template.Template
}

// Load reads and parses the prompt file name from fsys (an embed.FS in the
// stages).
func Load(fsys fs.FS, name string) (*Prompt, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("load prompt: %w", err)
	}
	p, err := Parse(name, data)
	if err != nil {
		return nil, fmt.Errorf("load prompt: %w", err)
	}
	return p, nil
}

// Parse parses a prompt file's content; name is used in errors and
// template names.
func Parse(name string, data []byte) (*Prompt, error) {
	sum := sha256.Sum256(data)
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	p := &Prompt{Name: name, Digest: hex.EncodeToString(sum[:]), Meta: map[string]string{}}

	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, fmt.Errorf("parse prompt %s: want front matter opening with a --- line", name)
	}
	front, body, ok := cutLine(rest, "---")
	if !ok {
		return nil, fmt.Errorf("parse prompt %s: front matter has no closing --- line", name)
	}
	for i, line := range strings.Split(front, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("parse prompt %s: front matter line %d: want key: value", name, i+2)
		}
		if k == "version" {
			p.Version = v
		} else {
			p.Meta[k] = v
		}
	}
	if err := checkVersion(p.Version); err != nil {
		return nil, fmt.Errorf("parse prompt %s: %w", name, err)
	}

	sections, err := splitSections(body)
	if err != nil {
		return nil, fmt.Errorf("parse prompt %s: %w", name, err)
	}
	funcs := template.FuncMap{"json": toJSON, "join": strings.Join}
	for sec, src := range sections {
		t, err := template.New(name + ":" + sec).Option("missingkey=error").Funcs(funcs).Parse(src)
		if err != nil {
			return nil, fmt.Errorf("parse prompt %s: [%s]: %w", name, sec, err)
		}
		if sec == "system" {
			p.system = t
		} else {
			p.user = t
		}
	}
	if p.user == nil {
		return nil, fmt.Errorf("parse prompt %s: no [user] section", name)
	}
	return p, nil
}

// Render executes the templates with data and returns the system and user
// prompts, trimmed of surrounding blank space.
func (p *Prompt) Render(data any) (system, user string, err error) {
	if p.system != nil {
		if system, err = execute(p.system, data); err != nil {
			return "", "", fmt.Errorf("render prompt %s (%s): [system]: %w", p.Name, p.Version, err)
		}
	}
	if user, err = execute(p.user, data); err != nil {
		return "", "", fmt.Errorf("render prompt %s (%s): [user]: %w", p.Name, p.Version, err)
	}
	return system, user, nil
}

func execute(t *template.Template, data any) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// cutLine splits s around the first line that equals marker.
func cutLine(s, marker string) (before, after string, ok bool) {
	off := 0
	for off <= len(s) {
		end := strings.IndexByte(s[off:], '\n')
		line := s[off:]
		if end >= 0 {
			line = s[off : off+end]
		}
		if strings.TrimRight(line, " \t") == marker {
			if end < 0 {
				return s[:off], "", true
			}
			return s[:off], s[off+end+1:], true
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return s, "", false
}

// splitSections cuts the body at its [system] and [user] marker lines.
func splitSections(body string) (map[string]string, error) {
	out := map[string]string{}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur != "" {
			out[cur] = b.String()
		}
		b.Reset()
	}
	for i, line := range strings.SplitAfter(body, "\n") {
		switch m := strings.TrimSpace(line); m {
		case "[system]", "[user]":
			sec := m[1 : len(m)-1]
			if _, dup := out[sec]; dup || sec == cur {
				return nil, fmt.Errorf("body line %d: second [%s] section", i+1, sec)
			}
			if sec == "system" && cur == "user" {
				return nil, fmt.Errorf("body line %d: [system] must come before [user]", i+1)
			}
			flush()
			cur = sec
			continue
		}
		if cur == "" {
			if strings.TrimSpace(line) != "" {
				return nil, fmt.Errorf("body line %d: text before the first [system] or [user] line", i+1)
			}
			continue
		}
		b.WriteString(line)
	}
	flush()
	return out, nil
}

func checkVersion(v string) error {
	if v == "" {
		return errors.New("front matter has no version")
	}
	for _, r := range v {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("version %q contains a space or control character", v)
		}
	}
	return nil
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
