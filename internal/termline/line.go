// Package termline shares a terminal between log lines and one status
// line that is redrawn in place, as the crawler and search commands show
// their progress.
package termline

import (
	"io"
	"os"
	"sync"
)

// Writer shares the terminal between log lines and a status line: a log
// line erases the status line, is written, and the status is redrawn. Off
// a terminal (TTY false) it writes the log lines only.
type Writer struct {
	W   io.Writer
	TTY bool

	mu   sync.Mutex // guards line and writes to w
	line string
}

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.TTY && l.line != "" {
		io.WriteString(l.W, "\r\033[K")
	}
	n, err := l.W.Write(p)
	if l.TTY && l.line != "" {
		io.WriteString(l.W, l.line)
	}
	return n, err
}

// Status replaces the status line; "" erases it. Off a terminal it does
// nothing.
func (l *Writer) Status(s string) {
	if !l.TTY {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line = s
	io.WriteString(l.W, "\r\033[K"+s)
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
