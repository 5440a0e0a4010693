package parquetcodec

import (
	"strings"
	"testing"
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
