package scaleout_test

import (
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/corpus"
)

// BenchmarkPipeline crawls and indexes the PostgreSQL manual on one
// emulator table with one crawler and 1, 2 and 3 indexer processes (and
// 2 with an oracle server, indexer oracle, instead of the table's oracle
// row), and reports pages a second from the crawler's start until indexer
// -until-idle returns (the whole table idle), and the Bigtable calls a
// page cost (all processes' "bigtable calls" log lines, logged by kind):
//
//	go test -run '^$' -bench Pipeline -benchtime 1x ./internal/scaleout/
//
// On a 2-core machine more indexers add overhead, not speed: they share
// the cores with the crawler and the emulator.
func BenchmarkPipeline(b *testing.B) {
	bin := build(b)
	pages := corpus.Pages(b)
	site := httptest.NewServer(corpus.Handler(pages, nil))
	defer site.Close()
	type setup struct {
		indexers int
		server   bool // timestamps from an oracle server (indexer oracle), not the table's row
	}
	for _, c := range []setup{{1, false}, {2, false}, {3, false}, {2, true}} {
		n := c.indexers
		name := fmt.Sprintf("indexers=%d", n)
		if c.server {
			name += "-oracle-server"
		}
		b.Run(name, func(b *testing.B) {
			var secs float64
			var calls int64
			byKind := map[string]map[string]int64{} // role → kind → calls
			for i := range b.N {
				table := fmt.Sprintf("bigtable://caffeine/emulator/bench-%d-%d-%d", os.Getpid(), n, i)
				tableArgs := []string{"-table", table}
				var oracle *proc
				if c.server {
					addr := freeAddr(b)
					oracle = start(b, bin, "indexer oracle", "oracle", "-table", table, "-listen", addr)
					tableArgs = append(tableArgs, "-oracle", addr)
				}
				began := time.Now()
				var indexers []*proc
				for k := range n {
					indexers = append(indexers, start(b, bin, fmt.Sprintf("indexer %d", k+1), tableArgs...))
				}
				crawler := start(b, bin, "crawler", append(tableArgs, "-seeds", site.URL+"/index.html", "-allow-private",
					"-delay", "0", "-parallel", "8", "-once", "-no-sitemaps")...)
				if err := crawler.wait(b, 20*time.Minute); err != nil {
					b.Fatalf("crawler: %v\n%s", err, crawler.out.String())
				}
				until := start(b, bin, "indexer -until-idle", append(tableArgs, "-until-idle")...)
				if err := until.wait(b, 20*time.Minute); err != nil {
					b.Fatalf("indexer -until-idle: %v\n%s", err, until.out.String())
				}
				secs += time.Since(began).Seconds()
				all := append(slices.Clone(indexers), crawler, until)
				if oracle != nil {
					all = append(all, oracle)
				}
				for _, p := range indexers {
					p.stop(b)
				}
				if oracle != nil {
					oracle.stop(b)
				}
				for _, p := range all {
					calls += p.calls()
					role := "indexers"
					switch p {
					case crawler:
						role = "crawler"
					case oracle:
						role = "oracle server"
					}
					if byKind[role] == nil {
						byKind[role] = map[string]int64{}
					}
					for k, v := range p.callsByKind() {
						byKind[role][k] += v
					}
				}
			}
			for _, role := range []string{"crawler", "indexers", "oracle server"} {
				if byKind[role] == nil {
					continue
				}
				var line []string
				for _, k := range slices.Sorted(maps.Keys(byKind[role])) {
					line = append(line, fmt.Sprintf("%s=%.1f", k, float64(byKind[role][k])/float64(len(pages)*b.N)))
				}
				b.Logf("%s calls a page: %s", role, strings.Join(line, " "))
			}
			b.ReportMetric(float64(len(pages)*b.N)/secs, "pages/s")
			b.ReportMetric(float64(calls)/float64(len(pages)*b.N), "calls/page")
			b.ReportMetric(0, "ns/op")
		})
	}
}

var callsTotal = regexp.MustCompile(`bigtable calls.* total=(\d+)`)

// calls returns the Bigtable calls the process logged at its exit.
func (p *proc) calls() int64 {
	var n int64
	for _, m := range callsTotal.FindAllStringSubmatch(p.out.String(), -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n += v
	}
	return n
}
