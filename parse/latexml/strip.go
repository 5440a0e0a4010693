package latexml

import "bytes"

// prepare returns the page as the HTML parser is to read it, in one pass
// and at most one copy (none when nothing changes), and the number of
// ltx_ERROR elements (unconverted macros) the removed MathML held:
//
//   - the content of every <math> element that carries an alttext
//     attribute is removed, keeping the start tag. The parser reads math
//     only from alttext, and MathML is most of the markup of a
//     math-heavy page: tokenizing it would cost most of the parse time.
//     Math elements do not nest, so the first "</math>" closes the
//     element.
//   - the start and end tags of every formatting element (a, b, big,
//     code, em, font, i, nobr, s, small, strike, strong, tt, u) are
//     renamed ("<b class=x>" becomes "<b- class=x>"), so that the HTML
//     parser treats them as ordinary elements; restoreFormatting names
//     them back. The HTML parser keeps formatting elements in a list and
//     clones those a block closed into every block after it, which lets a
//     page of "<p>a" grow hundreds of nodes per tag (a 200 KB page made a
//     tree of 2.4 GB). LaTeXML closes every element it opens, so its pages
//     make the same tree either way.
func prepare(page []byte) ([]byte, int) {
	var out []byte
	last := 0 // page[last:] is not yet in out
	errors := 0
	n := len(page)
	for i := 0; i < n; {
		k := bytes.IndexByte(page[i:], '<')
		if k < 0 {
			break
		}
		i += k
		if bytes.HasPrefix(page[i+1:], []byte("math")) {
			end := tagEnd(page, i)
			if end < 0 {
				break
			}
			start := page[i:end]
			c := bytes.Index(page[end:], []byte("</math>"))
			if c >= 0 && bytes.Contains(start, []byte("alttext=")) && start[len(start)-2] != '/' {
				if out == nil {
					out = make([]byte, 0, n)
				}
				out = append(out, page[last:end]...)
				errors += countErrorClasses(page[end : end+c])
				last = end + c
				i = end + c + 1
				continue
			}
			i = end
			continue
		}
		j := i + 1
		if j < n && page[j] == '/' {
			j++
		}
		s := j
		for j < n && j-s <= 6 && isLetter(page[j]) {
			j++
		}
		if j > s && (j == n || isTagNameEnd(page[j])) && isFormatting(page[s:j]) {
			if out == nil {
				out = make([]byte, 0, n+n/32)
			}
			out = append(out, page[last:j]...)
			out = append(out, renamedMark)
			last = j
		}
		i = j
	}
	if out == nil {
		return page, 0
	}
	return append(out, page[last:]...), errors
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
