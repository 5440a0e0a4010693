// Package tokenizer counts tokens the way a Hugging Face tokenizer does,
// from its tokenizer.json alone, so that the SFT length filter can drop
// sequences by the trainer's own count without Python.
//
// It implements the parts of the tokenizers library that the tokenizers of
// current open models are built from:
//
//   - models: BPE (byte-level, as in GPT-2, Llama 3, Qwen 2/3 and OLMo;
//     ignore_merges and byte_fallback honored) and WordPiece (BERT);
//   - normalizers: NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace,
//     Prepend, BertNormalizer and Sequence;
//   - pre-tokenizers: ByteLevel, Split (string or regex patterns, the
//     Isolated and Removed behaviours), Whitespace, WhitespaceSplit,
//     Digits, BertPreTokenizer and Sequence;
//   - added tokens, which are matched literally before anything else and
//     count as one token each.
//
// Split patterns are Oniguruma regexes in tokenizer.json; they are run
// with Go's regexp, whose leftmost-first matching chooses what a
// backtracking engine chooses. The one construct RE2 lacks that these
// patterns use, the lookahead of `\s+(?!\S)`, is emulated; `\s` is widened
// to Unicode white space as Oniguruma has it. A tokenizer.json with any
// other component (Metaspace, Unigram, a lookbehind, …) is refused by
// Parse with an error naming it, rather than counted approximately.
//
// Post-processors (BOS/EOS templates) and chat templates are not applied:
// Count counts the text's own tokens.
package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Tokenizer encodes text into token ids. It is safe for concurrent use.
type Tokenizer struct {
	added     []addedToken // longest content first
	firsts    [256][]int   // indexes into added by the first byte of the content
	normalize func(string) string
	pretok    []pretokenizer
	byteLevel bool // pieces are mapped to the byte-level alphabet before the model
	model     model

	mu    sync.Mutex
	cache map[string][]int // piece -> ids
}

type addedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// model turns one pre-tokenized piece into ids.
type model interface {
	encode(piece string) []int
}

// maxCache bounds the per-piece cache; pieces repeat (words), so a
// moderate cache holds most of a corpus's hits.
const maxCache = 1 << 17

// Load reads a Hugging Face tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return t, nil
}

type fileJSON struct {
	AddedTokens  []addedToken    `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// Parse reads the content of a tokenizer.json file.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	t := &Tokenizer{cache: map[string][]int{}}
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: normalizer: %w", err)
	}
	if t.pretok, t.byteLevel, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: pre_tokenizer: %w", err)
	}
	if t.model, err = parseModel(f.Model, t.byteLevel); err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: model: %w", err)
	}
	for _, a := range f.AddedTokens {
		if a.Content != "" {
			t.added = append(t.added, a)
		}
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].Content) > len(t.added[j].Content) })
	for k, a := range t.added {
		t.firsts[a.Content[0]] = append(t.firsts[a.Content[0]], k)
	}
	return t, nil
}

// Encode returns the token ids of text, without special tokens a
// post-processor would add.
func (t *Tokenizer) Encode(text string) []int {
	var ids []int
	for _, seg := range t.splitAdded(text) {
		if seg.added != nil {
			ids = append(ids, seg.added.ID)
			continue
		}
		pieces := []string{t.normalize(seg.text)}
		for _, p := range t.pretok {
			var next []string
			for _, s := range pieces {
				next = append(next, p(s)...)
			}
			pieces = next
		}
		for _, p := range pieces {
			if p == "" {
				continue
			}
			if t.byteLevel {
				p = toByteLevel(p)
			}
			ids = append(ids, t.encodePiece(p)...)
		}
	}
	return ids
}

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text string) int { return len(t.Encode(text)) }

func (t *Tokenizer) encodePiece(p string) []int {
	t.mu.Lock()
	ids, ok := t.cache[p]
	t.mu.Unlock()
	if ok {
		return ids
	}
	ids = t.model.encode(p)
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[p] = ids
	t.mu.Unlock()
	return ids
}

type segment struct {
	text  string
	added *addedToken
}

// splitAdded cuts text at every occurrence of an added token, leftmost
// first and the longest token at a position.
func (t *Tokenizer) splitAdded(text string) []segment {
	if len(t.added) == 0 {
		return []segment{{text: text}}
	}
	var out []segment
	start := 0
	for i := 0; i < len(text); {
		var hit *addedToken
		for _, k := range t.firsts[text[i]] {
			if strings.HasPrefix(text[i:], t.added[k].Content) {
				hit = &t.added[k]
				break
			}
		}
		if hit == nil {
			i++
			continue
		}
		if start < i {
			out = append(out, segment{text: text[start:i]})
		}
		out = append(out, segment{added: hit})
		i += len(hit.Content)
		start = i
	}
	if start < len(text) {
		out = append(out, segment{text: text[start:]})
	}
	return out
}

// typed reads the "type" of a component.
func typed(raw json.RawMessage) (string, error) {
	var h struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", err
	}
	if h.Type == "" {
		return "", errors.New("component without a type")
	}
	return h.Type, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
