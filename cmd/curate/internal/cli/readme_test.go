package cli_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// readmeCommand is one command of the README's shell blocks.
type readmeCommand struct {
	line int      // where it starts
	text string   // as printed, continuation lines joined
	args []string // its words, comments and the program's name removed
	out  string   // the file stdout is redirected to ("> FILE"), if any
	// export is a shell export line (args: the K=V words), not curate.
	export bool
}

// readmeCommands returns the curate commands and the exports of the
// README's shell code blocks, in order.
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	var out []readmeCommand
	inCode, shell := false, false
	var pending []string
	start := 0
	for i, line := range strings.Split(readme, "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inCode, shell = !inCode, fence == "sh" || fence == ""
			continue
		}
		if !inCode || !shell {
			continue
		}
		code, _, _ := strings.Cut(line, " #") // comments: "#" after a space
		if len(pending) == 0 {
			start = i + 1
		}
		if c, ok := strings.CutSuffix(strings.TrimSpace(code), "\\"); ok {
			pending = append(pending, c)
			continue
		}
		pending = append(pending, strings.TrimSpace(code))
		text := strings.Join(pending, " ")
		pending = nil
		words := strings.Fields(text)
		cmd := readmeCommand{line: start, text: text}
		switch {
		case len(words) >= 2 && words[0] == "export":
			cmd.args, cmd.export = words[1:], true
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/curate":
			cmd.args = words[3:]
		case len(words) >= 1 && (words[0] == "curate" || words[0] == "bin/curate"):
			cmd.args = words[1:]
		default:
			continue // go test, go build, docker, curl: not curate
		}
		if n := len(cmd.args); n >= 2 && cmd.args[n-2] == ">" {
			cmd.out, cmd.args = cmd.args[n-1], cmd.args[:n-2]
		}
		out = append(out, cmd)
	}
	return out
}

var urlRe = regexp.MustCompile(`https?://[^\s]+`)

// offDemo says why a README command cannot run on the demo store as
// printed: it names a remote service, a placeholder ("..."), or an input
// file the reader supplies; "" when it can.
func offDemo(c readmeCommand, dir string) string {
	for _, u := range urlRe.FindAllString(c.text, -1) {
		if p, err := url.Parse(u); err == nil {
			return "asks the service at " + p.Host
		}
	}
	for i, a := range c.args {
		if a == "..." || strings.HasSuffix(a, "=...") {
			return "has a placeholder (...) for the reader's settings"
		}
		if (a == "--targets" || a == "--targets-from" || a == "--html-archive") && i+1 < len(c.args) {
			if _, err := os.Stat(filepath.Join(dir, c.args[i+1])); err != nil {
				return "reads the reader's " + c.args[i+1]
			}
		}
	}
	return ""
}

// TestReadmeCommandsOnDemo runs the README's commands as printed: `curate
// demo`, then, in order and in the same directory, every curate command
// of its shell blocks that needs no remote service, placeholder or input
// of the reader's own, with the environment its export lines set. Each
// must exit 0 and print its result on stdout (or into the file it is
// redirected to). The others must still name only real flags of real
// commands. So every feature the README shows has something to show on
// the demo corpus (topics and pairs included).
func TestReadmeCommandsOnDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo and a dozen commands")
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(readme))
	dir := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{}
	ran := map[string]bool{}
	for _, c := range cmds {
		if c.export {
			for _, kv := range c.args {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			continue
		}
		if why := offDemo(c, dir); why != "" {
			t.Logf("README line %d, not run (it %s): %s", c.line, why, c.text)
			checkFlags(t, c)
			continue
		}
		code, stdout, stderr := clitest.Run(t, env, c.args...)
		result := []byte(stdout)
		if c.out != "" {
			if err := os.WriteFile(c.out, result, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code != 0 || len(bytes.TrimSpace(result)) == 0 {
			t.Errorf("README line %d: %s\nexit %d, %d bytes of output\nstdout:\n%s\nstderr:\n%s", c.line, c.text, code, len(result), result, stderr)
			continue
		}
		ran[c.args[0]] = true
		t.Logf("README line %d: %s: %d bytes of output", c.line, c.text, len(result))
	}
	// What the README shows on the demo: every command that works from a
	// store or a dataset.
	for _, name := range []string{"demo", "status", "show", "parse", "stats", "estimate", "dataset", "report", "export", "sft", "gate", "topics", "pairs"} {
		if !ran[name] {
			t.Errorf("no README command runs curate %s on the demo store", name)
		}
	}
}

// checkFlags fails t unless a README command that does not run on the
// demo names a command and only that command's flags.
func checkFlags(t *testing.T, c readmeCommand) {
	t.Helper()
	fs := cli.CommandFlags(c.args[0])
	if fs == nil {
		t.Errorf("README line %d: %s: no command %q", c.line, c.text, c.args[0])
		return
	}
	args := c.args[1:]
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			t.Errorf("README line %d: %s: %v", c.line, c.text, err)
			return
		}
		if args = fs.Args(); len(args) > 0 {
			args = args[1:] // a positional argument
		}
	}
}
