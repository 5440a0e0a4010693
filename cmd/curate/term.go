package main

import (
	"os"

	"golang.org/x/term"
)

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }
