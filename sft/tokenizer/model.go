package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

func parseModel(raw json.RawMessage, byteLevel bool) (model, error) {
	if isNull(raw) {
		return nil, errors.New("no model")
	}
	typ, err := typed(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "BPE":
		return parseBPE(raw)
	case "WordPiece":
		return parseWordPiece(raw)
	}
	return nil, fmt.Errorf("unsupported model %q", typ)
}

// bpe is a byte-pair-encoding model.
type bpe struct {
	vocab        map[string]int
	ranks        map[string]int // "left right" -> merge rank
	unk          int            // -1: none
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
}

func parseBPE(raw json.RawMessage) (*bpe, error) {
	var c struct {
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		UnkToken     *string           `json:"unk_token"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
		FuseUnk      bool              `json:"fuse_unk"`
		ByteFallback bool              `json:"byte_fallback"`
		IgnoreMerges bool              `json:"ignore_merges"`
		Dropout      *float64          `json:"dropout"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("model BPE: %w", err)
	}
	if c.Prefix != nil && *c.Prefix != "" || c.Suffix != nil && *c.Suffix != "" {
		return nil, errors.New("model BPE: continuing_subword_prefix and end_of_word_suffix are not supported")
	}
	if c.Dropout != nil && *c.Dropout > 0 {
		return nil, errors.New("model BPE: dropout makes counts random; not supported")
	}
	m := &bpe{vocab: c.Vocab, ranks: make(map[string]int, len(c.Merges)), unk: -1,
		fuseUnk: c.FuseUnk, byteFallback: c.ByteFallback, ignoreMerges: c.IgnoreMerges}
	for i, mr := range c.Merges {
		// "left right" (older files) or ["left", "right"].
		var s string
		if json.Unmarshal(mr, &s) == nil {
			l, r, ok := strings.Cut(s, " ")
			if !ok || strings.Contains(r, " ") {
				return nil, fmt.Errorf("model BPE: merge %d %q: want two symbols", i, s)
			}
			m.ranks[l+" "+r] = i
			continue
		}
		var pair []string
		if err := json.Unmarshal(mr, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("model BPE: merge %d: want \"a b\" or [a, b]", i)
		}
		m.ranks[pair[0]+" "+pair[1]] = i
	}
	if c.UnkToken != nil {
		id, ok := c.Vocab[*c.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model BPE: unk_token %q is not in the vocabulary", *c.UnkToken)
		}
		m.unk = id
	}
	return m, nil
}

func (m *bpe) encode(piece string) []int {
	if m.ignoreMerges {
		if id, ok := m.vocab[piece]; ok {
			return []int{id}
		}
	}
	syms := make([]string, 0, utf8.RuneCountInString(piece))
	for _, r := range piece {
		syms = append(syms, string(r))
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := m.ranks[syms[i]+" "+syms[i+1]]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		l, r := syms[at], syms[at+1]
		// Merge every occurrence of the best pair, left to right.
		out := syms[:0:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == l && syms[i+1] == r {
				out = append(out, l+r)
				i++
				continue
			}
			out = append(out, syms[i])
		}
		syms = out
	}
	ids := make([]int, 0, len(syms))
	lastUnk := false
	for _, s := range syms {
		if id, ok := m.vocab[s]; ok {
			ids, lastUnk = append(ids, id), false
			continue
		}
		if m.byteFallback {
			fell := true
			var bytes []int
			for i := 0; i < len(s); i++ {
				id, ok := m.vocab[fmt.Sprintf("<0x%02X>", s[i])]
				if !ok {
					fell = false
					break
				}
				bytes = append(bytes, id)
			}
			if fell {
				ids, lastUnk = append(ids, bytes...), false
				continue
			}
		}
		if m.fuseUnk && lastUnk {
			continue
		}
		ids, lastUnk = append(ids, m.unk), true // -1 without an unk token: still one token
	}
	return ids
}

// wordPiece is BERT's greedy longest-match-first model.
type wordPiece struct {
	vocab   map[string]int
	unk     int
	prefix  string
	maxWord int
}

func parseWordPiece(raw json.RawMessage) (*wordPiece, error) {
	c := struct {
		Vocab    map[string]int `json:"vocab"`
		UnkToken string         `json:"unk_token"`
		Prefix   *string        `json:"continuing_subword_prefix"`
		MaxChars int            `json:"max_input_chars_per_word"`
	}{}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("model WordPiece: %w", err)
	}
	unk, ok := c.Vocab[c.UnkToken]
	if !ok {
		return nil, fmt.Errorf("model WordPiece: unk_token %q is not in the vocabulary", c.UnkToken)
	}
	m := &wordPiece{vocab: c.Vocab, unk: unk, prefix: "##", maxWord: 100}
	if c.Prefix != nil {
		m.prefix = *c.Prefix
	}
	if c.MaxChars > 0 {
		m.maxWord = c.MaxChars
	}
	return m, nil
}

func (m *wordPiece) encode(word string) []int {
	if utf8.RuneCountInString(word) > m.maxWord {
		return []int{m.unk}
	}
	var ids []int
	for start := 0; start < len(word); {
		end, id := len(word), -1
		for end > start {
			sub := word[start:end]
			if start > 0 {
				sub = m.prefix + sub
			}
			if v, ok := m.vocab[sub]; ok {
				id = v
				break
			}
			_, w := utf8.DecodeLastRuneInString(word[start:end])
			end -= w
		}
		if id < 0 {
			return []int{m.unk}
		}
		ids = append(ids, id)
		start = end
	}
	return ids
}
