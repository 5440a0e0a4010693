// Command curate builds document-grounded ideation datasets from the
// scientific literature: it fetches target papers, their citation graph and
// sources, classifies and summarizes them, and writes Parquet splits.
//
// The command itself is package internal/cli; its end-to-end tests are in
// internal/e2e (see the README's layout).
package main

import (
	"os"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
