package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawStoreCalls are the store's methods that take a kind's name and
// bytes or any value: outside store and record, records are read and
// written through a Kind or BytesKind instead, whose shape is declared
// once, here.
var rawStoreCalls = map[string]bool{"GetJSON": true, "PutJSON": true, "GetBytes": true, "PutBytes": true}

// declaring are record's functions that declare a kind.
var declaring = map[string]bool{"KindOf": true, "BytesKindOf": true}

// notYet are files that still read and write a kind of their own: the
// LLM cache is declared in record once its rework (branch llm23) is
// merged.
var notYet = map[string]bool{"client/llm/cache.go": true}

// TestKindsDeclaredInRecord: no code of the module outside record and
// store (tests aside) declares a stored kind or reads and writes the
// store by a kind's name, so every kind curate stores, and its shape, is
// declared in this package.
func TestKindsDeclaredInRecord(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == "record" || rel == "store" || name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || notYet[rel] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		recordName := ""
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == module+"record" {
				recordName = "record"
				if im.Name != nil {
					recordName = im.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fun := call.Fun
			if ix, ok := fun.(*ast.IndexExpr); ok { // KindOf[T](...)
				fun = ix.X
			}
			sel, ok := fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pos := fset.Position(call.Pos())
			where := rel + ":" + strconv.Itoa(pos.Line)
			if x, ok := sel.X.(*ast.Ident); ok && recordName != "" && x.Name == recordName && declaring[sel.Sel.Name] {
				t.Errorf("%s: declares a stored kind (record.%s) outside record: declare it in record", where, sel.Sel.Name)
			}
			if rawStoreCalls[sel.Sel.Name] {
				t.Errorf("%s: %s reads or writes the store by a kind's name: go through the kind declared in record", where, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked %d files under %s: not the module", files, root)
	}
}
