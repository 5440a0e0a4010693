package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/hostile"
	"github.com/groundwork/curate/sim"
)

// hostileResult is what one hostile input cost one curate command.
type hostileResult struct {
	Kind     string        `json:"kind"`
	Command  string        `json:"command"` // "parse", "fetch" or "fetch x2" (two pages at once)
	Bytes    int64         `json:"bytes"`
	Exit     int           `json:"exit"`
	Wall     time.Duration `json:"wall_ns"`
	MaxRSSKB int64         `json:"max_rss_kb"`
	Note     string        `json:"note,omitempty"` // what the Document's conversion says of the page
}

// benchHostile measures the peak RSS of `curate parse` and `curate fetch`
// (from a page archive: no request for the page) on each hostile page of
// package hostile at opt.hostileBytes, of `curate fetch` on two tiny-tag
// pages at once, and of `curate parse` on each hostile TEI. The inputs
// are written into the work directory and removed after.
func benchHostile(ctx context.Context, opt *options, res *results) error {
	dir := filepath.Join(opt.work, "hostile")
	arch := filepath.Join(dir, "archive")
	if err := os.MkdirAll(arch, 0o755); err != nil {
		return err
	}
	if !opt.keep {
		defer os.RemoveAll(dir)
	}
	// arXiv and ar5iv as curate's fetch sees them: a robots.txt that
	// allows everything, and no page (every page comes from the archive).
	srv := httptest.NewServer(sim.NewRobotsFile(http.StatusOK, "User-agent: *\nAllow: /\n").In(nil))
	defer srv.Close()
	net := []string{"--arxiv-base", srv.URL, "--ar5iv-base", srv.URL, "--arxiv-interval", "1ms"}

	write := func(name, kind string) (string, int64, error) {
		path := filepath.Join(arch, name)
		f, err := os.Create(path)
		if err != nil {
			return "", 0, err
		}
		err = hostile.Write(f, kind, opt.hostileBytes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		st, serr := os.Stat(path)
		if err == nil {
			err = serr
		}
		return path, st.Size(), err
	}
	run := func(kind, command string, size int64, args ...string) error {
		fmt.Fprintf(os.Stderr, "hostile: %s, curate %s\n", kind, command)
		r, err := runCurate(ctx, opt, benchEnv, args...)
		if err != nil {
			return err
		}
		hr := &hostileResult{Kind: kind, Command: command, Bytes: size, Exit: r.Exit, Wall: r.Wall, MaxRSSKB: r.MaxRSSKB}
		if command == "parse" {
			hr.Note = budgetNote(r.Stdout)
		}
		if r.Exit != 0 {
			hr.Note = strings.TrimSpace(tail(r.Stderr, 1))
		}
		res.Hostile = append(res.Hostile, hr)
		return nil
	}
	want := func(kind string) bool { return opt.hostileKinds == nil || opt.hostileKinds[kind] }
	for i, kind := range hostile.Pages {
		if !want(kind) {
			continue
		}
		id := fmt.Sprintf("2401.%05d", i+1)
		path, size, err := write(id+".html", kind)
		if err != nil {
			return err
		}
		if err := run(kind, "parse", size, "parse", "--compact", path); err != nil {
			return err
		}
		store := filepath.Join(dir, "store-"+kind)
		if err := run(kind, "fetch", size, append([]string{"fetch", "--store", store, "--html-archive", arch}, append(net, id)...)...); err != nil {
			return err
		}
		os.RemoveAll(store)
		if kind != hostile.TinyTags {
			os.Remove(path)
		}
	}
	if want(hostile.TinyTags) {
		// Two tiny-tag pages in flight at once.
		if _, _, err := write("2401.09999.html", hostile.TinyTags); err != nil {
			return err
		}
		store := filepath.Join(dir, "store-two")
		args := append([]string{"fetch", "--store", store, "--html-archive", arch, "--workers", "2"}, append(net, "2401.00001", "2401.09999")...)
		if err := run(hostile.TinyTags, "fetch x2", 2*int64(opt.hostileBytes), args...); err != nil {
			return err
		}
		os.RemoveAll(store)
	}
	for _, kind := range hostile.TEIs {
		if !want(kind) {
			continue
		}
		path, size, err := write(kind+".tei.xml", kind)
		if err != nil {
			return err
		}
		if err := run(kind, "parse", size, "parse", "--compact", path); err != nil {
			return err
		}
		os.Remove(path)
	}
	return nil
}

// budgetNote returns the conversion note of a parsed Document (curate
// parse's stdout) that says the parse was bounded, or "".
func budgetNote(stdout string) string {
	const key = `"notes":[`
	i := strings.Index(stdout, key)
	if i < 0 {
		return ""
	}
	rest := stdout[i+len(key):]
	for _, n := range strings.Split(rest[:strings.IndexByte(rest, ']')], `","`) {
		if strings.Contains(n, "budget") {
			return strings.Trim(n, `"`)
		}
	}
	return ""
}

func printHostile(w io.Writer, rs []*hostileResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "Hostile inputs (generated; peak RSS of the curate process):\n\n| input | command | MB | peak RSS | wall | exit |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %.1f | %.0f MB | %s | %d |\n", r.Kind, r.Command, float64(r.Bytes)/1e6, float64(r.MaxRSSKB)/1024, secs(r.Wall), r.Exit)
	}
	for _, r := range rs {
		if r.Note != "" {
			fmt.Fprintf(w, "%s, curate %s: %s\n", r.Kind, r.Command, r.Note)
		}
	}
	fmt.Fprintln(w)
}
