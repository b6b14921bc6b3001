package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/percolator"
)

// reportProgress prints a line to w every interval until the returned
// function is called: the time since began, the pages fetched and the
// Bleve documents written, the worker's backlog, the notifications
// pending (as the worker's last pass over them saw), the resident set
// (anonymous and file-backed) and its peak so far, what the budget's
// trimmer dropped and paged out (trimNote), and each observer's runs so far, busiest
// first. A long run (the million-page fixture) shows what limits it as it
// goes, not only once idle. An interval of 0 prints nothing.
func reportProgress(e *engine.Engine, began time.Time, interval time.Duration, w io.Writer) (stop func()) {
	if interval <= 0 || w == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintln(w, progressLine(e, time.Since(began)))
			}
		}
	}()
	return func() { close(quit); <-done }
}

func progressLine(e *engine.Engine, elapsed time.Duration) string {
	anon, file := residentSet()
	fetched := e.Crawler.Stats().Fetched
	var b strings.Builder
	stats := e.Worker.Stats()
	var pending int64
	for _, o := range stats {
		pending += o.Pending
	}
	fmt.Fprintf(&b, "bulkbench: %4.0f s  fetched %d (%.0f/s)  applied %d  backlog %d  pending %d  rss %.0f+%.0f MB (peak %.0f%s)  runs",
		elapsed.Seconds(), fetched, float64(fetched)/elapsed.Seconds(), e.Feeder.Applied(), e.Worker.Backlog(), pending, anon, file, peakResident(), trimNote(trimStats()))
	slices.SortFunc(stats, func(a, b percolator.ObserverStats) int { return int(b.Runs - a.Runs) })
	for _, o := range stats {
		if o.Runs > 0 {
			fmt.Fprintf(&b, " %s %d", o.Name, o.Runs)
		}
	}
	return b.String()
}

// trimNote says what the trimmer did so far: its trims, the megabytes
// of held tables they dropped and of other mappings they paged out, the
// slowest, and the most the mapped files held over
// their limit when it looked (how far a burst outran it); "" before any.
func trimNote(st budget.TrimStats) string {
	if st.Trims == 0 && st.Over == 0 {
		return ""
	}
	return fmt.Sprintf("; trims %d: %.0f MB dropped, %.0f MB paged out, slowest %.0f ms, at most %.0f MB over", st.Trims, float64(st.Dropped)/(1<<20), float64(st.Paged)/(1<<20), float64(st.Slowest)/float64(time.Millisecond), float64(st.Over)/(1<<20))
}

// progressLog returns a logger for the engine that prints its records
// about the first load's course (the crawl's end, each stage's Before
// and drain, failures) to w between the progress lines, stamped with
// the seconds since began; nil without progress lines.
func progressLog(began time.Time, interval time.Duration, w io.Writer) *slog.Logger {
	if interval <= 0 || w == nil {
		return nil
	}
	return slog.New(&courseHandler{began: began, w: w, mu: new(sync.Mutex)})
}

// courseHandler is progressLog's handler: warnings and errors, and the
// Info records whose messages courseMessages name.
type courseHandler struct {
	began time.Time
	w     io.Writer
	attrs []slog.Attr
	mu    *sync.Mutex
}

var courseMessages = []string{"stage", "bulk crawl", "crawl done", "idle", "searches"}

func (h *courseHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *courseHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn && !slices.ContainsFunc(courseMessages, func(m string) bool { return strings.HasPrefix(r.Message, m) }) {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bulkbench: %4.0f s  %s", time.Since(h.began).Seconds(), r.Message)
	attr := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		attr(a)
	}
	r.Attrs(attr)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *courseHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(slices.Clip(h.attrs), as...)
	return &c
}

func (h *courseHandler) WithGroup(string) slog.Handler { return h }
