package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
)

// maxResultLine caps one line of a batch's results file: an answer at the
// largest output of today's models is well below it. The stream itself
// has no cap: an OpenAI batch of 50,000 answers or an Anthropic one of
// 100,000 is read line by line, each answer stored as it is read.
const maxResultLine = 16 << 20

// headBytes is how much of an oversize line is kept to name it.
const headBytes = 512

// eachLine calls f with each non-blank line of r, trimmed, and oversize
// once with the first bytes of each line longer than limit, which is
// skipped. The slice passed to f is valid until f returns.
func eachLine(r io.Reader, limit int, f func(line []byte) error, oversize func(head []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	over := false // the current line passed the limit: its head is in buf
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case over:
		case len(buf)+len(chunk) > limit:
			over = true
			if len(buf) < headBytes {
				buf = append(buf, chunk[:min(len(chunk), headBytes-len(buf))]...)
			}
			if oversize != nil {
				if ferr := oversize(buf); ferr != nil {
					return ferr
				}
			}
		default:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if line := bytes.TrimSpace(buf); !over && len(line) > 0 {
			if ferr := f(line); ferr != nil {
				return ferr
			}
		}
		buf, over = buf[:0], false
		if err != nil {
			return nil // io.EOF
		}
	}
}

// customIDIn reads the custom_id from the head of a results line.
var customIDIn = regexp.MustCompile(`"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"`)

func headCustomID(head []byte) string {
	if m := customIDIn.FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}
