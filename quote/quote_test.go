package quote_test

import (
	"testing"

	"github.com/groundwork/curate/quote"
	"github.com/groundwork/curate/record"
)

func TestVerifierFind(t *testing.T) {
	const text = "Transformers need multi-\nple heads [3]. The model\u2014unlike RNNs\u2014uses \u201cattention\u201d only.\n\n" +
		"It is the \ufb01rst such model, see [5]\u2019s results. Pre- and post-training matter.\n\n" +
		"Softmax has extremely small gradients . To counteract this, heads, by ORES; and (not) here at a rate of 3 . 5 per cent."
	v := quote.New(text)
	tests := []struct {
		name, quote string
		want        string // "" = no match
	}{
		{"exact", "The model\u2014unlike RNNs\u2014uses", "The model\u2014unlike RNNs\u2014uses"},
		{"whitespace", "  The   model\u2014unlike\nRNNs\u2014uses  ", "The model\u2014unlike RNNs\u2014uses"},
		{"hyphenation in the text", "Transformers need multiple heads [3].", "Transformers need multi-\nple heads [3]."},
		{"hyphenation in the quote", "need multi- ple heads", "need multi-\nple heads"},
		{"dashes folded", "The model-unlike RNNs-uses", "The model\u2014unlike RNNs\u2014uses"},
		{"en dash", "The model\u2013unlike RNNs\u2013uses", "The model\u2014unlike RNNs\u2014uses"},
		{"quotes folded", `uses "attention" only.`, "uses \u201cattention\u201d only."},
		{"apostrophe folded", "see [5]'s results.", "see [5]\u2019s results."},
		{"ligature", "It is the first such model", "It is the \ufb01rst such model"},
		{"across paragraphs", "only. It is the", "only.\n\nIt is the"},
		{"kept hyphen before a capital", "Pre- and post-training matter.", "Pre- and post-training matter."},
		{"case differs", "the model\u2014unlike RNNs\u2014uses", ""},
		// Where a conversion took out a footnote mark or a citation key it
		// left a space before the punctuation: a model types it back
		// without, and with it a quote of the text that has none matches.
		{"space before punctuation in the text", "extremely small gradients. To counteract", "extremely small gradients . To counteract"},
		{"space before punctuation in the quote", "heads , by ORES ; and ( not ) here", "heads, by ORES; and (not) here"},
		{"a space is no period", "rate of 3.5 per cent", ""},
		{"punctuation still counts", "extremely small gradients To counteract", ""},
		{"word changed", "The model\u2014like RNNs\u2014uses", ""},
		{"ellipsis join", "Transformers need … heads [3].", ""},
		{"too short", "The model", ""},
		{"empty", "   ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := v.Find(tt.quote)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("Find(%q) = %q, %v; want %q", tt.quote, got, ok, tt.want)
			}
		})
	}
}

// TestVerifierText checks what counts as the target's text: its prose
// (title, abstract, sections), table captions and citing sentences
// (footnotes, figure captions), never the bibliography or S2 contexts,
// even where the page's FullText holds the bibliography.
func TestVerifierText(t *testing.T) {
	title := "Title"
	doc := &record.Document{
		Title: &title, Abstract: "We study routers.",
		FullText:   "Title\n\nAbstract\nWe study routers.\n\nReferences\nThe original router paper, 2020.",
		Tables:     []record.Table{{Caption: "Results of all routers on the test set."}},
		Mentions:   []record.Mention{{RefKeys: []string{"bib.bib1"}, Sentence: "A footnote cites the original router [1].", SectionID: "S1"}},
		References: []record.Reference{{Key: "bib.bib1", Text: "The original router paper, 2020."}},
	}
	v := quote.ForDocument(doc)
	for q, want := range map[string]bool{
		"We study routers.":                 true,
		"all routers on the test set":       true,
		"cites the original router [1]":     true,
		"The original router paper, 2020.":  false,
		"Abstract We study routers.":        true,
		"routers. Results of all routers":   false, // the pieces are separate texts
		"A footnote cites the original one": false,
	} {
		if _, ok := v.Find(q); ok != want {
			t.Errorf("Find(%q) = %v, want %v", q, ok, want)
		}
	}
	if _, ok := quote.ForDocument(nil).Find("any quote at all"); ok {
		t.Error("a nil document verified a quote")
	}
}
