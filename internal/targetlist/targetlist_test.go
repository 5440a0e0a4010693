package targetlist_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/internal/targetlist"
)

func TestParseValue(t *testing.T) {
	tests := []struct {
		in, want string // want "" expects an error
	}{
		{"2406_03055_323949_340477", "2406.03055"},
		{"2406_03055v2_323949_340477", "2406.03055v2"},
		{"1412_1234_1_2", "1412.1234"},
		{"hep-th_9901001_12_34", "hep-th/9901001"},
		{"math.GT_0309136_12_34", "math.GT/0309136"},
		{"hep-th/9901001_12_34", "hep-th/9901001"},
		{"hep-th_9901001", "hep-th/9901001"},
		{"2406.03055", "2406.03055"},
		{" arXiv:2406.03055v3 ", "2406.03055v3"},
		{"https://arxiv.org/abs/2406.03055v1", "2406.03055v1"},
		{"http://arxiv.org/pdf/2406.03055.pdf", "2406.03055"},
		{"https://arxiv.org/html/2406.03055v2/", "2406.03055v2"},
		{"https://ar5iv.labs.arxiv.org/html/hep-th/9901001", "hep-th/9901001"},
		{"https://arxiv.org/abs/2406.03055?context=cs", "2406.03055"},
		{"2406_0305_1_2", ""}, // four digits after 1412
		{"9999.99999", ""},
		{"2406", ""},
		{"hello_world", ""},
		{"", ""},
		{"https://example.org/abs/2406.03055", ""},
	}
	for _, tt := range tests {
		id, err := targetlist.ParseValue(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseValue(%q) = %s, want an error", tt.in, id)
		case tt.want != "" && (err != nil || id.String() != tt.want):
			t.Errorf("ParseValue(%q) = %s, %v; want %s", tt.in, id, err, tt.want)
		}
	}
}

// giantsRow is a row shaped like GiantsBench's train split.
type giantsRow struct {
	Query      string `parquet:"query"`
	Completion string `parquet:"completion"`
	PairID     string `parquet:"pair_id"`
}

func writeParquet[T any](t *testing.T, name string, rows []T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, parquet.MaxRowsPerRowGroup(2)) // several row groups
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestParquetGiantsBench(t *testing.T) {
	p := writeParquet(t, "train.parquet", []giantsRow{
		{"q1", "c1", "2406_03055_323949_340477"},
		{"q2", "c2", "2406_03055_111111_222222"}, // same downstream paper
		{"q3", "c3", "2311_00001_1_2"},
		{"q4", "c4", "2406_0305_1_2"}, // invalid
		{"q5", "c5", "hep-th_9901001_5_6"},
		{"q6", "c6", ""},
	})
	for _, column := range []string{"pair_id", ""} { // "" finds pair_id itself
		l, err := targetlist.Read(p, column)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := l.IDs(), []string{"2406.03055", "2311.00001", "hep-th/9901001"}; !slices.Equal(got, want) {
			t.Errorf("column %q: IDs %q, want %q", column, got, want)
		}
		if l.Rows != 6 || l.Column != "pair_id" || l.Format != targetlist.FormatParquet {
			t.Errorf("list %+v", l)
		}
		if len(l.Duplicates) != 1 || l.Duplicates[0] != (targetlist.Duplicate{Row: 2, Value: "2406_03055_111111_222222", FirstRow: 1}) {
			t.Errorf("duplicates %+v", l.Duplicates)
		}
		if len(l.Invalid) != 2 || l.Invalid[0].Row != 4 || l.Invalid[0].Value != "2406_0305_1_2" || l.Invalid[1].Row != 6 || l.Invalid[1].Reason != "empty value" {
			t.Errorf("invalid %+v", l.Invalid)
		}
		err = l.Err()
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "pair_id") || !strings.Contains(err.Error(), `row 4 "2406_0305_1_2"`) {
			t.Errorf("Err() = %v", err)
		}
		if l.Targets[2].Row != 5 || l.Targets[2].Value != "hep-th_9901001_5_6" {
			t.Errorf("target %+v", l.Targets[2])
		}
	}

	_, err := targetlist.Read(p, "arxiv")
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `"arxiv"`) || !strings.Contains(err.Error(), "query, completion, pair_id") {
		t.Errorf("missing column: err %v, want the file, the column and the columns there are", err)
	}
	if _, err := targetlist.Read(p, "Pair_ID"); err == nil || !strings.Contains(err.Error(), `did you mean "pair_id"`) {
		t.Errorf("wrong case: err %v", err)
	}
}

func TestParquetColumnKinds(t *testing.T) {
	type row struct {
		Title   string   `parquet:"title"`
		Score   float64  `parquet:"score"`
		Sources []string `parquet:"sources,list"`
		Maybe   *string  `parquet:"maybe,optional"`
	}
	s := func(v string) *string { return &v }
	p := writeParquet(t, "mixed.parquet", []row{
		{"a", 2401.0001, []string{"2401.00001", "2401.00002"}, s("2401.00003")},
		{"b", 2401.0002, nil, nil},
		{"c", 2401.0003, []string{"2401.00002", "nope"}, s("2401.00004")},
	})
	l, err := targetlist.Read(p, "sources")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.IDs(); !slices.Equal(got, []string{"2401.00001", "2401.00002"}) || l.Rows != 3 || len(l.Duplicates) != 1 || len(l.Invalid) != 2 {
		t.Errorf("list column: %q rows %d dups %+v invalid %+v", got, l.Rows, l.Duplicates, l.Invalid)
	}
	l, err = targetlist.Read(p, "maybe")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.IDs(); !slices.Equal(got, []string{"2401.00003", "2401.00004"}) || len(l.Invalid) != 1 || l.Invalid[0].Row != 2 {
		t.Errorf("optional column: %q invalid %+v", got, l.Invalid)
	}
	l, err = targetlist.Read(p, "score")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Targets) != 0 || len(l.Invalid) != 3 || !strings.Contains(l.Invalid[0].Reason, "not text") {
		t.Errorf("numeric column: %+v", l)
	}
}

func TestJSONL(t *testing.T) {
	p := filepath.Join(t.TempDir(), "targets.jsonl")
	os.WriteFile(p, []byte(`{"arxiv_id": "2401.00001", "title": "a"}

{"arxiv_id": "https://arxiv.org/abs/2401.00002v2", "title": "b"}
{"arxiv_id": 2401.0003, "title": "c"}
{"arxiv_id": null}
{"title": "no id"}
{"arxiv_id": ["2401.00004", "2401.00001"]}
`), 0o644)
	l, err := targetlist.Read(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.IDs(); !slices.Equal(got, []string{"2401.00001", "2401.00002v2", "2401.00004"}) || l.Column != "arxiv_id" || l.Rows != 6 {
		t.Errorf("IDs %q, list %+v", got, l)
	}
	if len(l.Invalid) != 3 || l.Invalid[0].Line != 4 || l.Invalid[0].Row != 3 || !strings.Contains(l.Invalid[0].Reason, "number") {
		t.Errorf("invalid %+v", l.Invalid)
	}
	if len(l.Duplicates) != 1 || l.Duplicates[0].FirstRow != 1 {
		t.Errorf("duplicates %+v", l.Duplicates)
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"id\": \"2401.00001\"}\n{oops\n"), 0o644)
	if _, err := targetlist.Read(bad, ""); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed line: err %v", err)
	}
}

func TestCSV(t *testing.T) {
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "targets.csv")
	os.WriteFile(csvFile, []byte("\xef\xbb\xbftitle,paper_id,notes\n"+
		"\"Tidal, Lattices\",2401.00001,x\n"+
		"b,,empty\n"+
		"c,hep-th/9901001v2,\n"+
		"short\n"+
		"d,  2401.00001v1  ,dup\n"), 0o644)
	l, err := targetlist.Read(csvFile, "paper_id")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.IDs(); !slices.Equal(got, []string{"2401.00001", "hep-th/9901001v2"}) || l.Rows != 5 {
		t.Errorf("IDs %q rows %d", got, l.Rows)
	}
	if len(l.Invalid) != 2 || l.Invalid[0].Line != 3 || l.Invalid[1].Line != 5 || !strings.Contains(l.Invalid[1].Reason, "fields") {
		t.Errorf("invalid %+v", l.Invalid)
	}
	if len(l.Duplicates) != 1 || l.Duplicates[0].Row != 5 {
		t.Errorf("duplicates %+v", l.Duplicates)
	}

	// TSV, gzipped.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("id\tpair_id\n1\t2406_03055_1_2\n2\t2406_03056_1_2\n"))
	zw.Close()
	tsv := filepath.Join(dir, "pairs.tsv.gz")
	os.WriteFile(tsv, buf.Bytes(), 0o644)
	l, err = targetlist.Read(tsv, "pair_id")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.IDs(); !slices.Equal(got, []string{"2406.03055", "2406.03056"}) || l.Format != targetlist.FormatTSV {
		t.Errorf("tsv: %q %s", got, l.Format)
	}
	// With no column given, "id" comes before "pair_id" in the defaults:
	// here it holds no IDs, and every row says so.
	l, _ = targetlist.Read(tsv, "")
	if l.Column != "id" || len(l.Invalid) != 2 {
		t.Errorf("default column %q, invalid %+v", l.Column, l.Invalid)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "targets.txt")
	os.WriteFile(txt, []byte("2401.00001\n"), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	notParquet := filepath.Join(dir, "fake.parquet")
	os.WriteFile(notParquet, []byte("PAR1 but not really"), 0o644)
	noDefault := filepath.Join(dir, "cols.csv")
	os.WriteFile(noDefault, []byte("title,year\na,2024\n"), 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.csv"): "no such file",
		txt:                               "unknown format",
		empty:                             "header",
		notParquet:                        "Parquet",
		noDefault:                         "columns: title, year",
	} {
		_, err := targetlist.Read(path, "")
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): err %v, want one naming the file and %q", path, err, want)
		}
	}
}
