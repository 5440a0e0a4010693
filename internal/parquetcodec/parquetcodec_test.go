package parquetcodec

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Codec
		err  string
	}{
		{"", Snappy, ""},
		{"snappy", Snappy, ""},
		{" ZSTD ", Zstd, ""},
		{"gzip", Gzip, ""},
		{"none", None, ""},
		{"lz4", "", `compression "lz4": want snappy, zstd, gzip, none`},
		{"uncompressed", "", "want snappy"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if got.Codec() == nil || got.WriterOption() == nil {
			t.Errorf("%q has no parquet-go codec", got)
		}
	}
	if Codec("").String() != "snappy" {
		t.Errorf("the zero Codec is %q, want the default snappy", Codec("").String())
	}
}

// TestCreatedBy: the footer names curate and its version, or curate alone
// when no version is known; never parquet-go and the build information.
func TestCreatedBy(t *testing.T) {
	for version, want := range map[string]string{"0.3.0": "curate version 0.3.0", "": "curate"} {
		var b bytes.Buffer
		w := parquet.NewGenericWriter[struct{ A int }](&b, CreatedBy(version), Zstd.WriterOption())
		if _, err := w.Write([]struct{ A int }{{1}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Metadata().CreatedBy; got != want {
			t.Errorf("CreatedBy(%q): created_by %q, want %q", version, got, want)
		}
		if c := f.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); c != "ZSTD" {
			t.Errorf("CreatedBy(%q) lost the other options: codec %s", version, c)
		}
	}
}
