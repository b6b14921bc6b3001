package scaleout_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/webtable"
)

// BenchmarkIdle measures what an idle deployment costs the table: N
// indexer and N search processes (N = 1 and 3) on a table of 2,000 and
// 20,000 pages with nothing to do, for IDLE_SECONDS (default 150); it
// reports the Bigtable calls a second of all of them, by kind (each
// process's "bigtable calls" line at exit), ReadRows(all) being the scans
// of the whole table:
//
//	go test -run '^$' -bench Idle -benchtime 1x -timeout 60m ./internal/scaleout/
func BenchmarkIdle(b *testing.B) {
	bin := build(b)
	window := 150 * time.Second
	if s, err := strconv.Atoi(os.Getenv("IDLE_SECONDS")); err == nil && s > 0 {
		window = time.Duration(s) * time.Second
	}
	for _, rows := range []int{2000, 20000} {
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("pages=%d/processes=%dx2", rows, n), func(b *testing.B) {
				byKind := make(map[string]int64)
				for i := range b.N {
					name := fmt.Sprintf("idle-%d-%d-%d-%d", os.Getpid(), rows, n, i)
					fill(b, name, rows)
					table := "bigtable://caffeine/emulator/" + name
					var ps []*proc
					for k := range n {
						ps = append(ps, start(b, bin, fmt.Sprintf("indexer %d", k+1), "-table", table))
						ps = append(ps, start(b, bin, fmt.Sprintf("search %d", k+1), "-table", table, "-data", b.TempDir(),
							"-no-crawl", "-addr", freeAddr(b)))
					}
					time.Sleep(window)
					for _, p := range ps {
						if err := p.stop(b); err != nil {
							b.Fatalf("%s: %v\n%s", p.name, err, p.out.String())
						}
						for k, v := range p.callsByKind() {
							byKind[k] += v
						}
					}
				}
				secs := window.Seconds() * float64(b.N)
				var line []string
				for _, k := range slices.Sorted(maps.Keys(byKind)) {
					b.ReportMetric(float64(byKind[k])/secs, strings.ReplaceAll(k, " ", "_")+"/s")
					line = append(line, fmt.Sprintf("%s %.2f", k, float64(byKind[k])/secs))
				}
				b.Logf("calls/s: %s", strings.Join(line, ", "))
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// fill writes rows pages (a fetch time and 1 KB of headers each, no
// observed column) into a new table of the emulator.
func fill(b *testing.B, table string, rows int) {
	b.Helper()
	ctx := context.Background()
	st, err := bigtable.Open(ctx, bigtable.Config{Project: "caffeine", Instance: "emulator", Table: table})
	if err != nil {
		b.Fatal(err)
	}
	db, err := percolator.Open(ctx, st, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		st.Close()
		b.Fatal(err)
	}
	defer st.Close()
	defer db.Close()
	headers := []byte(`{"x":"` + strings.Repeat("h", 1000) + `"}`)
	const batch = 200
	var g errgroup.Group
	g.SetLimit(8)
	for from := 0; from < rows; from += batch {
		g.Go(func() error {
			return db.Update(ctx, func(tx *percolator.Tx) error {
				for i := from; i < min(from+batch, rows); i++ {
					row := fmt.Sprintf("http/example.com/p%06d", i)
					if err := tx.Set(row, webtable.FetchedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10))); err != nil {
						return err
					}
					if err := tx.Set(row, webtable.Headers, headers); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

var callsLine = regexp.MustCompile(`bigtable calls.*`)
var callsPair = regexp.MustCompile(`("[^"]+"|[A-Za-z()]+)=(\d+)`)

// callsByKind returns the Bigtable calls the process logged at its exit,
// by kind, with "total".
func (p *proc) callsByKind() map[string]int64 {
	out := make(map[string]int64)
	for _, line := range callsLine.FindAllString(p.out.String(), -1) {
		for _, m := range callsPair.FindAllStringSubmatch(line, -1) {
			v, _ := strconv.ParseInt(m[2], 10, 64)
			out[strings.Trim(m[1], `"`)] += v
		}
	}
	return out
}
