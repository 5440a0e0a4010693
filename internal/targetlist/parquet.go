package targetlist

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// readParquet reads one column of a Parquet file, page by page: a string
// (or byte array) column, or a list of strings. Other columns are not
// decoded.
func readParquet(f *os.File, column string, c *collector) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		return fmt.Errorf("not a readable Parquet file: %w", err)
	}
	var have []string
	for _, col := range pf.Root().Columns() {
		have = append(have, col.Name())
	}
	name, err := pickColumn(column, have)
	if err != nil {
		return err
	}
	c.list.Column = name
	leaf := pf.Root().Column(name)
	path := []string{name}
	for !leaf.Leaf() {
		// A LIST is a group holding one repeated leaf; anything else is not
		// a column of IDs.
		kids := leaf.Columns()
		if len(kids) != 1 {
			return fmt.Errorf("column %s is a group of %d fields, not a column of IDs", name, len(kids))
		}
		leaf = kids[0]
		path = append(path, leaf.Name())
	}
	lc, ok := pf.Schema().Lookup(path...)
	if !ok {
		return fmt.Errorf("column %s: no leaf column in the schema", name)
	}
	text := leaf.Type().Kind() == parquet.ByteArray || leaf.Type().Kind() == parquet.FixedLenByteArray
	kind := ""
	if !text {
		kind = fmt.Sprintf("a %s, not text: store IDs as strings (numbers lose trailing zeros: 2401.00010 becomes 2401.0001)", leaf.Type())
	}

	// Values arrive flat; a repetition level of 0 starts a new row.
	var row []string
	started := false
	flush := func() {
		if started {
			c.add(0, row, kindIf(kind, row))
		}
		row, started = row[:0], true
	}
	buf := make([]parquet.Value, 512)
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[lc.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return fmt.Errorf("column %s: %w", name, err)
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if v.RepetitionLevel() == 0 {
						flush()
					}
					if !v.IsNull() {
						row = append(row, v.String())
					}
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					parquet.Release(p)
					pages.Close()
					return fmt.Errorf("column %s: %w", name, err)
				}
			}
			parquet.Release(p)
		}
		if err := pages.Close(); err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
	}
	flush()
	return nil
}

// kindIf reports a non-text column only for rows that hold a value.
func kindIf(kind string, row []string) string {
	if len(row) == 0 {
		return ""
	}
	return kind
}
