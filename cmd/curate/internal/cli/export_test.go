package cli

import (
	"flag"
	"io"
)

// What the tests of package cli_test see of the package's insides (they
// are external tests so that they can run curate through package
// clitest, which imports this one).

// CommandNames lists the subcommands' names in the table's order.
func CommandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// CommandFlags returns the flag set of the named subcommand, as curate
// parses its command line, or nil when there is no such command.
func CommandFlags(name string) *flag.FlagSet {
	for _, c := range commands() {
		if c.name == name {
			fs := newFlagSet(nil, c.name, c.synopsis)
			c.new().AddFlags(fs, &Env{Getenv: func(string) string { return "" }})
			return fs
		}
	}
	return nil
}

func OneLine(s string) string { return oneLine(s) }

func ReadTargets(path string, stdin io.Reader) ([]string, error) { return readTargets(path, stdin) }
