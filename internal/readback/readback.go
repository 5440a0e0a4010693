// Package readback reads curate's Parquet outputs back with readers that
// share no code with the writer (parquet-go), for tests: Apache Arrow's Go
// reader (the C++/pyarrow lineage) always, and, through Node.js,
// hyparquet (pure JavaScript, with only the codecs it ships) and DuckDB.
// A file only counts as readable when every reader reads the rows that
// were written.
//
// The JavaScript readers need `make readback-deps` (npm installs them
// into js/node_modules); without Node.js or them, Check skips its
// JavaScript part with a message (counted at the end of go test ./...),
// unless CURATE_REQUIRE_JS_READERS or CI=true is set, which makes their
// absence a failure.
package readback

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/groundwork/curate/internal/testneeds"
)

// RequireEnv names the environment variable that turns missing
// JavaScript readers from a skip into a failure (make readback sets it).
const RequireEnv = "CURATE_REQUIRE_JS_READERS"

// JSReaders are the readers JS runs, in the order they are checked.
var JSReaders = []string{"hyparquet", "duckdb"}

// Table is what one reader read from one file.
type Table struct {
	// Schema is the Arrow schema, from Arrow only.
	Schema  *arrow.Schema    `json:"-"`
	Columns []string         `json:"columns"`
	Codecs  []string         `json:"codecs"` // compression codecs of the column chunks, as the reader names them
	Rows    []map[string]any `json:"rows"`
	Error   string           `json:"error,omitempty"`
}

// Arrow reads a Parquet file with Apache Arrow's Go reader and returns its
// top-level columns, the codecs of its column chunks and its rows as JSON
// objects.
func Arrow(path string) (*Table, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("arrow: open %s: %w", path, err)
	}
	defer rdr.Close()
	t := &Table{}
	codecs := map[string]bool{}
	for g := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return nil, fmt.Errorf("arrow: %s: column chunk %d of row group %d: %w", path, c, g, err)
			}
			codecs[strings.ToUpper(cc.Compression().String())] = true
		}
	}
	for c := range codecs {
		t.Codecs = append(t.Codecs, c)
	}
	slices.Sort(t.Codecs)
	// A plain Go allocator: arrow-go's delta decoder does not return all
	// its buffers to a checked one (v18.8.0), which is not ours to test.
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64}, memory.NewGoAllocator())
	if err != nil {
		return nil, fmt.Errorf("arrow: reader %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("arrow: read %s: %w", path, err)
	}
	defer tbl.Release()
	t.Schema = tbl.Schema()
	for _, f := range tbl.Schema().Fields() {
		t.Columns = append(t.Columns, f.Name)
	}
	t.Rows = []map[string]any{}
	tr := array.NewTableReader(tbl, 64)
	defer tr.Release()
	for tr.Next() {
		var b bytes.Buffer
		if err := array.RecordToJSON(tr.RecordBatch(), &b); err != nil {
			return nil, fmt.Errorf("arrow: %s: %w", path, err)
		}
		dec := json.NewDecoder(&b)
		for dec.More() {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return nil, fmt.Errorf("arrow: %s: %w", path, err)
			}
			t.Rows = append(t.Rows, m)
		}
	}
	return t, nil
}

// ErrNoJS means Node.js or the JavaScript readers are not installed.
var ErrNoJS = errors.New("the JavaScript Parquet readers are not installed (run `make readback-deps`; needs Node.js and npm)")

// jsDir is the directory of readback.mjs and its node_modules.
func jsDir() string {
	_, src, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(src), "js")
}

// JS reads each file with hyparquet and DuckDB and returns, per file, the
// table each reader read (a reader's failure is in its Table's Error). It
// returns ErrNoJS when Node.js or the readers are missing.
func JS(ctx context.Context, paths ...string) (map[string]map[string]*Table, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: no node on PATH", ErrNoJS)
	}
	dir := jsDir()
	for _, m := range []string{"hyparquet", "@duckdb/node-api"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m, "package.json")); err != nil {
			return nil, fmt.Errorf("%w: %s is missing from %s", ErrNoJS, m, filepath.Join(dir, "node_modules"))
		}
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		if abs[i], err = filepath.Abs(p); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "readback.mjs")}, abs...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node readback.mjs: %w\n%s", err, stderr.String())
	}
	res := map[string]map[string]*Table{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("node readback.mjs: %w", err)
		}
		var path string
		if err := json.Unmarshal(line["file"], &path); err != nil {
			return nil, fmt.Errorf("node readback.mjs: %w", err)
		}
		res[path] = map[string]*Table{}
		for _, r := range JSReaders {
			var t Table
			if err := json.Unmarshal(line[r], &t); err != nil {
				return nil, fmt.Errorf("node readback.mjs: %s: %w", r, err)
			}
			res[path][r] = &t
		}
	}
	for i, p := range abs {
		if res[p] == nil {
			return nil, fmt.Errorf("node readback.mjs: no result for %s", paths[i])
		}
	}
	out2 := map[string]map[string]*Table{}
	for i, p := range abs {
		out2[paths[i]] = res[p]
	}
	return out2, nil
}

// Normalize turns v into the JSON values a reader returns, for
// comparison: marshalled and unmarshalled (numbers become float64), with
// null members, empty lists and empty strings removed, because Go's
// encoding/json omits what Parquet writes as a null or an empty list and
// the readers differ on which of the two they return.
func Normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return prune(out)
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = prune(e)
			if empty(e) {
				delete(x, k)
			} else {
				x[k] = e
			}
		}
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
	}
	return v
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	}
	return false
}

// File is one Parquet file to check and the rows written to it (a slice
// of structs whose JSON names are the Parquet column names).
type File struct {
	Path string
	Rows any
	// Codec is the compression the file should have ("SNAPPY", "ZSTD",
	// "GZIP", "UNCOMPRESSED"); empty skips the codec check.
	Codec string
}

// Check reads every file with each reader and fails t unless every
// reader reads exactly the rows written, with the codec expected. The
// Arrow reader runs in the subtest "arrow"; the JavaScript readers in
// "js", which skips, saying why, when they are not installed (fails
// instead when RequireEnv is set). hyparquet, which ships no ZSTD or GZIP
// decoder, must read the Snappy and uncompressed files and must refuse
// the others.
func Check(t *testing.T, files ...File) {
	t.Helper()
	t.Run("arrow", func(t *testing.T) {
		for _, f := range files {
			tbl, err := Arrow(f.Path)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			compare(t, "arrow", f, tbl)
		}
	})
	t.Run("js", func(t *testing.T) {
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.Path
		}
		res, err := JS(context.Background(), paths...)
		if errors.Is(err, ErrNoJS) {
			if os.Getenv(RequireEnv) != "" {
				t.Fatalf("%v (%s is set)", err, RequireEnv)
			}
			testneeds.Skip(t, testneeds.JSReaders, "hyparquet and DuckDB not checked: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			for _, r := range JSReaders {
				tbl := res[f.Path][r]
				if r == "hyparquet" && f.Codec != "" && !slices.Contains(hyparquetCodecs, f.Codec) {
					// Without a codec package hyparquet reads only these,
					// which is why Snappy is curate's default.
					if tbl.Error == "" {
						t.Errorf("hyparquet read %s, a %s file, which it has no codec for", f.Path, f.Codec)
					}
					continue
				}
				if tbl.Error != "" {
					t.Errorf("%s cannot read %s: %s", r, f.Path, tbl.Error)
					continue
				}
				compare(t, r, f, tbl)
			}
		}
	})
}

// hyparquetCodecs are the codecs hyparquet reads without a codec package.
var hyparquetCodecs = []string{"SNAPPY", "UNCOMPRESSED"}

// codecNames maps the readers' codec names onto Parquet's.
var codecNames = map[string]string{"UNCOMPRESSED": "UNCOMPRESSED", "SNAPPY": "SNAPPY", "ZSTD": "ZSTD", "GZIP": "GZIP"}

func compare(t *testing.T, reader string, f File, tbl *Table) {
	t.Helper()
	if f.Codec != "" {
		for _, c := range tbl.Codecs {
			if n := codecNames[strings.ToUpper(c)]; n != f.Codec {
				t.Errorf("%s: %s reads codecs %v, want only %s", f.Path, reader, tbl.Codecs, f.Codec)
				break
			}
		}
	}
	want, _ := Normalize(f.Rows).([]any)
	got := Normalize(tbl.Rows).([]any)
	if len(got) != len(want) {
		t.Errorf("%s: %s reads %d rows, want %d", f.Path, reader, len(got), len(want))
		return
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Errorf("%s: %s reads row %d as\n%s\nwant\n%s", f.Path, reader, i, g, w)
			return
		}
	}
	if len(want) > 0 {
		first, _ := want[0].(map[string]any)
		for k := range first {
			if !slices.Contains(tbl.Columns, k) {
				t.Errorf("%s: %s finds no column %q (columns %v)", f.Path, reader, k, tbl.Columns)
			}
		}
	}
}
