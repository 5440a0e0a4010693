// Package targetlist reads the target papers of a run from a dataset file:
// one column of a Parquet, JSONL or CSV/TSV file (optionally gzipped)
// holding arXiv IDs, arXiv URLs, or GiantsBench-style pair IDs whose first
// two parts are the downstream paper's ID ("2406_03055_323949_340477" is
// 2406.03055).
//
// Read returns the IDs in file order with duplicates removed, and lists
// every value that is not an ID with its row, so that a bad file is
// reported before any request is made.
package targetlist

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
)

// Column names tried, in order, when no column is given.
var defaultColumns = []string{"arxiv_id", "arxiv", "paper_id", "id", "pair_id"}

// Formats Read understands, chosen by the file's extension.
const (
	FormatParquet = "parquet" // .parquet
	FormatJSONL   = "jsonl"   // .jsonl, .ndjson (and .gz)
	FormatCSV     = "csv"     // .csv (and .gz)
	FormatTSV     = "tsv"     // .tsv (and .gz)
)

// Target is one paper read from the file.
type Target struct {
	ID    arxiv.ID
	Row   int    // 1-based data row (header not counted) where it first appears
	Value string // the cell as written
}

// Invalid is a value that names no arXiv paper.
type Invalid struct {
	Row    int // 1-based data row
	Line   int // line in a CSV, TSV or JSONL file; 0 for Parquet
	Value  string
	Reason string
}

// Duplicate is a later row naming a paper already read.
type Duplicate struct {
	Row      int
	Value    string
	FirstRow int
}

// List is what Read found.
type List struct {
	File, Format, Column string
	Rows                 int // data rows read
	Targets              []Target
	Duplicates           []Duplicate
	Invalid              []Invalid
}

// IDs returns the targets' IDs as strings (versioned where the file named
// a version).
func (l *List) IDs() []string {
	out := make([]string, len(l.Targets))
	for i, t := range l.Targets {
		out[i] = t.ID.String()
	}
	return out
}

// Err reports the invalid values as one error naming the file, the column
// and the first rows, or nil when there are none.
func (l *List) Err() error {
	if len(l.Invalid) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "targets from %s, column %s: %d of %d rows are not arXiv IDs:", l.File, l.Column, len(l.Invalid), l.Rows)
	for i, inv := range l.Invalid {
		if i == 10 {
			fmt.Fprintf(&b, "; and %d more", len(l.Invalid)-10)
			break
		}
		fmt.Fprintf(&b, " row %d", inv.Row)
		if inv.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", inv.Line)
		}
		fmt.Fprintf(&b, " %q: %s;", inv.Value, inv.Reason)
	}
	return errors.New(strings.TrimSuffix(b.String(), ";"))
}

// Read reads the arXiv IDs in column of the file at path; an empty column
// means the first of arxiv_id, arxiv, paper_id, id and pair_id the file
// has. It fails, naming the file, on an unknown format, a missing column
// (listing those there are) or a file it cannot parse; values that are not
// IDs are listed in List.Invalid, not failed on.
func Read(path, column string) (*List, error) {
	format, gz, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("targets from %s: %w", path, err)
	}
	defer f.Close()
	l := &List{File: path, Format: format}
	c := &collector{list: l, seen: map[string]int{}}
	switch format {
	case FormatParquet:
		err = readParquet(f, column, c)
	default:
		var r io.Reader = f
		if gz {
			zr, err := gzip.NewReader(f)
			if err != nil {
				return nil, fmt.Errorf("targets from %s: %w", path, err)
			}
			defer zr.Close()
			r = zr
		}
		if format == FormatJSONL {
			err = readJSONL(r, column, c)
		} else {
			err = readCSV(r, column, format, c)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("targets from %s: %w", path, err)
	}
	return l, nil
}

func formatOf(path string) (format string, gz bool, err error) {
	name := strings.ToLower(filepath.Base(path))
	if n, ok := strings.CutSuffix(name, ".gz"); ok {
		name, gz = n, true
	}
	switch filepath.Ext(name) {
	case ".parquet":
		if !gz {
			return FormatParquet, false, nil
		}
	case ".jsonl", ".ndjson":
		return FormatJSONL, gz, nil
	case ".csv":
		return FormatCSV, gz, nil
	case ".tsv":
		return FormatTSV, gz, nil
	}
	return "", false, fmt.Errorf("targets from %s: unknown format: want .parquet, .jsonl, .ndjson, .csv or .tsv (the text formats may be gzipped, .gz)", path)
}

// pickColumn returns column if the file has it, else, when column is
// empty, the first default the file has; the error lists what there is.
func pickColumn(column string, have []string) (string, error) {
	if column != "" {
		if slices.Contains(have, column) {
			return column, nil
		}
		for _, h := range have {
			if strings.EqualFold(h, column) {
				return "", fmt.Errorf("no column %q (did you mean %q?); columns: %s", column, h, strings.Join(have, ", "))
			}
		}
		return "", fmt.Errorf("no column %q; columns: %s", column, strings.Join(have, ", "))
	}
	for _, d := range defaultColumns {
		if slices.Contains(have, d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no column given (--column) and none of %s found; columns: %s", strings.Join(defaultColumns, ", "), strings.Join(have, ", "))
}

// collector turns cell values into targets, duplicates and invalid rows.
type collector struct {
	list *List
	seen map[string]int // canonical ID -> first row
}

// add takes the value(s) of one row. A row may hold several IDs (a list
// cell); kind names a non-text cell ("number", ...) that cannot hold one.
func (c *collector) add(line int, values []string, kind string) {
	c.list.Rows++
	row := c.list.Rows
	if kind != "" {
		c.invalid(row, line, strings.Join(values, ","), kind)
		return
	}
	if len(values) == 0 {
		c.invalid(row, line, "", "empty value")
		return
	}
	for _, v := range values {
		id, err := ParseValue(v)
		if err != nil {
			c.invalid(row, line, v, err.Error())
			continue
		}
		key := id.Canonical()
		if first, dup := c.seen[key]; dup {
			c.list.Duplicates = append(c.list.Duplicates, Duplicate{Row: row, Value: v, FirstRow: first})
			continue
		}
		c.seen[key] = row
		c.list.Targets = append(c.list.Targets, Target{ID: id, Row: row, Value: v})
	}
}

func (c *collector) invalid(row, line int, v, reason string) {
	c.list.Invalid = append(c.list.Invalid, Invalid{Row: row, Line: line, Value: v, Reason: reason})
}

// ParseValue reads one cell as an arXiv ID: an ID with or without version
// or "arXiv:" ("2406.03055v2", "hep-th/9901001"), an arxiv.org or ar5iv
// URL (/abs/, /pdf/, /html/), a file-name form with "_" for the old-style
// slash ("hep-th_9901001"), or a GiantsBench pair_id, whose first two
// "_"-separated parts are the downstream paper's ID
// ("2406_03055_323949_340477" is 2406.03055, "hep-th_9901001_12_34" is
// hep-th/9901001).
func ParseValue(v string) (arxiv.ID, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return arxiv.ID{}, errors.New("empty value")
	}
	if rest, ok := cutURL(s); ok {
		s = rest
	}
	id, err := arxiv.Parse(s)
	if err == nil {
		return id, nil
	}
	if parts := strings.Split(s, "_"); len(parts) >= 2 {
		// New style: YYMM_NNNNN[vN]; old style: archive[.SUBJ]_YYMMNNN[vN].
		for _, cand := range []string{parts[0] + "." + parts[1], parts[0] + "/" + parts[1]} {
			if id, e := arxiv.Parse(cand); e == nil {
				return id, nil
			}
		}
	}
	if strings.Contains(s, "/") && strings.Contains(s, "_") {
		// An old-style pair_id written with its slash: hep-th/9901001_12_34.
		if id, e := arxiv.Parse(s[:strings.IndexByte(s, '_')]); e == nil {
			return id, nil
		}
	}
	// Name the reason arxiv.Parse gives, without repeating the value.
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return arxiv.ID{}, errors.New("not an arXiv ID: " + msg)
}

// cutURL returns the ID part of an arxiv.org or ar5iv URL.
func cutURL(s string) (string, bool) {
	low := strings.ToLower(s)
	for _, scheme := range []string{"https://", "http://"} {
		low = strings.TrimPrefix(low, scheme)
	}
	for _, host := range []string{"arxiv.org/", "www.arxiv.org/", "export.arxiv.org/", "ar5iv.labs.arxiv.org/", "ar5iv.org/"} {
		if !strings.HasPrefix(low, host) {
			continue
		}
		rest := s[len(s)-len(low)+len(host):]
		for _, p := range []string{"abs/", "pdf/", "html/"} {
			if r, ok := strings.CutPrefix(rest, p); ok {
				r, _, _ = strings.Cut(r, "?")
				r, _, _ = strings.Cut(r, "#")
				r = strings.TrimSuffix(strings.TrimSuffix(r, "/"), ".pdf")
				return r, true
			}
		}
	}
	return "", false
}

func readJSONL(r io.Reader, column string, c *collector) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	line := 0
	picked := ""
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return fmt.Errorf("line %d: not a JSON object: %w", line, err)
		}
		if picked == "" {
			have := make([]string, 0, len(obj))
			for k := range obj {
				have = append(have, k)
			}
			slices.Sort(have)
			col, err := pickColumn(column, have)
			if err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			picked, c.list.Column = col, col
		}
		raw, ok := obj[picked]
		if !ok {
			c.add(line, nil, "")
			continue
		}
		values, kind := jsonValues(raw)
		c.add(line, values, kind)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	if picked == "" {
		return errors.New("no rows")
	}
	return nil
}

// jsonValues reads a JSON cell: a string, a list of strings, or null.
func jsonValues(raw json.RawMessage) ([]string, string) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, ""
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return []string{string(raw)}, "unreadable string"
		}
		if strings.TrimSpace(s) == "" {
			return nil, ""
		}
		return []string{s}, ""
	case raw[0] == '[':
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			return []string{string(raw)}, "a list of something other than strings"
		}
		return list, ""
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return []string{string(raw)}, "a number, not text: IDs stored as numbers lose trailing zeros (2401.00010 becomes 2401.0001); store them as strings"
	}
	return []string{string(raw)}, "not a string"
}

func readCSV(r io.Reader, column, format string, c *collector) error {
	br := bufio.NewReader(r)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	if format == FormatTSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.FieldsPerRecord = -1 // short rows are reported per row, below
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return errors.New("empty file: want a header row naming the columns")
	}
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	col, err := pickColumn(column, header)
	if err != nil {
		return err
	}
	c.list.Column = col
	idx := slices.Index(header, col)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return err // csv.ParseError names the line
		}
		if idx >= len(rec) {
			c.add(line, nil, fmt.Sprintf("row has %d fields, no %s", len(rec), col))
			continue
		}
		v := strings.TrimSpace(rec[idx])
		if v == "" {
			c.add(line, nil, "")
			continue
		}
		c.add(line, []string{v}, "")
	}
}
