package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/web"
)

// The status history survives a restart: samples taken before Close are
// there after Open, oldest first.
func TestHistorySurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, err := Open(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e.sample(ctx)
	}
	before := e.History()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	after := e.History()
	if len(before) != 3 || len(after) != 3 {
		t.Fatalf("%d samples before the restart, %d after", len(before), len(after))
	}
	for i := range after {
		if !after[i].Time.Equal(before[i].Time) || after[i].Pages != before[i].Pages {
			t.Errorf("sample %d: %+v, want %+v", i, after[i], before[i])
		}
	}
	e.sample(ctx)
	if h := e.History(); len(h) != 4 || !h[3].Time.After(h[2].Time) {
		t.Errorf("after a new sample: %d samples", len(h))
	}
}

// A line cut short by a crash is skipped; the file is compacted to the
// kept samples once it holds twice as many lines, and never grows past
// that.
func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), HistoryFile)
	good := `{"time":"2026-05-14T12:00:00Z","pages":1}` + "\n"
	if err := os.WriteFile(path, []byte(good+good+`{"time":"2026-05-14T12:00:05Z","pa`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &history{path: path}
	got, err := h.load()
	if err != nil || len(got) != 2 || got[0].Pages != 1 {
		t.Fatalf("load: %v, %v", got, err)
	}
	if h.lines != 3 {
		t.Errorf("lines %d", h.lines)
	}

	h = &history{path: filepath.Join(t.TempDir(), HistoryFile)}
	var kept []web.Sample
	t0 := time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC)
	for i := range 3 * keepSamples {
		s := web.Sample{Time: t0.Add(time.Duration(i) * time.Second), Pages: i}
		kept = append(kept, s)
		if len(kept) > keepSamples {
			kept = kept[1:]
		}
		if err := h.add(s, kept); err != nil {
			t.Fatal(err)
		}
		if h.lines >= 2*keepSamples {
			t.Fatalf("sample %d: %d lines", i, h.lines)
		}
	}
	b, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != h.lines {
		t.Errorf("%d lines in the file, %d counted", n, h.lines)
	}
	again := &history{path: h.path}
	got, err = again.load()
	if err != nil || len(got) != keepSamples || got[len(got)-1].Pages != 3*keepSamples-1 || got[0].Pages != 2*keepSamples {
		t.Errorf("reloaded %d samples, last %+v, %v", len(got), got[len(got)-1], err)
	}
}
