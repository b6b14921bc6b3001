package rank_test

import (
	"math/rand/v2"
	"testing"
	"time"
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
