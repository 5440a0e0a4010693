package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// TestHelpNamesOnlyRealFlags: every --flag a command's usage line names
// is a flag of the command (the export help once advertised a --jsonl
// that did not exist), and -h exits 0.
func TestHelpNamesOnlyRealFlags(t *testing.T) {
	named := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	defined := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	for _, name := range cli.CommandNames() {
		code, stdout, _ := clitest.Run(t, nil, name, "-h")
		usage, flags, _ := strings.Cut(stdout, "\nflags:\n")
		if code != 0 || !strings.HasPrefix(usage, "usage: curate "+name) {
			t.Errorf("curate %s -h: exit %d\n%s", name, code, stdout)
			continue
		}
		have := map[string]bool{}
		for _, m := range defined.FindAllStringSubmatch(flags, -1) {
			have[m[1]] = true
		}
		for _, m := range named.FindAllStringSubmatch(usage, -1) {
			if !have[m[1]] {
				t.Errorf("curate %s: the usage line names --%s, which is no flag of it\n%s", name, m[1], usage)
			}
		}
	}
}

// TestCommandsSorted: the command list (and so curate's help) is
// alphabetical, each name once.
func TestCommandsSorted(t *testing.T) {
	cmds := cli.CommandNames()
	for i := 1; i < len(cmds); i++ {
		if cmds[i-1] >= cmds[i] {
			t.Errorf("commands: %q comes before %q", cmds[i-1], cmds[i])
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
		if got := cli.OneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHelpToStdout: asked for, help is the command's output: it goes to
// stdout and exits 0, for curate as a whole (-h, --help, help) and for
// each command (CMD -h, CMD --help, help CMD, which is CMD -h); only a
// usage error (no command, an unknown one, a bad flag) prints the usage
// to stderr, with exit status 2.
func TestHelpToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		code, stdout, stderr := clitest.Run(t, nil, args...)
		if code != 0 || !strings.HasPrefix(stdout, "usage: curate <command>") || stderr != "" {
			t.Errorf("curate %v: exit %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
		}
	}
	for _, name := range cli.CommandNames() {
		_, want, _ := clitest.Run(t, nil, name, "-h")
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			code, stdout, stderr := clitest.Run(t, nil, args...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: curate "+name+" ") || !strings.Contains(stdout, "\nflags:\n") || stderr != "" || stdout != want {
				t.Errorf("curate %v: exit %d\nstdout %q\nstderr %q", args, code, stdout, stderr)
			}
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "usage: curate <command>"},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"help", "nope"}, `unknown command "nope"`},
		{[]string{"help", "run", "fetch"}, "help takes one command"},
		{[]string{"fetch", "--bogus"}, "flag provided but not defined: -bogus\nusage: curate fetch "},
	} {
		code, stdout, stderr := clitest.Run(t, nil, tt.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("curate %v: exit %d, want 2\nstdout %q\nstderr %q", tt.args, code, stdout, stderr)
		}
	}
}

// TestMissingInputExits2: a dataset, file or store that is not there is a
// run that could not go on (exit 2, naming it), never "some targets
// failed" (1); and a command that only reads a store never creates one.
func TestMissingInputExits2(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent")
	for _, args := range [][]string{
		{"report", missing},
		{"export", "--format", "verl-rl", "--out", filepath.Join(dir, "x"), missing},
		{"pairs", "--out", filepath.Join(dir, "p"), "--dataset", missing},
		{"sft", "--dataset", missing, "--out", filepath.Join(dir, "s")},
		{"gate", missing},
		{"topics", "--store", missing, "--out", filepath.Join(dir, "t")},
		{"pairs", "--store", missing, "--out", filepath.Join(dir, "p")},
		{"status", "--store", missing},
		{"show", "--store", missing, "2503.07215"},
		{"stats", "labels", "--store", missing},
	} {
		code, _, stderr := clitest.Run(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, missing) {
			t.Errorf("curate %v: exit %d, want 2 naming %s\n%s", args, code, missing, stderr)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("curate %v created %s", args, missing)
		}
	}
}

// TestIDsAsTargetsFromReadsThem: a paper named on the command line may be
// written in any form --targets-from accepts: an ID with or without its
// version or "arXiv:", an arxiv.org or ar5iv URL, a file-name form.
func TestIDsAsTargetsFromReadsThem(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.Documents.Put(context.Background(), st, "2503.07215", &record.Document{ID: "2503.07215v1"}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, id := range []string{"2503.07215", "2503.07215v1", "arXiv:2503.07215", "https://arxiv.org/abs/2503.07215v1", "http://arxiv.org/pdf/2503.07215v1.pdf",
		"https://ar5iv.labs.arxiv.org/html/2503.07215", "https://arxiv.org/html/2503.07215v1?x=1#S2"} {
		code, stdout, stderr := clitest.Run(t, nil, "show", "--store", dir, id)
		if code != 0 || !strings.Contains(stdout, `"id": "2503.07215"`) {
			t.Errorf("show %s: exit %d\n%s%s", id, code, stdout, stderr)
		}
	}
	code, _, stderr := clitest.Run(t, nil, "show", "--store", dir, "https://example.org/abs/2503.07215")
	if code != 2 || !strings.Contains(stderr, "example.org") {
		t.Errorf("show of a URL that is not arXiv's: exit %d\n%s", code, stderr)
	}
}
