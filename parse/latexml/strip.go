package latexml

import "bytes"

// stripMath returns page with the content of every <math> element that
// carries an alttext attribute removed, keeping the start tag, and the
// number of ltx_ERROR elements (unconverted macros) the removed MathML
// held. The parser reads math only from alttext, and MathML is most of the
// markup of a math-heavy page: tokenizing it would cost most of the parse
// time. Math elements do not nest, so the first "</math>" closes the
// element.
func stripMath(page []byte) ([]byte, int) {
	open, closeTag := []byte("<math"), []byte("</math>")
	i := bytes.Index(page, open)
	if i < 0 {
		return page, 0
	}
	errors := 0
	out := make([]byte, 0, len(page))
	for i >= 0 {
		// The start tag ends at the first '>' outside quotes.
		end := tagEnd(page, i)
		if end < 0 {
			break
		}
		start := page[i:end]
		c := bytes.Index(page[end:], closeTag)
		if c < 0 || !bytes.Contains(start, []byte("alttext=")) || start[len(start)-2] == '/' {
			out = append(out, page[:end]...)
			page = page[end:]
		} else {
			out = append(out, page[:end]...)
			errors += countErrorClasses(page[end : end+c])
			page = page[end+c:]
		}
		if len(page) == 0 {
			break // "<math>" ends the page
		}
		next := bytes.Index(page[1:], open)
		if next < 0 {
			break
		}
		out = append(out, page[:next+1]...)
		page = page[next+1:]
		i = 0
	}
	return append(out, page...), errors
}

// countErrorClasses counts the "ltx_ERROR" class tokens in markup.
func countErrorClasses(b []byte) int {
	tok := []byte("ltx_ERROR")
	n := 0
	for {
		i := bytes.Index(b, tok)
		if i < 0 {
			return n
		}
		end := i + len(tok)
		if i > 0 && isClassSep(b[i-1]) && end < len(b) && isClassSep(b[end]) {
			n++
		}
		b = b[end:]
	}
}

func isClassSep(c byte) bool { return c == '"' || c == '\'' || isSpace(c) }

// tagEnd returns the index just after the '>' that ends the tag starting at
// i, or -1.
func tagEnd(page []byte, i int) int {
	var quote byte
	for j := i + 1; j < len(page); j++ {
		c := page[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j + 1
		}
	}
	return -1
}
