package crawl

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/caffeine-go/caffeine/webtable"
)

// BenchmarkCrawl crawls the PostgreSQL manual from a loopback server with
// our crawler (table, leases, loader transactions, robots, colly) and with
// a bare net/http + goquery crawler doing the same fetch-and-extract with
// the same concurrency and an in-memory visited set, in one run, and
// reports our rate as a fraction of the bare one's.
func BenchmarkCrawl(b *testing.B) {
	dir := corpus(b)
	srv := newSite(b)
	srv.mux.Handle("/", corpusServer(dir))
	seed := srv.URL + "/index.html"
	const concurrency = 8
	rates := map[string]float64{}

	b.Run("caffeine", func(b *testing.B) {
		var pages int64
		var elapsed time.Duration
		for b.Loop() {
			tb := openTable(b, "")
			opt := testOptions(seed)
			opt.Parallel, opt.Workers = concurrency, concurrency
			start := time.Now()
			c := tb.crawl(opt)
			elapsed += time.Since(start)
			pages += c.Stats().Fetched
			tb.close()
		}
		rates["caffeine"] = float64(pages) / elapsed.Seconds()
		b.ReportMetric(rates["caffeine"], "pages/s")
	})
	b.Run("bare", func(b *testing.B) {
		var pages int64
		var elapsed time.Duration
		for b.Loop() {
			start := time.Now()
			pages += int64(bareCrawl(b, seed, concurrency))
			elapsed += time.Since(start)
		}
		rates["bare"] = float64(pages) / elapsed.Seconds()
		b.ReportMetric(rates["bare"], "pages/s")
	})
	if rates["bare"] > 0 && rates["caffeine"] > 0 {
		b.Run("ratio", func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(rates["caffeine"]/rates["bare"], "caffeine/bare")
		})
	}
}

// bareCrawl is the baseline: workers fetch with net/http, parse with
// goquery, resolve and normalize a[href] links, keep the seed's host, and
// dedupe in a map. It returns the pages fetched.
func bareCrawl(b *testing.B, seed string, workers int) int {
	host := mustURL(b, seed).Host
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var (
		mu      sync.Mutex // guards seen, queue, pending
		cond    = sync.NewCond(&mu)
		seen    = map[string]bool{seed: true}
		queue   = []string{seed}
		pending = 1 // queued or in flight
		fetched int
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && pending > 0 {
					cond.Wait()
				}
				if pending == 0 {
					mu.Unlock()
					return
				}
				u := queue[0]
				queue = queue[1:]
				mu.Unlock()

				links := bareFetch(client, u, host)
				mu.Lock()
				fetched++
				for _, l := range links {
					if !seen[l] {
						seen[l] = true
						queue = append(queue, l)
						pending++
					}
				}
				pending--
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return fetched
}

func bareFetch(client *http.Client, u, host string) []string {
	resp, err := client.Get(u)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		return nil
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		return nil
	}
	base := resp.Request.URL
	var out []string
	doc.Find("a[href]").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		n, err := webtable.Resolve(base, href)
		if err != nil {
			return
		}
		if pu, err := url.Parse(n); err == nil && pu.Host == host {
			out = append(out, n)
		}
	})
	return out
}

func mustURL(b testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return u
}
