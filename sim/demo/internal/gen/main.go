// Command gen writes the demo corpus (see package corpusgen) into a
// directory, by default ./corpus. The demo package runs it with go generate;
// the generated files are committed and embedded.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/groundwork/curate/sim/demo/internal/corpusgen"
)

func main() {
	out := flag.String("out", "corpus", "directory to write the corpus into")
	flag.Parse()
	if err := corpusgen.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
