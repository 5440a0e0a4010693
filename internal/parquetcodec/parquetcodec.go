// Package parquetcodec names the page compressions curate writes Parquet
// with, so that every command that writes Parquet (dataset, export, sft,
// topics, pairs) takes the same --compression values and defaults to the
// same one.
//
// The default is Snappy: pyarrow's default and the one codec every
// Parquet reader has built in (a pure-JavaScript reader such as hyparquet
// refuses ZSTD and GZIP without an extra codec package). ZSTD makes
// smaller files for readers that have it.
package parquetcodec

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Codec is a page compression, by the name --compression takes.
type Codec string

// The codecs.
const (
	Snappy Codec = "snappy"
	Zstd   Codec = "zstd"
	Gzip   Codec = "gzip"
	None   Codec = "none"
)

// Default is the codec of every Parquet file curate writes unless told
// otherwise.
const Default = Snappy

// Names returns the codec names in the order help texts list them.
func Names() []string { return []string{string(Snappy), string(Zstd), string(Gzip), string(None)} }

// Parse returns the codec name names; "" is Default.
func Parse(name string) (Codec, error) {
	switch c := Codec(strings.ToLower(strings.TrimSpace(name))); c {
	case "":
		return Default, nil
	case Snappy, Zstd, Gzip, None:
		return c, nil
	}
	return "", fmt.Errorf("compression %q: want %s", name, strings.Join(Names(), ", "))
}

// Codec returns parquet-go's codec of c ("" is Default). It panics on a
// name Parse would refuse: callers parse user input first.
func (c Codec) Codec() compress.Codec {
	switch c {
	case "", Snappy:
		return &parquet.Snappy
	case Zstd:
		return &parquet.Zstd
	case Gzip:
		return &parquet.Gzip
	case None:
		return &parquet.Uncompressed
	}
	panic(fmt.Sprintf("parquetcodec: unknown codec %q", string(c)))
}

// WriterOption is the parquet-go writer option that compresses pages
// with c.
func (c Codec) WriterOption() parquet.WriterOption { return parquet.Compression(c.Codec()) }

// Application is the name a Parquet file's footer gives as the
// application that wrote it (created_by).
const Application = "curate"

// CreatedBy is the writer option that names curate at version ("" for
// none known) in a file's footer: "curate version 0.3.0", as the Parquet
// format's convention has it. Every file curate writes sets it: without
// it parquet-go writes its own name and the version the binary's build
// information gives, so the bytes of a dataset would depend on how curate
// was built (a test binary carries no module versions; go build does).
func CreatedBy(version string) parquet.WriterOption {
	c := Application
	if version != "" {
		c += " version " + version
	}
	return createdBy(c)
}

// createdBy sets the footer's created_by as given: parquet.CreatedBy
// appends "(build ...)", with no space before it and no build to give.
type createdBy string

func (c createdBy) ConfigureWriter(config *parquet.WriterConfig) { config.CreatedBy = string(c) }

// String returns the codec's name, Default's for "".
func (c Codec) String() string {
	if c == "" {
		return string(Default)
	}
	return string(c)
}
