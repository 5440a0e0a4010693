package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesOnlyRealFlags: every --flag a command's usage line names
// is a flag of the command (the export help once advertised a --jsonl
// that did not exist), and -h exits 0.
func TestHelpNamesOnlyRealFlags(t *testing.T) {
	named := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	defined := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, c := range commands() {
		code, _, stderr := runCLI(t, nil, c.name, "-h")
		usage, flags, _ := strings.Cut(stderr, "\nflags:\n")
		if code != 0 || !strings.HasPrefix(usage, "usage: curate "+c.name) {
			t.Errorf("curate %s -h: exit %d\n%s", c.name, code, stderr)
			continue
		}
		have := map[string]bool{}
		for _, m := range defined.FindAllStringSubmatch(flags, -1) {
			have[m[1]] = true
		}
		for _, m := range named.FindAllStringSubmatch(usage, -1) {
			if !have[m[1]] {
				t.Errorf("curate %s: the usage line names --%s, which is no flag of it\n%s", c.name, m[1], usage)
			}
		}
	}
}

// TestCommandsSorted: the command list (and so curate's help) is
// alphabetical, each name once.
func TestCommandsSorted(t *testing.T) {
	cmds := commands()
	for i := 1; i < len(cmds); i++ {
		if cmds[i-1].name >= cmds[i].name {
			t.Errorf("commands: %q comes before %q", cmds[i-1].name, cmds[i].name)
		}
	}
}

// TestOneLine: a reason on stdout's tab-separated lists stays one field of
// one line, whatever the error held.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                            "plain",
		"put blob: no space\nset status":   "put blob: no space; set status",
		"a\r\nb\n\nc":                      "a; b; c",
		"tab\there":                        "tab here",
		"panic: x\ngoroutine 1:\n\tmain.f": "panic: x; goroutine 1:;  main.f",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
