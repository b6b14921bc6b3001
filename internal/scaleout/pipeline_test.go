package scaleout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/corpus"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
)

// TestMain runs the tests against a Bigtable emulator: the one
// BIGTABLE_EMULATOR_HOST names, or one it builds and starts.
func TestMain(m *testing.M) { os.Exit(emulator.Main(m)) }

// build builds the commands into a temporary directory.
func build(t testing.TB) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/crawler", "../../cmd/indexer", "../../cmd/search")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// proc is a command running in the background; its output is kept.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func start(t testing.TB, bin, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(bin, strings.Fields(name)[0]), args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = emulator.ChildAttr()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, p.out.String())
		}
	})
	return p
}

// wait waits for the process to exit and returns its error.
func (p *proc) wait(t testing.TB, limit time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %v:\n%s", p.name, limit, p.out.String())
		return nil
	}
}

// stop ends the process with SIGTERM, as a user's Ctrl-C, and returns
// its error.
func (p *proc) stop(t testing.TB) error {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait(t, time.Minute)
}

// kill ends the process with SIGKILL: no cleanup at all.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	p.cmd.Process.Kill()
	<-p.done
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// stats is the part of search's /api/stats the tests read.
type stats struct {
	Pages       int    `json:"pages"`
	Indexed     int    `json:"indexed"`
	Pending     int    `json:"pending_notifications"`
	ExportQueue int    `json:"export_queue"`
	Idle        bool   `json:"idle"`
	Feeder      string `json:"feeder"`
}

// observerStats returns the observers' counts that search's /api/stats
// reports, a line an observer, or why it could not.
func observerStats(base string) string {
	var st struct {
		Observers []struct {
			Name      string  `json:"name"`
			Pending   int     `json:"pending"`
			Runs      int     `json:"runs"`
			Commits   int     `json:"commits"`
			Conflicts int     `json:"conflicts"`
			RunTime   float64 `json:"run_time_s"`
		} `json:"observers"`
	}
	if err := getJSON(base, "/api/stats", &st); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, o := range st.Observers {
		fmt.Fprintf(&b, "%-14s pending %5d  runs %6d  commits %6d  conflicts %5d  run time %7.1f s\n",
			o.Name, o.Pending, o.Runs, o.Commits, o.Conflicts, o.RunTime)
	}
	return b.String()
}

func getJSON(base, path string, v any) error {
	resp, err := http.Get(base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestPipeline runs the pipeline as separate processes on one emulator
// table over the PostgreSQL manual: search (the serving index and its
// feeder), two indexers and one crawler at once. Midway one indexer is
// killed with SIGKILL and another started. Once the crawl is done,
// indexer -until-idle returns, indexer -verify agrees, and search answers
// from the same table.
func TestPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole pipeline on the emulator")
	}
	bin := build(t)
	pages := corpus.Pages(t)
	site := httptest.NewServer(corpus.Handler(pages, nil))
	defer site.Close()
	table := fmt.Sprintf("bigtable://caffeine/emulator/pipeline-%d-%d", os.Getpid(), time.Now().UnixNano())
	addr := freeAddr(t)
	base := "http://" + addr

	search := start(t, bin, "search", "-table", table, "-data", t.TempDir(), "-no-crawl", "-addr", addr, "-q")
	indexers := []*proc{
		start(t, bin, "indexer 1", "-table", table),
		start(t, bin, "indexer 2", "-table", table),
	}
	crawler := start(t, bin, "crawler", "-table", table, "-seeds", site.URL+"/index.html", "-allow-private",
		"-delay", "0", "-parallel", "8", "-once", "-q", "-no-sitemaps")

	// Midway: kill one indexer, start another.
	// On a busy machine the chain may still be short of a quarter after
	// minutes (a section's first documents wait for its PageRank): the
	// kill then comes when the deadline passes, as long as the chain has
	// work left, which is what makes it midway.
	deadline := time.Now().Add(3 * time.Minute)
	var last string // the last answer of /api/stats, or its error
	for {
		var st stats
		err := getJSON(base, "/api/stats", &st)
		if err == nil && st.Indexed >= len(pages)/4 {
			t.Logf("%d pages fetched, %d indexed: killing indexer 1", st.Pages, st.Indexed)
			break
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%+v", st)
		}
		if time.Now().After(deadline) {
			if err != nil || st.Pages == 0 || st.Pending == 0 && st.Indexed == 0 {
				t.Fatalf("no progress in 3 minutes; /api/stats last said %s\ncrawler:\n%s", last, crawler.out.String())
			}
			t.Logf("%d pages fetched, %d indexed, %d notifications pending after 3 minutes: killing indexer 1", st.Pages, st.Indexed, st.Pending)
			break
		}
		time.Sleep(time.Second)
	}
	indexers[0].kill(t)
	indexers = append(indexers, start(t, bin, "indexer 3", "-table", table))

	if err := crawler.wait(t, 10*time.Minute); err != nil {
		t.Fatalf("crawler: %v\n%s", err, crawler.out.String())
	}
	began := time.Now()
	until := start(t, bin, "indexer -until-idle", "-table", table, "-until-idle")
	select {
	case <-until.done:
		if until.err != nil {
			t.Fatalf("indexer -until-idle: %v\n%s", until.err, until.out.String())
		}
	case <-time.After(10 * time.Minute):
		// Say what is left, how the observers fared (a run that keeps
		// conflicting, or takes minutes) and where the process waits.
		pending := start(t, bin, "indexer pending", "pending", "-table", table)
		pending.wait(t, 2*time.Minute)
		until.cmd.Process.Signal(syscall.SIGQUIT)
		<-until.done
		t.Fatalf("indexer -until-idle did not exit within 10 minutes; pending:\n%s\nobservers:\n%s", pending.out.String(), observerStats(base))
	}
	t.Logf("crawl done; the table was idle %v later", time.Since(began).Round(time.Millisecond))
	verify := start(t, bin, "indexer -verify", "-table", table, "-verify")
	if err := verify.wait(t, 10*time.Minute); err != nil {
		t.Fatalf("indexer -verify: %v\n%s", err, verify.out.String())
	}
	if !strings.Contains(verify.out.String(), "agrees") {
		t.Errorf("indexer -verify said:\n%s", verify.out.String())
	}

	// search serves what the table exported.
	var st stats
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if err := getJSON(base, "/api/stats", &st); err == nil && st.Idle && st.Indexed > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search not idle: %+v", st)
		}
		time.Sleep(time.Second)
	}
	t.Logf("search: %d pages, %d documents indexed, feeder %s", st.Pages, st.Indexed, st.Feeder)
	if st.Pages < len(pages)*9/10 || st.Indexed < len(pages)*9/10 {
		t.Errorf("search: %d pages, %d documents; the manual has %d pages", st.Pages, st.Indexed, len(pages))
	}
	var res struct {
		Total   int `json:"total"`
		Results []struct {
			URL string `json:"url"`
		} `json:"results"`
	}
	if err := getJSON(base, "/api/search?q="+url.QueryEscape("vacuum"), &res); err != nil {
		t.Fatal(err)
	}
	if res.Total == 0 || len(res.Results) == 0 {
		t.Errorf("vacuum: no hits")
	} else {
		t.Logf("vacuum: %d hits, first %s", res.Total, res.Results[0].URL)
	}

	for _, p := range append(indexers[1:], search) {
		if err := p.stop(t); err != nil {
			t.Errorf("%s: %v\n%s", p.name, err, p.out.String())
		}
	}
}
