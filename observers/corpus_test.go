package observers_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// corpusPages returns the PostgreSQL manual's pages by path.
func corpusPages(tb testing.TB) map[string][]byte {
	pages := make(map[string][]byte)
	for _, p := range corpus.Pages(tb) {
		pages[p.Path] = p.Body
	}
	return pages
}

// loadCorpus writes the pages under each host through loader transactions
// (100 pages a transaction), as the crawler would.
func loadCorpus(tb testing.TB, db *percolator.DB, pages map[string][]byte, hosts []string) int {
	tb.Helper()
	type item struct {
		row string
		b   []byte
	}
	var items []item
	for _, h := range hosts {
		for p, b := range pages {
			row, err := webtable.Row("http://" + h + "/docs/" + p)
			if err != nil {
				tb.Fatal(err)
			}
			items = append(items, item{row, b})
		}
	}
	now := []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))
	for i := 0; i < len(items); i += 100 {
		batch := items[i:min(i+100, len(items))]
		err := db.Update(context.Background(), func(tx *percolator.Tx) error {
			for _, it := range batch {
				tx.Set(it.row, webtable.Status, []byte("200"))
				tx.Set(it.row, webtable.Type, []byte("text/html"))
				tx.Set(it.row, webtable.FetchedAt, now)
				tx.Set(it.row, webtable.Body, it.b)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return len(items)
}

func openChain(tb testing.TB, workers int) (*percolator.DB, *percolator.Worker) {
	db, _ := percolatortest.Open(tb, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{Workers: workers, IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, chain()...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(w.Close) // before percolatortest's check of the table
	return db, w
}

// The whole PostgreSQL manual through the chain agrees with the batch
// recomputation; CHAIN_COPIES=9 loads it under 9 hosts, as BenchmarkChain
// does (every page with 8 duplicates).
func TestCorpusVerify(t *testing.T) {
	if os.Getenv("CAFFEINE_CORPUS") == "" {
		t.Skip("reads the whole corpus; set CAFFEINE_CORPUS=1 to run it")
	}
	pages := corpusPages(t)
	db, w := openChain(t, 16)
	hosts := []string{"pg.test"}
	if n, err := strconv.Atoi(os.Getenv("CHAIN_COPIES")); err == nil && n > 1 {
		hosts = hosts[:0]
		for i := range n {
			hosts = append(hosts, fmt.Sprintf("pg%d.test", i))
		}
	}
	n := loadCorpus(t, db, pages, hosts)
	w.Start()
	ctx, cancel := context.WithTimeout(bg, 10*time.Minute)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	diffs, b, err := observers.Verify(ctx, db, 0.01, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(b.Docs) < n/len(hosts)*9/10 {
		t.Fatalf("%d documents for %d pages", len(b.Docs), n)
	}
	t.Logf("%d pages, %d documents, batch took %s", n, len(b.Docs), b.Took)
}

// BenchmarkChain: the PostgreSQL corpus under 9 host prefixes (10,521
// pages, every page with 8 duplicates) loaded through loader transactions,
// then the whole chain run until idle. Reports pages/s and each observer's
// share of the time.
func BenchmarkChain(b *testing.B) {
	pages := corpusPages(b)
	copies := 9
	if n, err := strconv.Atoi(os.Getenv("CHAIN_COPIES")); err == nil {
		copies = n
	}
	var hosts []string
	for i := range copies {
		hosts = append(hosts, fmt.Sprintf("pg%d.test", i))
	}
	workers := 32
	if n, err := strconv.Atoi(os.Getenv("CHAIN_WORKERS")); err == nil {
		workers = n
	}
	for b.Loop() {
		b.StopTimer()
		db, w := openChain(b, workers)
		n := loadCorpus(b, db, pages, hosts)
		b.StartTimer()
		began, cpu0 := time.Now(), cpuTime()
		w.Start()
		if err := w.WaitIdle(context.Background()); err != nil {
			b.Fatal(err)
		}
		took := time.Since(began)
		b.ReportMetric(float64(n)/took.Seconds(), "pages/s")
		// CPU time of the process per page: steadier than pages/s on a
		// machine shared with other work.
		b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(n)*1e3, "cpu-ms/page")
		for _, s := range w.Stats() {
			b.ReportMetric(s.RunTime.Seconds()/float64(n)*1e3, s.Name+"-ms/page")
			b.ReportMetric(float64(s.Commits)/float64(n), s.Name+"-runs/page")
		}
		w.Close()
	}
}
