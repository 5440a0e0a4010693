package cli_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxRunLines bounds each command's Run: flags into the app's options,
// one call, the outcome printed. What a command does beyond that belongs
// in app.
const maxRunLines = 30

// TestRunIsThin: every Run method of a cmd_*.go file is at most
// maxRunLines lines long, its signature and closing brace included.
func TestRunIsThin(t *testing.T) {
	files, err := filepath.Glob("cmd_*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("command files: %v %v", files, err)
	}
	fset := token.NewFileSet()
	runs := 0
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Run" {
				continue
			}
			runs++
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxRunLines {
				t.Errorf("%s: %s's Run is %d lines, more than %d: move its work into app", f, recvName(fd), n, maxRunLines)
			}
		}
	}
	if runs < 15 {
		t.Errorf("found %d Run methods: the commands have moved?", runs)
	}
}

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// forbidden are what a command must not touch: the App itself (its store,
// clients, stages) and the ways to open a store.
var forbidden = map[string]bool{"app.App": true, "app.Open": true, "app.OpenStore": true, "app.OpenStoreReadOnly": true,
	"app.LockStore": true, "store.Open": true, "store.OpenExisting": true, "store.OpenReadOnly": true}

// TestCommandsOpenNothing: no command opens a store, holds an App (and
// so wires a stage or reads a ledger): app does, in the one call each
// command makes.
func TestCommandsOpenNothing(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && forbidden[x.Name+"."+sel.Sel.Name] {
					t.Errorf("%s: %s.%s: a command opens nothing; move it into app", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}
