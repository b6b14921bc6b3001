package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/caffeine-go/caffeine/percolator"
)

// CPUPart is the CPU time a part of the process took in a run, from the
// run's CPU profile: an observer's runs (the worker labels them,
// percolator.ProfileLabel), or a part known by the functions on a
// sample's stack (partOf).
type CPUPart struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"s"`
}

// Parts not told by an observer label, known by a function on the
// sample's stack: the first rule of partRules whose substring a frame's
// function name holds, looking from the root of the stack to its leaf
// (so a crawler's read of Badger is the crawler's), past the engine's
// closures that start goroutines (launcher).
const (
	partCrawler  = "crawler (fetch, extract links, write pages)"
	partFeeder   = "feeder (read exports, Bleve analysis and batches)"
	partEngine   = "engine (page counts, stats, GC passes)"
	partBleveBg  = "Bleve merges and persistence"
	partBadgerBg = "Badger writes, flushes and compactions"
	partScan     = "notification scans, scheduling, idle checks"
	partGC       = "Go GC (background)"
	partOther    = "other"
)

var partRules = []struct{ fn, part string }{
	{"caffeine/crawl.", partCrawler},
	{"caffeine/serving/feed.", partFeeder},
	{"bleve_index_api.AnalysisWorker", partFeeder},
	{"caffeine/engine.", partEngine},
	{"bleve/v2/index/scorch.(*Scorch).mergerLoop", partBleveBg},
	{"bleve/v2/index/scorch.(*Scorch).persisterLoop", partBleveBg},
	{"bleve/v2/index/scorch.(*Scorch).introducerLoop", partBleveBg},
	{"caffeine/percolator.(*Worker)", partScan},
	{"dgraph-io/badger/v4", partBadgerBg},
	{"runtime.gcBgMarkWorker", partGC},
	{"runtime.bgsweep", partGC},
	{"runtime.bgscavenge", partGC},
}

// launcher is in the names of the engine's closures that start the
// other parts' goroutines (the crawler, the worker, the feeder): a stack
// under one is that part's, not the engine's.
const launcher = "caffeine/engine.(*Engine).Run.func"

// partOf is the part a sample belongs to.
func partOf(s *profile.Sample) string {
	if v := s.Label[percolator.ProfileLabel]; len(v) > 0 {
		return "observer " + v[0]
	}
	for i := len(s.Location) - 1; i >= 0; i-- {
		for _, l := range s.Location[i].Line {
			if l.Function == nil || strings.Contains(l.Function.Name, launcher) {
				continue
			}
			for _, r := range partRules {
				if strings.Contains(l.Function.Name, r.fn) {
					return r.part
				}
			}
		}
	}
	return partOther
}

// cpuParts sums the CPU time of the profiles in files by part, largest
// first.
func cpuParts(files []string) ([]CPUPart, error) {
	sums := make(map[string]float64)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cpu := -1
		for i, st := range p.SampleType {
			if st.Type == "cpu" && st.Unit == "nanoseconds" {
				cpu = i
			}
		}
		if cpu < 0 {
			return nil, fmt.Errorf("%s: not a CPU profile", name)
		}
		for _, s := range p.Sample {
			sums[partOf(s)] += float64(s.Value[cpu]) / 1e9
		}
	}
	parts := make([]CPUPart, 0, len(sums))
	for n, s := range sums {
		parts = append(parts, CPUPart{Name: n, Seconds: s})
	}
	slices.SortFunc(parts, func(a, b CPUPart) int {
		switch {
		case a.Seconds > b.Seconds:
			return -1
		case a.Seconds < b.Seconds:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return parts, nil
}

// printCPUParts prints r's CPU by part, a page and a link, and each
// part's share of the profiled CPU.
func printCPUParts(w io.Writer, r Result) {
	if len(r.CPUParts) == 0 {
		return
	}
	var total float64
	for _, p := range r.CPUParts {
		total += p.Seconds
	}
	fmt.Fprintf(w, "\n%s: CPU by part (from the run's CPU profile: %.1f s sampled of %.1f s used)\n\n", r.Mode, total, r.CPUSeconds)
	fmt.Fprintln(w, "| part | CPU s | ms a page | ms a link | share |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, p := range r.CPUParts {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f%% |\n", p.Name, num(p.Seconds), num(1000*perOf(p.Seconds, float64(r.Pages))),
			num(1000*perOf(p.Seconds, float64(r.Links))), 100*perOf(p.Seconds, total))
	}
}
