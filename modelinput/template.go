// Package modelinput is the one template that renders a target's model
// input: an instruction asking for K idea cards, then the numbered source
// cards. The dataset stage renders every instance's prompt with it, SFT
// re-renders a prompt for another K, and a live model gets the same text.
package modelinput

import (
	"embed"
	"fmt"

	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/record"
)

// templateFile is the one template that renders every model input, for
// training and for live inference alike; its front-matter version is
// recorded in each instance's provenance (prompt_versions.dataset).
const templateFile = "templates/model-input.prompt"

//go:embed templates/model-input.prompt
var templateFS embed.FS

// Template renders the model input: an instruction asking for K idea
// cards, then the numbered source cards ("Document 1", "Document 2", ...).
// It has no access to the gold card, by construction: its data carries
// source cards only.
type Template struct {
	p    *prompts.Prompt
	text string
}

// Load parses the embedded model-input template.
func Load() (*Template, error) {
	data, err := templateFS.ReadFile(templateFile)
	if err != nil {
		return nil, fmt.Errorf("load model-input template: %w", err)
	}
	p, err := prompts.Parse(templateFile, data)
	if err != nil {
		return nil, fmt.Errorf("load model-input template: %w", err)
	}
	return &Template{p: p, text: string(data)}, nil
}

// Version returns the template's version, e.g. "model-input-v2".
func (t *Template) Version() string { return t.p.Version }

// Text returns the template file as embedded, front matter included.
func (t *Template) Text() string { return t.text }

// promptData is what the template sees: the number of ideas asked for
// and the sources as record.PromptDocument shows them (no inspiration).
type promptData struct {
	NumIdeas  int
	Documents []record.PromptDocument
}

// Render returns the model input for sources, numbered by their
// DocNumber, asking for numIdeas ideas.
func (t *Template) Render(sources []record.InstanceSource, numIdeas int) (string, error) {
	if numIdeas < 1 {
		return "", fmt.Errorf("render model input: num ideas %d, want at least 1", numIdeas)
	}
	d := promptData{NumIdeas: numIdeas, Documents: record.PromptDocuments(sources)}
	for i := range d.Documents {
		if d.Documents[i].Title == "" {
			d.Documents[i].Title = "(untitled)"
		}
	}
	_, user, err := t.p.Render(d)
	if err != nil {
		return "", fmt.Errorf("render model input: %w", err)
	}
	return user, nil
}
