package record

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/groundwork/curate/"

// goList runs go list with args in this package's directory and returns
// the module-relative paths it prints, one a line (packages outside the
// module left out).
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list record's imports: %v", err)
	}
	out, err := exec.Command(gobin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	var pkgs []string
	for _, line := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(line, module); ok {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}

// recordImports are the packages of the module record may import: store,
// through which the typed API reads and writes, and parse/arxiv, for arXiv
// IDs. Nothing else: record is the ground floor every stage stands on,
// and a client or a piece of machinery here would be under every stage.
var recordImports = []string{"parse/arxiv", "store"}

// TestImportsNoClientOrMachinery: record imports of the module only
// recordImports, and what comes with them holds no client and no package
// of internal/ but what store needs itself.
func TestImportsNoClientOrMachinery(t *testing.T) {
	for _, p := range goList(t, "-f", `{{join .Imports " "}}`, ".") {
		if !slices.Contains(recordImports, p) {
			t.Errorf("record imports %s; of the module it may import only %s", p, strings.Join(recordImports, ", "))
		}
	}
	allowed := map[string]bool{"record": true}
	for _, p := range goList(t, append([]string{"-deps"}, prefixed(recordImports)...)...) {
		allowed[p] = true
	}
	for _, p := range goList(t, "-deps", ".") {
		switch {
		case strings.HasPrefix(p, "client/"):
			t.Errorf("record depends on the client %s: clients convert their answers into record's shapes, not the other way", p)
		case p == "internal/httpx":
			t.Errorf("record depends on %s, the HTTP machinery", p)
		case !allowed[p]:
			t.Errorf("record depends on %s, which comes with none of %s", p, strings.Join(recordImports, ", "))
		}
	}
}

func prefixed(pkgs []string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = module + p
	}
	return out
}
