package testneeds

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		recs []Record
		want string
	}{
		{nil, ""},
		{[]Record{{"fixtures", "fetch", "TestA"}}, "go test: skipped 1 test in 1 package without " + Fixtures.What + " (" + Fixtures.Enable + "); under CI=true they fail"},
		{[]Record{
			{"js-readers", "dataset", "TestX/js"}, {"js-readers", "dataset", "TestX/js"}, {"js-readers", "dataset", "TestX/other"},
			{"fixtures", "fetch", "TestA"}, {"fixtures", "parse/latexml", "TestA"}, {"fixtures", "fetch", "TestB"},
			{"gpu", "x", "TestG"},
		}, "go test: skipped 3 tests in 2 packages without " + Fixtures.What + " (" + Fixtures.Enable + "); 1 test in 1 package without " +
			JSReaders.What + " (" + JSReaders.Enable + "); 1 test without gpu; under CI=true they fail"},
	}
	for _, tt := range tests {
		if got := Summary(tt.recs); got != tt.want {
			t.Errorf("Summary(%v)\n = %q\nwant %q", tt.recs, got, tt.want)
		}
	}
}

// sampleEnv makes TestSample skip for want of the fixtures; only
// TestEndOfGoTest sets it, in the go test it runs.
const sampleEnv = "CURATE_TESTNEEDS_SAMPLE"

func TestSample(t *testing.T) {
	if os.Getenv(sampleEnv) == "" {
		t.Skip("run by TestEndOfGoTest only")
	}
	Skip(t, Fixtures, "no fixtures at %s", "/nowhere")
}

// TestEndOfGoTest runs a plain `go test` of a package whose test skips
// for want of the fixtures: the go command's output ends with the one
// summary line, a second run reruns the package (the test cache does not
// replay a skip) and says it again, and under CI=true the test fails,
// naming what it needs.
func TestEndOfGoTest(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the summary needs Linux's /proc")
	}
	if testing.Short() {
		t.Skip("runs go test twice")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	gotest := func(env ...string) (string, error) {
		cmd := exec.Command(goBin, "test", "-run", "^TestSample$", ".")
		cmd.Env = append(os.Environ(), append([]string{sampleEnv + "=1", "CI="}, env...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out // one stream, as a CI log has it
		cmd.WaitDelay = time.Minute         // the watcher holds stderr until it has written
		err := cmd.Run()
		return out.String(), err
	}
	want := Summary([]Record{{Fixtures.Name, "internal/testneeds", "TestSample"}})
	for run := range 2 {
		out, err := gotest()
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || lines[len(lines)-1] != want || strings.Contains(out, "(cached)") {
			t.Fatalf("go test, run %d: %v; want the last line %q\n%s", run+1, err, want, out)
		}
		if !strings.HasPrefix(lines[len(lines)-2], "ok  \tgithub.com/groundwork/curate/internal/testneeds") {
			t.Errorf("run %d: the summary does not follow the go command's own output:\n%s", run+1, out)
		}
	}
	out, err := gotest("CI=true")
	if err == nil || !strings.Contains(out, "CI=true: this test needs "+Fixtures.What) || strings.Contains(out, "go test: skipped") {
		t.Errorf("go test under CI=true: %v\n%s", err, out)
	}
}
