// Package arrowtest reads Parquet files back with Apache Arrow's Go
// reader, an implementation independent of parquet-go that follows the
// C++ (pyarrow) schema conversion, so tests can check that what curate
// writes reads as pyarrow would read it.
package arrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Read reads the Parquet file at path in batches of batchSize rows and
// returns its schema and its rows as JSON objects (as Arrow writes them:
// a null optional field is a null member).
func Read(tb testing.TB, path string, batchSize int) (*arrow.Schema, []map[string]any) {
	tb.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		tb.Fatalf("arrow: open %s: %v", path, err)
	}
	defer rdr.Close()
	// A plain Go allocator: arrow-go's delta decoder does not return all
	// its buffers to a checked one (v18.8.0), which is not ours to test.
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: int64(batchSize)}, memory.NewGoAllocator())
	if err != nil {
		tb.Fatalf("arrow: reader %s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		tb.Fatalf("arrow: read %s: %v", path, err)
	}
	defer tbl.Release()
	var rows []map[string]any
	tr := array.NewTableReader(tbl, int64(batchSize))
	defer tr.Release()
	for tr.Next() {
		var b bytes.Buffer
		if err := array.RecordToJSON(tr.RecordBatch(), &b); err != nil {
			tb.Fatalf("arrow: %s: %v", path, err)
		}
		dec := json.NewDecoder(&b)
		for dec.More() {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				tb.Fatalf("arrow: %s: %v", path, err)
			}
			rows = append(rows, m)
		}
	}
	return tbl.Schema(), rows
}
