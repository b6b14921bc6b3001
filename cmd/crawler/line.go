package main

import (
	"io"
	"sync"
)

// lineWriter shares the terminal between log lines and a status line: a
// log line erases the status line, is written, and the status is redrawn.
type lineWriter struct {
	w   io.Writer
	tty bool

	mu   sync.Mutex // guards line and writes to w
	line string
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty && l.line != "" {
		io.WriteString(l.w, "\r\033[K")
	}
	n, err := l.w.Write(p)
	if l.tty && l.line != "" {
		io.WriteString(l.w, l.line)
	}
	return n, err
}

// status replaces the status line; "" erases it.
func (l *lineWriter) status(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line = s
	io.WriteString(l.w, "\r\033[K"+s)
}
