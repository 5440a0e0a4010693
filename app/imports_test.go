package app

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stagePackages are the packages that implement a stage, read off the
// tables (the package of each row's type) and the dataset's: a stage
// added as a row is guarded without a word here. The composition (this
// package) is the only code that joins them.
func stagePackages() []string {
	out := []string{"dataset"}
	for _, s := range append(builtin(), corpus(&App{}, CorpusOptions{})...) {
		t := reflect.TypeOf(s)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if p, ok := strings.CutPrefix(t.PkgPath(), module); ok && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

const module = "github.com/groundwork/curate/"

// TestStagesImportNoStage: no stage package depends, directly or through
// other packages of the module, on another stage (their sub-packages
// included): what two stages share lives in record or a package of its
// own. Test files may build fixtures with another stage.
func TestStagesImportNoStage(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{} // module-relative dir -> module-relative imports
	var load func(dir string)
	load = func(dir string) {
		if _, ok := imports[dir]; ok {
			return
		}
		imports[dir] = nil
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatalf("read package %s: %v", dir, err)
		}
		fset := token.NewFileSet()
		var deps []string
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(root, dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if rel, ok := strings.CutPrefix(p, module); ok && !slices.Contains(deps, rel) {
					deps = append(deps, rel)
				}
			}
		}
		imports[dir] = deps
		for _, d := range deps {
			load(d)
		}
	}
	stages := stagePackages()
	if len(stages) < 10 || !slices.Contains(stages, "summarize") || slices.Contains(stages, "internal/pipeline") {
		t.Fatalf("stage packages %q: not read off the tables", stages)
	}
	stageOf := func(dir string) string {
		for _, s := range stages {
			if dir == s || strings.HasPrefix(dir, s+"/") {
				return s
			}
		}
		return ""
	}
	for _, stage := range stages {
		load(stage)
		// Walk the dependencies, remembering how each was reached.
		via := map[string]string{stage: ""}
		queue := []string{stage}
		for len(queue) > 0 {
			dir := queue[0]
			queue = queue[1:]
			for _, d := range imports[dir] {
				if _, seen := via[d]; seen {
					continue
				}
				via[d] = dir
				if other := stageOf(d); other != "" && other != stage {
					path := []string{d}
					for p := dir; p != ""; p = via[p] {
						path = append([]string{p}, path...)
					}
					t.Errorf("stage %s depends on stage %s: %s", stage, other, strings.Join(path, " -> "))
					continue
				}
				queue = append(queue, d)
			}
		}
	}
}

// maxDepth bounds the chain of the module's imports below the
// composition root (this package): stages, then clients and parsers,
// then record and store, then machinery.
const maxDepth = 6

// TestImportDepth: no chain of the module's packages this package
// imports, directly or through others, is longer than maxDepth packages
// (this one not counted). The deepest is logged (go test -v -run
// TestImportDepth shows it).
func TestImportDepth(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	self := ""
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		rel, ok := strings.CutPrefix(f[0], module)
		if !ok {
			continue
		}
		self = rel // go list -deps prints the package itself last
		for _, p := range f[1:] {
			if d, ok := strings.CutPrefix(p, module); ok {
				imports[rel] = append(imports[rel], d)
			}
		}
	}
	deepest := map[string][]string{} // package -> its longest chain, itself first
	var chain func(p string) []string
	chain = func(p string) []string {
		if c, ok := deepest[p]; ok {
			return c
		}
		best := []string{p}
		for _, d := range imports[p] {
			if c := chain(d); len(c)+1 > len(best) {
				best = append([]string{p}, c...)
			}
		}
		deepest[p] = best
		return best
	}
	c := chain(self)
	t.Logf("deepest chain: %d packages below %s: %s", len(c)-1, self, strings.Join(c, " -> "))
	if len(c)-1 > maxDepth {
		t.Errorf("%s imports a chain of %d packages (%s), more than %d", self, len(c)-1, strings.Join(c, " -> "), maxDepth)
	}
}
