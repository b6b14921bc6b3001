package rank_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
)

// BenchmarkRank measures convergence from scratch on a random graph of
// 2,000 pages (about 8 links each): the pages are written and touched, and
// the clock runs until the worker is idle.
func BenchmarkRank(b *testing.B) {
	const n, deg = 2000, 8
	var runs, pages int64
	var elapsed, runTime time.Duration
	for range b.N {
		b.StopTimer()
		db := openDB(b)
		w := startWorker(b, db)
		g := randomWeb(rand.New(rand.NewPCG(3, 4)), n, deg)
		b.StartTimer()
		began := time.Now()
		web{}.write(b, db, g)
		waitIdle(b, w)
		elapsed += time.Since(began)
		b.StopTimer()
		s := stats(w)
		runs += s.Commits
		runTime += s.RunTime
		pages += int64(len(g))
		w.Close()
	}
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(runs)/float64(pages), "runs/page")
	b.ReportMetric(float64(runTime.Microseconds())/float64(runs), "µs/run")
}

// BenchmarkHubSolve measures a run of the block of a hub page that links
// every page of 50 sections of 200 pages (the blocks of other sections):
// the run looks up where each link leads. The page is touched and nothing
// changed, so the run sends nothing.
func BenchmarkHubSolve(b *testing.B) {
	const sections, per = 50, 200
	db := openDB(b)
	w := startWorker(b, db)
	hub := "http://h.test/"
	g := web{hub: ok()}
	for s := range sections {
		for p := range per {
			u := fmt.Sprintf("http://h.test/s%d/%d.html", s, p)
			next := fmt.Sprintf("http://h.test/s%d/%d.html", s, (p+1)%per)
			g[hub] = ok(append(g[hub].links, u)...)
			g[u] = ok(next, hub)
		}
	}
	web{}.write(b, db, g)
	waitIdle(b, w)
	var runTime time.Duration
	var runs int64
	b.ResetTimer()
	for range b.N {
		before := stats(w)
		err := db.Update(bg, func(tx *percolator.Tx) error { return rank.Touch(tx, row(b, hub)) })
		if err != nil {
			b.Fatal(err)
		}
		waitIdle(b, w)
		after := stats(w)
		runTime += after.RunTime - before.RunTime
		runs += after.Runs - before.Runs
	}
	b.ReportMetric(float64(runTime.Microseconds())/1000/float64(b.N), "ms/touch")
	b.ReportMetric(float64(runs)/float64(b.N), "runs/touch")
}
