package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// progress draws a one-line progress report on stderr when stderr is a
// terminal, and nothing otherwise, so that scripts and logs stay clean.
// The zero value (and a nil *progress) is silent.
type progress struct {
	w     io.Writer
	on    bool
	label string
	start time.Time
	last  time.Time
	drawn bool
}

// progressEvery rate-limits redraws: ten a second is smooth to the eye and
// costs nothing next to the work.
const progressEvery = 100 * time.Millisecond

// newProgress returns a progress line labelled label on w, enabled only if w
// is a terminal.
func newProgress(w io.Writer, label string) *progress {
	p := &progress{w: w, label: label, start: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.on = true
	}
	return p
}

// update redraws the line with done out of total units (total ≤ 0: unknown).
func (p *progress) update(done, total int, unit string) {
	if p == nil || !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	el := now.Sub(p.start).Truncate(100 * time.Millisecond)
	if total > 0 {
		const width = 24
		fill := min(width, done*width/total)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = ' '
			if i < fill {
				bar[i] = '='
			}
		}
		fmt.Fprintf(p.w, "\r%s [%s] %d/%d %s %v  ", p.label, bar, done, total, unit, el)
	} else {
		fmt.Fprintf(p.w, "\r%s %d %s %v  ", p.label, done, unit, el)
	}
	p.drawn = true
}

// done erases the line.
func (p *progress) done() {
	if p == nil || !p.on || !p.drawn {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K")
	p.drawn = false
}
