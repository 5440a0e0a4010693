// Package testneeds is how a test that needs something a fresh clone
// lacks (the shared fixtures, the JavaScript Parquet readers, python3)
// steps aside: it skips, saying why, and `go test ./...` ends with one
// line naming what was skipped and how to enable it; under CI=true it
// fails instead, so CI cannot pass while checks silently did not run.
//
// The line at the end: `go test ./...` shows nothing of a package that
// passes but its "ok" line (its output is buffered and dropped), so a
// skipping test cannot say it there. Instead, the first test of a `go
// test` invocation that skips starts a watcher process (the test binary
// itself, re-run with an environment variable this package's init reads)
// holding the go command's own standard error. The watcher waits for the
// go command to exit, then prints one line summing up what every test
// binary of the invocation recorded (one file per binary in a directory
// named after the go command's process) and removes the records. Because
// the records are gone when the next invocation starts, and a test opened
// them (in the module's .testneeds directory: the cache rechecks only
// files inside the module), the go command's test cache never reuses a
// result that skipped: a
// package that skipped runs again (and reports again) each time. This
// needs Linux's /proc (the go command's identity and its standard error);
// elsewhere, or when the test binary was not started by `go test`, a skip
// is an ordinary skip.
package testneeds

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Need is something a test needs that a fresh clone may lack.
type Need struct {
	// Name keys the need in the records.
	Name string
	// What is what the skipped tests needed, as the summary names it.
	What string
	// Enable says how to provide it.
	Enable string
}

// The needs of curate's tests.
var (
	Fixtures = Need{"fixtures", "the shared fixtures (../shared/fixtures)",
		"put the shared reference folder beside the repository or set CURATE_FIXTURES"}
	JSReaders = Need{"js-readers", "the hyparquet and DuckDB readers",
		"npm ci --prefix internal/readback/js, or make readback-deps"}
	Python = Need{"python3", "python3", "put python3 on PATH"}
)

// needs lists every Need, in the summary's order.
func needs() []Need { return []Need{Fixtures, JSReaders, Python} }

// CIEnv is the environment variable under which a missing need fails the
// test: CI=true, as CI services set it.
const CIEnv = "CI"

// watchEnv carries the records directory to the watcher process.
const watchEnv = "CURATE_TESTNEEDS_WATCH"

// maxWatch bounds the watcher's life should the go command never exit.
const maxWatch = 24 * time.Hour

// Skip skips tb for want of n, with the reason given by format and args
// (what was not found where), and records it for the summary at the end
// of `go test`; under CI=true it fails tb instead.
func Skip(tb testing.TB, n Need, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		tb.Fatalf("%s=%s: this test needs %s, which is missing (%s): %s", CIEnv, os.Getenv(CIEnv), n.What, reason, n.Enable)
	}
	record(tb.Name(), n)
	tb.Skipf("%s: skipping: needs %s (%s)", reason, n.What, n.Enable)
}

// InCI reports whether CI=true is set (a missing need is then a failure).
func InCI() bool {
	v, _ := strconv.ParseBool(os.Getenv(CIEnv))
	return v
}

// recordsDir is the directory, in the module, that holds the
// invocations' records. It must be in the module: the go command's test
// cache rechecks only the files a test opened inside the module (so it
// also never noticed ../shared/fixtures appearing after a cached skip).
const recordsDir = ".testneeds"

// root returns the records directory of the module holding the working
// directory.
func root() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	mod, ok := moduleRoot(wd)
	return filepath.Join(mod, recordsDir), ok
}

// record notes that test skipped for want of n, in this binary's file of
// the invocation's records, and makes sure a watcher will print the
// summary. It says nothing when it cannot: the skip itself still says
// why.
func record(test string, n Need) {
	pid, id, ok := goCommand()
	if !ok {
		return
	}
	records, ok := root()
	if !ok {
		return
	}
	dir := filepath.Join(records, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	pkg, _ := os.Getwd()
	if rel, err := filepath.Rel(filepath.Dir(records), pkg); err == nil {
		pkg = filepath.ToSlash(rel)
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+".txt")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s\t%s\t%s\n", n.Name, pkg, test)
	f.Close()
	// Opened by a test, the file enters the go command's test cache key;
	// the watcher removes it, so the next invocation runs this package
	// again instead of replaying a result that skipped.
	if f, err := os.Open(path); err == nil {
		f.Close()
	}
	startWatcher(dir, pid)
}

func init() {
	// The watcher is this test binary run again; it runs no test.
	if dir := os.Getenv(watchEnv); dir != "" {
		watch(dir, os.NewFile(3, "go test's stderr"))
		os.Exit(0)
	}
}

// watch waits for the go command whose records are in dir to exit, then
// writes the summary to out and removes the records (and the records of
// invocations whose go command is gone, left by a watcher that died).
func watch(dir string, out io.Writer) {
	pid, start, ok := parseID(filepath.Base(dir))
	if !ok {
		return
	}
	deadline := time.Now().Add(maxWatch)
	for alive(pid, start) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if line := Summary(readRecords(dir)); line != "" && out != nil {
		io.WriteString(out, line+"\n")
	}
	os.RemoveAll(dir)
	records := filepath.Dir(dir)
	entries, _ := os.ReadDir(records)
	for _, e := range entries {
		if p, s, ok := parseID(e.Name()); ok && !alive(p, s) {
			os.RemoveAll(filepath.Join(records, e.Name()))
		}
	}
	os.Remove(records) // when empty
}

func parseID(name string) (int, string, bool) {
	p, s, ok := strings.Cut(name, "-")
	pid, err := strconv.Atoi(p)
	return pid, s, ok && err == nil
}

// alive reports whether process pid runs and is the one started at start.
func alive(pid int, start string) bool {
	s, ok := startTime(pid)
	return ok && s == start
}

// Record is one skip: the need, the package and the test.
type Record struct{ Need, Package, Test string }

func readRecords(dir string) []Record {
	var out []Record
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if p := strings.Split(sc.Text(), "\t"); len(p) == 3 {
				out = append(out, Record{p[0], p[1], p[2]})
			}
		}
		f.Close()
	}
	return out
}

// Summary is the line that ends `go test` after tests skipped: per need,
// how many tests (in how many packages) skipped and how to enable them;
// "" without skips.
func Summary(recs []Record) string {
	tests := map[string]map[string]bool{}
	pkgs := map[string]map[string]bool{}
	for _, r := range recs {
		if tests[r.Need] == nil {
			tests[r.Need], pkgs[r.Need] = map[string]bool{}, map[string]bool{}
		}
		// A subtest and its parent are one test.
		top, _, _ := strings.Cut(r.Test, "/")
		tests[r.Need][r.Package+"."+top] = true
		pkgs[r.Need][r.Package] = true
	}
	if len(tests) == 0 {
		return ""
	}
	var parts []string
	known := map[string]bool{}
	for _, n := range needs() {
		known[n.Name] = true
		if t := len(tests[n.Name]); t > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s without %s (%s)", plural(t, "test"), plural(len(pkgs[n.Name]), "package"), n.What, n.Enable))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tests)) {
		if !known[name] {
			parts = append(parts, fmt.Sprintf("%s without %s", plural(len(tests[name]), "test"), name))
		}
	}
	return "go test: skipped " + strings.Join(parts, "; ") + "; under " + CIEnv + "=true they fail"
}

func plural(n int, word string) string {
	return fmt.Sprintf("%d %s", n, word+map[bool]string{true: "", false: "s"}[n == 1])
}

// moduleRoot walks up from dir to the directory holding go.mod.
func moduleRoot(dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
