package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/groundwork/curate/internal/parquetcodec"
)

// addCompressionFlag adds --compression, the Parquet page codec, to a
// command that writes Parquet.
func addCompressionFlag(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "compression", string(parquetcodec.Default),
		"Parquet page compression: "+strings.Join(parquetcodec.Names(), ", ")+" (snappy is the codec every reader has)")
}

// parseCompression checks a --compression value before anything is read
// or written.
func parseCompression(v string) (parquetcodec.Codec, error) {
	c, err := parquetcodec.Parse(v)
	if err != nil {
		return "", fmt.Errorf("%w: --%v", errUsage, err)
	}
	return c, nil
}
