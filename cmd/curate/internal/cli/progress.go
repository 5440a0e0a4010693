package cli

import (
	"log/slog"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress reports how far a command is: a bar on stderr when stderr is a
// terminal, otherwise an occasional one-line status in the log, so CI logs
// and cron mails stay readable.
type progress struct {
	bar   *progressbar.ProgressBar
	log   *slog.Logger
	what  string
	total int

	mu       sync.Mutex
	done     int
	lastLine time.Time
	every    time.Duration
}

func newProgress(env *Env, log *slog.Logger, total int, what string) *progress {
	p := &progress{log: log, what: what, total: total, every: 10 * time.Second, lastLine: time.Now()}
	if env.IsTerminal {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Add records n more items done; desc, when set, replaces the description
// (per-stage counts).
func (p *progress) Add(n int, desc string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.bar != nil {
		if desc != "" {
			p.bar.Describe(desc)
		}
		_ = p.bar.Add(n)
		return
	}
	if time.Since(p.lastLine) >= p.every || p.done == p.total {
		p.lastLine = time.Now()
		p.log.Info(p.what, "done", p.done, "of", p.total, "status", desc)
	}
}

// Finish removes the bar so the summary prints on a clean line.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
