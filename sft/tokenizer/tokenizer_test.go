package tokenizer

import (
	"reflect"
	"strings"
	"testing"
)

func load(t *testing.T, name string) *Tokenizer {
	t.Helper()
	tok, err := Load("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestPreTokenizeQwenPattern(t *testing.T) {
	tok := load(t, "bpe-tokenizer.json")
	tests := []struct {
		in   string
		want []string
	}{
		// \s*[\r\n]+ takes the newlines; \s+(?!\S) leaves the space
		// before a word to the word.
		{"the thin\n\n  x", []string{"the", " thin", "\n\n", " ", " x"}},
		{"a  ", []string{"a", "  "}},                         // white space at the end: all of it
		{"I'm 42!", []string{"I", "'m", " ", "4", "2", "!"}}, // single digits, contractions
		{"x\u00a0y", []string{"x", "\u00a0y"}},               // NBSP is white space to Oniguruma and to us
		{"(a)\n", []string{"(a", ")\n"}},                     // an optional non-letter joins the letters
	}
	for _, tt := range tests {
		pieces := []string{tt.in}
		for _, p := range tok.pretok {
			var next []string
			for _, s := range pieces {
				next = append(next, p(s)...)
			}
			pieces = next
		}
		// The Split cuts; ByteLevel (use_regex false) maps bytes later.
		if !reflect.DeepEqual(pieces, tt.want) {
			t.Errorf("pre-tokenize %q = %q, want %q", tt.in, pieces, tt.want)
		}
	}
}

func TestEncodeBPE(t *testing.T) {
	tok := load(t, "bpe-tokenizer.json")
	tests := []struct {
		in   string
		want []int
	}{
		// "the" -> t,he -> the; " thin" -> Ġt,h,in; "\n\n" -> Ċ,Ċ; " "; " x" -> Ġ,x
		{"the thin\n\n  x", []int{262, 257, 'h', 259, 0x0A, 0x0A, 0x20, 0x20, 'x'}},
		{" the", []int{258}},
		{"<think>hi</think>", []int{300, 'h', 'i', 301}},
		{"", nil},
		{"é", []int{0xC3, 0xA9}}, // two bytes, no merge
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if n := tok.Count(tt.in); n != len(tt.want) {
			t.Errorf("Count(%q) = %d, want %d", tt.in, n, len(tt.want))
		}
	}
	// NFC: a decomposed é counts like the composed one.
	if a, b := tok.Count("e\u0301"), tok.Count("é"); a != b {
		t.Errorf("decomposed é: %d tokens, composed %d", a, b)
	}
}

func TestEncodeGPT2(t *testing.T) {
	tok := load(t, "gpt2-tokenizer.json")
	// GPT-2's regex: " the" is one piece; two spaces before a word leave
	// one to stand alone.
	if got, want := tok.Encode("the  the"), []int{262, 0x20, 258}; !reflect.DeepEqual(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
	// No added tokens here: "<think>" is "<", "think" (t, h, in, k), ">".
	if got, want := tok.Encode("<think>"), []int{'<', 't', 'h', 259, 'k', '>'}; !reflect.DeepEqual(got, want) {
		t.Errorf("Encode(<think>) = %v, want %v", got, want)
	}
}

func TestEncodeWordPiece(t *testing.T) {
	tok := load(t, "wordpiece-tokenizer.json")
	tests := []struct {
		in   string
		want []int
	}{
		{"Unaffable, hello!", []int{1, 2, 3, 5, 4, 6}},
		{"xyz hello", []int{0, 4}},
		{"Café", []int{7}}, // lowercased, accent stripped
		{strings.Repeat("a", 101), []int{0}},
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"metaspace", `{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"BPE","vocab":{},"merges":[]}}`, `unsupported pre-tokenizer "Metaspace"`},
		{"unigram", `{"model":{"type":"Unigram","vocab":[]}}`, `unsupported model "Unigram"`},
		{"lookbehind", `{"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated"},"model":{"type":"BPE","vocab":{},"merges":[]}}`, "lookaround"},
		{"bad merge", `{"model":{"type":"BPE","vocab":{},"merges":["abc"]}}`, "want two symbols"},
		{"not json", `{`, "parse tokenizer.json"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v, want an error mentioning %q", tt.name, err, tt.want)
		}
	}
	if _, err := Load("testdata/none.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}
