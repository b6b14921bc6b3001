package crawl

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

const corpusName = "postgresql-15-docs"

// corpus unpacks the PostgreSQL manual (../shared/corpora from the repo
// root) into a temp dir and returns the directory of its pages, or skips.
func corpus(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("corpus: repo root (go.mod) not found")
		}
		dir = parent
	}
	archive := filepath.Join(dir, "..", "shared", "corpora", corpusName+".tar.gz")
	f, err := os.Open(archive)
	if err != nil {
		t.Skipf("corpus %s missing (expected at ../shared/corpora from the repo root): %v", corpusName, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(out, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, out+string(filepath.Separator)) {
			t.Fatalf("corpus entry %q escapes", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(name), 0o755)
			w, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	}
	return filepath.Join(out, corpusName)
}

// corpusPages lists the corpus's HTML files as URL paths.
func corpusPages(t testing.TB, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		out = append(out, "/"+filepath.Base(n))
	}
	return out
}

// corpusServer serves dir with http.FileServer, except that /index.html is
// served as is rather than redirected to "/" (which would make the root an
// alias of it).
func corpusServer(dir string) http.Handler {
	fs := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/index.html" {
			f, err := os.Open(filepath.Join(dir, "index.html"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer f.Close()
			st, _ := f.Stat()
			http.ServeContent(w, r, "index.html", st.ModTime(), f)
			return
		}
		fs.ServeHTTP(w, r)
	})
}

// hostLog records the hosts the crawler's transport was asked to reach.
type hostLog struct {
	base  http.RoundTripper
	mu    sync.Mutex // guards hosts
	hosts map[string]int
}

func (h *hostLog) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts[r.URL.Host]++
	h.mu.Unlock()
	return h.base.RoundTrip(r)
}

func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus crawl in -short")
	}
	dir := corpus(t)
	pages := corpusPages(t, dir)
	if len(pages) != 1169 {
		t.Fatalf("corpus has %d pages, want 1169", len(pages))
	}
	s := newSite(t)
	s.mux.Handle("/", corpusServer(dir))
	log := &hostLog{hosts: map[string]int{}}

	tb := openTable(t, "")
	opt := testOptions(s.URL + "/index.html")
	opt.Parallel, opt.Workers = 8, 8
	opt.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { log.base = rt; return log }
	start := time.Now()
	c := tb.crawl(opt)
	t.Logf("%d pages in %v: %+v", c.Stats().Fetched, time.Since(start), c.Stats())

	for _, p := range pages {
		if n := s.count(p); n != 1 {
			t.Errorf("%s fetched %d times", p, n)
		}
		if got := string(tb.get(s.URL+p, webtable.Status)); got != "200" {
			t.Errorf("%s status %q", p, got)
		}
	}
	loopback := strings.TrimPrefix(s.URL, "http://")
	if len(log.hosts) != 1 || log.hosts[loopback] == 0 {
		t.Errorf("hosts contacted: %v, want only %s", log.hosts, loopback)
	}
	for _, u := range tb.pages() {
		if !strings.HasPrefix(u, s.URL+"/") {
			t.Errorf("row for another host: %s", u)
		}
	}
}

// A crawl stopped midway and restarted on the same table fetches every page
// exactly once.
func TestRestart(t *testing.T) {
	s := newSite(t)
	const n = 300
	for i := range n {
		// A tree: page i links to 2i+1 and 2i+2, and back to the root.
		body := `<a href="/">home</a>`
		for _, k := range []int{2*i + 1, 2*i + 2} {
			if k < n {
				body += fmt.Sprintf(` <a href="/p%d.html">p%d</a>`, k, k)
			}
		}
		s.page(fmt.Sprintf("/p%d.html", i), body)
	}
	s.page("/", `<a href="/p0.html">start</a>`)
	dir := t.TempDir()
	opt := testOptions(s.URL + "/")
	opt.Parallel, opt.Workers = 4, 4

	// First run: stop it after 100 pages.
	tb := openTable(t, dir)
	c, err := New(tb.db, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- c.Run(ctx) }()
	for c.Stats().Fetched < 100 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	first := c.Stats().Fetched
	tb.close()

	// Second run on the reopened table, without seeds: resumes.
	tb = openTable(t, dir)
	opt.Seeds = nil
	c2 := tb.crawl(opt)
	t.Logf("first run %d pages, second %d", first, c2.Stats().Fetched)
	if first+c2.Stats().Fetched != n+1 {
		t.Errorf("fetched %d + %d, want %d", first, c2.Stats().Fetched, n+1)
	}
	for i := range n {
		p := fmt.Sprintf("/p%d.html", i)
		if got := s.count(p); got != 1 {
			t.Errorf("%s fetched %d times", p, got)
		}
	}
	if got := s.count("/"); got != 1 {
		t.Errorf("/ fetched %d times", got)
	}
}

// Two crawlers on one table never fetch a page twice: their claims
// conflict and the lease decides.
func TestTwoCrawlers(t *testing.T) {
	s := newSite(t)
	const n = 200
	var links strings.Builder
	for i := range n {
		fmt.Fprintf(&links, `<a href="/p%d">%d</a> `, i, i)
		s.mux.HandleFunc(fmt.Sprintf("/p%d", i), func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond) // long enough for both crawlers to get going
			w.Write([]byte(`<a href="/">home</a>`))
		})
	}
	s.page("/", links.String())
	tb := openTable(t, "")
	var wg sync.WaitGroup
	var stats [2]Stats
	for i := range 2 {
		opt := testOptions(s.URL + "/")
		opt.Parallel, opt.Workers = 4, 4
		c, err := New(tb.db, opt)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(context.Background()); err != nil {
				t.Error(err)
			}
			stats[i] = c.Stats()
		}()
	}
	wg.Wait()
	for i := range n {
		if got := s.count(fmt.Sprintf("/p%d", i)); got != 1 {
			t.Errorf("/p%d fetched %d times", i, got)
		}
	}
	if s.count("/") != 1 {
		t.Errorf("/ fetched %d times", s.count("/"))
	}
	t.Logf("crawler A %d pages, B %d", stats[0].Fetched, stats[1].Fetched)
	if stats[0].Fetched+stats[1].Fetched != n+1 {
		t.Errorf("fetched %d + %d, want %d", stats[0].Fetched, stats[1].Fetched, n+1)
	}
}
