package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/internal/termline"
)

// On a terminal the probe's progress is a status line, redrawn in place.
func TestProbeProgressTerminal(t *testing.T) {
	var out bytes.Buffer
	w := &termline.Writer{W: &out, TTY: true}
	log := slog.New(slog.NewTextHandler(w, nil))
	p := probeProgress(w, log, time.Second)
	p(freshness.ProbeProgress{Queries: 2, QueriesDone: 1, Candidates: 40})
	p(freshness.ProbeProgress{Queries: 2, QueriesDone: 2, Candidates: 70, Sampled: 3})
	p(freshness.ProbeProgress{Queries: 2, QueriesDone: 2, Candidates: 70, Sampled: 3, Checked: 1, Fresh: 1})
	for _, want := range []string{"\r\033[Ksearching: 1 of 2 queries, 40 documents found",
		"checking a sample of indexed documents against the live pages", "sample=3",
		"\r\033[Kchecked 1 of 3  1 fresh  0 stale  0 skipped  about "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%q", want, out.String())
		}
	}
	if strings.Contains(out.String(), "msg=progress") {
		t.Errorf("progress logged on a terminal:\n%s", out.String())
	}
}
