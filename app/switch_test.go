package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stageNameConsts are the constants that spell a stage's name, by the
// package that declares them.
var stageNameConsts = map[string][]string{
	"fetch":     {"Name", "SourcesName"},
	"citegraph": {"Name"},
	"classify":  {"Name"},
	"pdfs":      {"Name"},
	"summarize": {"Name"},
	"app":       {"Dataset"},
	"dataset":   {"Name"},
	"topics":    {"Name"},
	"pairs":     {"Name"},
	"sft":       {"Name"},
	"licenses":  {"Name"},
}

// No code outside the table decides anything by a stage's name: no switch
// case, comparison or membership test (slices.Contains, a has helper)
// against a stage name, whether spelled as a literal or as a stage
// package's Name constant. What differs between stages is declared by the
// stage (pipeline.Decl) or is a method it has; a new stage then touches
// only its package and its row.
func TestNoSwitchOnStageNames(t *testing.T) {
	names := Names()
	for _, d := range CorpusStages() {
		names = append(names, d.Name)
	}
	root := ".."
	fset := token.NewFileSet()
	var hits []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("app", "table.go") {
			return nil // the table names the stages
		}
		pkg := f.Name.Name
		isName := func(e ast.Expr) (string, bool) {
			switch e := e.(type) {
			case *ast.BasicLit:
				if e.Kind != token.STRING {
					return "", false
				}
				s, err := strconv.Unquote(e.Value)
				return s, err == nil && slices.Contains(names, s)
			case *ast.Ident: // a package's own constant
				return e.Name, slices.Contains(stageNameConsts[pkg], e.Name)
			case *ast.SelectorExpr:
				x, ok := e.X.(*ast.Ident)
				if !ok {
					return "", false
				}
				return x.Name + "." + e.Sel.Name, slices.Contains(stageNameConsts[x.Name], e.Sel.Name)
			}
			return "", false
		}
		hit := func(n ast.Node, what, name string) {
			hits = append(hits, fset.Position(n.Pos()).String()+": "+what+" "+name)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					if name, ok := isName(e); ok {
						hit(e, "case", name)
					}
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					break
				}
				for _, e := range []ast.Expr{n.X, n.Y} {
					if name, ok := isName(e); ok {
						hit(e, "comparison with", name)
					}
				}
			case *ast.CallExpr:
				fn := ""
				switch f := n.Fun.(type) {
				case *ast.Ident:
					fn = f.Name
				case *ast.SelectorExpr:
					fn = f.Sel.Name
				}
				if fn != "Contains" && fn != "Index" && fn != "has" {
					break
				}
				for _, e := range n.Args {
					if name, ok := isName(e); ok {
						hit(e, fn+" of", name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) > 0 {
		t.Errorf("code outside the stage table decides by a stage's name (declare it on the stage instead):\n  %s", strings.Join(hits, "\n  "))
	}
}
