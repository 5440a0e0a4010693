package store

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// A record whose blob is lost or damaged is a *LostError naming it: an
// error (ErrCorrupt) in a store that does not heal, absent as well
// (ErrNotFound) in one that does, which logs it once however often it is
// read; a record written again reads whole.
func TestLostRecord(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"missing", "garbled"} {
		for _, heal := range []bool{false, true} {
			t.Run(how, func(t *testing.T) {
				s, err := Open(ctx, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				var logs bytes.Buffer
				if heal {
					s.Heal(slog.New(slog.NewTextHandler(&logs, nil)))
				}
				h, err := s.PutBytes(ctx, "https://arxiv.org/robots.txt", "robots-txt", []byte("User-agent: *"), nil)
				if err != nil {
					t.Fatal(err)
				}
				p := s.blobPath(h)
				if how == "missing" {
					err = os.Remove(p)
				} else {
					err = os.WriteFile(p, []byte("garbage"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					_, _, err := s.GetBytes(ctx, "https://arxiv.org/robots.txt", "robots-txt")
					var lost *LostError
					if !errors.As(err, &lost) || lost.Kind != "robots-txt" || lost.Blob != h || !errors.Is(err, ErrCorrupt) {
						t.Fatalf("GetBytes: %v, want a LostError", err)
					}
					if errors.Is(err, ErrNotFound) != heal {
						t.Errorf("ErrNotFound %v with heal %v", errors.Is(err, ErrNotFound), heal)
					}
					if !strings.Contains(err.Error(), `the stored robots-txt record of "https://arxiv.org/robots.txt" is lost or damaged`) {
						t.Errorf("message: %v", err)
					}
				}
				if n := strings.Count(logs.String(), "lost or damaged"); heal && n != 1 {
					t.Errorf("logged %d times, want once:\n%s", n, logs.String())
				}
				if _, err := s.PutBytes(ctx, "https://arxiv.org/robots.txt", "robots-txt", []byte("User-agent: *"), nil); err != nil {
					t.Fatal(err)
				}
				if b, _, err := s.GetBytes(ctx, "https://arxiv.org/robots.txt", "robots-txt"); err != nil || string(b) != "User-agent: *" {
					t.Errorf("after writing it again: %q %v", b, err)
				}
			})
		}
	}
}
