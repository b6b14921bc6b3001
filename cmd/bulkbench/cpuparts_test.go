package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/caffeine-go/caffeine/percolator"
)

// cpuParts sums a profile's CPU by part: the observer label first, else
// the outermost function a rule knows (a crawler's goroutine that reads
// Badger is the crawler's), else other; over every window's file.
func TestCPUParts(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location { // leaf first, as pprof has them
		var ls []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{ID: uint64(len(fn) + 1), Name: n}
			}
			ls = append(ls, &profile.Location{ID: uint64(len(fn)*100 + len(ls) + 1), Line: []profile.Line{{Function: fn[n]}}})
		}
		return ls
	}
	sample := func(ms int64, label string, stack ...string) *profile.Sample {
		s := &profile.Sample{Value: []int64{ms / 10, ms * 1e6}, Location: loc(stack...)}
		if label != "" {
			s.Label = map[string][]string{percolator.ProfileLabel: {label}}
		}
		return s
	}
	write := func(name string, samples ...*profile.Sample) string {
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 1e7,
			Sample: samples,
		}
		seen := map[uint64]bool{}
		for _, s := range samples {
			for _, l := range s.Location {
				p.Location = append(p.Location, l)
				for _, ln := range l.Line {
					if !seen[ln.Function.ID] {
						seen[ln.Function.ID] = true
						p.Function = append(p.Function, ln.Function)
					}
				}
			}
		}
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.pprof",
		sample(300, "parse", "runtime.memmove", "github.com/caffeine-go/caffeine/percolator.(*Worker).runTasks"),
		sample(200, "", "github.com/dgraph-io/badger/v4.(*Txn).Get", "github.com/caffeine-go/caffeine/crawl.(*Crawler).handle"),
		sample(100, "", "github.com/dgraph-io/badger/v4.(*levelsController).runCompactor"),
		sample(50, "", "main.main"),
		sample(30, "", "github.com/caffeine-go/caffeine/serving.(*Index).Apply", "github.com/caffeine-go/caffeine/serving/feed.(*Feeder).Run", "github.com/caffeine-go/caffeine/engine.(*Engine).Run.func4"),
		sample(20, "", "github.com/dgraph-io/badger/v4.(*Iterator).Seek", "github.com/caffeine-go/caffeine/engine.(*Engine).countPages", "github.com/caffeine-go/caffeine/engine.(*Engine).Run.func7"),
	)
	b := write("b.pprof",
		sample(100, "parse", "runtime.memmove"),
		sample(40, "", "runtime.gcBgMarkWorker"),
	)
	parts, err := cpuParts([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	want := []CPUPart{{"observer parse", 0.4}, {partCrawler, 0.2}, {partBadgerBg, 0.1}, {partOther, 0.05}, {partGC, 0.04}, {partFeeder, 0.03}, {partEngine, 0.02}}
	if len(parts) != len(want) {
		t.Fatalf("parts %v, want %v", parts, want)
	}
	for i := range want {
		if parts[i].Name != want[i].Name || !near(parts[i].Seconds, want[i].Seconds) {
			t.Errorf("part %d: %v, want %v", i, parts[i], want[i])
		}
	}

	var out bytes.Buffer
	printCPUParts(&out, Result{Mode: modeEngine, Pages: 100, Links: 1000, CPUSeconds: 0.9, CPUParts: parts})
	if s := out.String(); !strings.Contains(s, "| observer parse | 0.4 | 4 | 0.4 | 47.6% |") || !strings.Contains(s, "0.8 s sampled of 0.9 s used") {
		t.Errorf("printCPUParts:\n%s", s)
	}

	if _, err := cpuParts([]string{filepath.Join(t.TempDir(), "none.pprof")}); err == nil {
		t.Error("a missing profile: no error")
	}
}
