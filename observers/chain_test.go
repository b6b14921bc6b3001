package observers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/internal/testsite"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

var bg = context.Background()

// chain is the indexing chain as cmd/indexer runs it.
func chain() []percolator.Observer { return observers.Chain() }

type env struct {
	t  *testing.T
	db *percolator.DB
	w  *percolator.Worker
}

func newEnv(t *testing.T) *env {
	db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	// As the processes do at their start (webtable.Spread).
	if _, err := webtable.Spread(bg, db); err != nil {
		t.Fatal(err)
	}
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, chain()...)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(w.Close) // before percolatortest's check of the table
	return &env{t, db, w}
}

// fetch writes a page as the crawler's loader transaction does.
func (e *env) fetch(url string, status int, body string, extra ...string) {
	e.t.Helper()
	row, err := webtable.Row(url)
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.db.Update(bg, func(tx *percolator.Tx) error {
		tx.Set(row, webtable.Status, []byte(strconv.Itoa(status)))
		tx.Set(row, webtable.Type, []byte("text/html; charset=utf-8"))
		tx.Set(row, webtable.FetchedAt, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10)))
		for i := 0; i+1 < len(extra); i += 2 {
			tx.Set(row, extra[i], []byte(extra[i+1]))
		}
		if status >= 200 && status < 300 {
			return tx.Set(row, webtable.Body, []byte(body))
		}
		return tx.Delete(row, webtable.Body)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) idle() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	if err := e.w.WaitIdle(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) get(url, col string) string {
	e.t.Helper()
	row, _ := webtable.Row(url)
	var v []byte
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		var err error
		v, err = tx.Get(bg, row, col)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return string(v)
}

// index replays the export queue the way serving does: in row order, newest
// version per document wins.
func (e *env) index() map[string]*webtable.Doc {
	e.t.Helper()
	idx := make(map[string]*webtable.Doc)
	ver := make(map[string]uint64)
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		return tx.Scan(bg, webtable.ExportPrefix, webtable.ExportPrefix+"\xff", webtable.ExportDoc, func(_, _ string, v []byte) bool {
			var x webtable.Export
			if err := json.Unmarshal(v, &x); err != nil {
				e.t.Fatal(err)
			}
			if x.Version < ver[x.URL] {
				return true
			}
			ver[x.URL] = x.Version
			if x.Op == webtable.OpDelete {
				delete(idx, x.URL)
			} else {
				idx[x.URL] = x.Doc
			}
			return true
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return idx
}

// page is an HTML page with links given as href, anchor pairs.
func page(title, text string, links ...string) string { return testsite.Page(title, text, links...) }

func keys(m map[string]*webtable.Doc) []string {
	var k []string
	for u := range m {
		k = append(k, u)
	}
	slices.Sort(k)
	return k
}

func anchors(d *webtable.Doc) []string {
	var out []string
	for _, a := range d.Anchors {
		out = append(out, a.Text+"<"+a.From)
	}
	return out
}

// The parse observer honours robots rules as the crawler does (package
// extract): for all robots and for extract.Agent, not for other robots.
func TestParseRobotsAgent(t *testing.T) {
	e := newEnv(t)
	const h = "http://robots.test"
	e.fetch(h+"/ours", 200, `<meta name="caffeine-crawler" content="noindex, nofollow"><p>ours</p><a href="/x">x</a>`)
	e.fetch(h+"/all", 200, `<meta name="ROBOTS" content="noindex"><p>all</p><a href="/x">x</a>`)
	e.fetch(h+"/other", 200, `<meta name="googlebot" content="noindex, nofollow"><p>other</p><a href="/x">x</a>`)
	e.idle()
	for u, want := range map[string]string{"/ours": webtable.StateNoIndex, "/all": webtable.StateNoIndex, "/other": webtable.StateOK} {
		if got := e.get(h+u, webtable.State); got != want {
			t.Errorf("%s state %q, want %q", u, got, want)
		}
	}
	if got := e.get(h+"/other", webtable.Links); !strings.Contains(got, h+"/x") {
		t.Errorf("/other links %q", got)
	}
}

func TestChainFixtureWeb(t *testing.T) {
	e := newEnv(t)
	const h = "http://site.test"
	e.fetch(h+"/", 200, page("Home", "welcome home", "/a", "Alpha", "/dup1", "Copy one", "/old", "Old link"))
	e.fetch(h+"/a", 200, page("Alpha", "alpha page text", "/", "Back home"))
	e.fetch(h+"/dup1", 200, page("Same", "identical   CONTENT here", "/a", "alpha from dup"))
	e.fetch(h+"/dup-longer", 200, page("Same", "identical content here", "/a", "alpha from dup"))
	e.fetch(h+"/old", 301, "", webtable.Redirect, h+"/a")
	e.fetch(h+"/gone", 404, "")
	e.fetch(h+"/secret", 200, `<html><head><meta name="robots" content="noindex"></head><body>hidden</body></html>`)
	e.idle()

	for u, want := range map[string]string{
		"/": "ok", "/a": "ok", "/dup1": "ok", "/dup-longer": "ok", "/old": "redirect", "/gone": "gone", "/secret": "noindex",
	} {
		if got := e.get(h+u, webtable.State); got != want {
			t.Errorf("%s state %q, want %q", u, got, want)
		}
	}
	idx := e.index()
	if got := fmt.Sprint(keys(idx)); got != "["+h+"/ "+h+"/a "+h+"/dup1]" {
		t.Fatalf("indexed %s", got)
	}
	d := idx[h+"/dup1"]
	if d.ClusterSize != 2 || fmt.Sprint(d.Duplicates) != "["+h+"/dup-longer]" {
		t.Errorf("dup1 cluster size %d duplicates %v", d.ClusterSize, d.Duplicates)
	}
	// /a gets anchors from home, from the duplicate cluster (via its
	// canonical), and through the redirect /old.
	if got := fmt.Sprint(anchors(idx[h+"/a"])); got != "[Alpha<"+h+"/ Old link<"+h+"/ alpha from dup<"+h+"/dup1]" {
		t.Errorf("anchors of /a: %s", got)
	}
	if d := idx[h+"/"]; d.Title != "Home" || d.Text != "Home welcome home Alpha Copy one Old link" && !strings.Contains(d.Text, "welcome home") {
		t.Errorf("home doc %+v", d)
	}

	// A new link to the duplicate that is not canonical reaches the
	// canonical's document.
	e.fetch(h+"/fan", 200, page("Fan", "a fan of the copy", "/dup-longer", "to the copy"))
	e.idle()
	if got := fmt.Sprint(anchors(e.index()[h+"/dup1"])); !strings.Contains(got, "to the copy<"+h+"/fan") {
		t.Errorf("anchors of /dup1 after a link to its duplicate: %s", got)
	}

	// Content changes: the shorter duplicate leaves the cluster, the longer
	// one becomes canonical of the old cluster, both indexed.
	e.fetch(h+"/dup1", 200, page("Now different", "brand new words"))
	e.idle()
	idx = e.index()
	if got := fmt.Sprint(keys(idx)); got != "["+h+"/ "+h+"/a "+h+"/dup-longer "+h+"/dup1 "+h+"/fan]" {
		t.Fatalf("after change indexed %s", got)
	}
	if d := idx[h+"/dup-longer"]; d.ClusterSize != 1 || len(d.Duplicates) != 0 {
		t.Errorf("dup-longer %+v", d)
	}
	if idx[h+"/dup1"].Title != "Now different" {
		t.Errorf("dup1 not re-exported: %+v", idx[h+"/dup1"])
	}

	// A page that goes away leaves the index, and its anchors leave their
	// targets.
	e.fetch(h+"/", 410, "")
	e.idle()
	idx = e.index()
	if _, ok := idx[h+"/"]; ok {
		t.Fatal("410 page still indexed")
	}
	if got := fmt.Sprint(anchors(idx[h+"/a"])); got != "[alpha from dup<"+h+"/dup-longer]" {
		t.Errorf("anchors of /a after home vanished: %s", got)
	}
	if got := e.get(h+"/a", webtable.InPrefix+mustRow(h+"/")); got != "" {
		t.Errorf("stale inverted link %q", got)
	}

	// A new redirect to a page exported before (so known to have no
	// aliases) brings the anchors of links to it.
	e.fetch(h+"/new", 301, "", webtable.Redirect, h+"/dup-longer")
	e.fetch(h+"/linker", 200, page("Linker", "links through a redirect", "/new", "Via new"))
	e.idle()
	if got := fmt.Sprint(anchors(e.index()[h+"/dup-longer"])); !strings.Contains(got, "Via new<"+h+"/linker") {
		t.Errorf("anchors of /dup-longer after a new redirect: %s", got)
	}

	// Exports write their pages' rows and the queue: no row that every
	// export of a host would write (such a row makes the host's exports
	// conflict with each other).
	internal := 0
	err := e.db.View(bg, func(tx *percolator.Tx) error {
		return tx.Scan(bg, "!", "!~", "", func(row, col string, _ []byte) bool {
			internal++
			known := false
			for _, p := range []string{webtable.ExportPrefix, webtable.ClusterPrefix, webtable.MemberRowPrefix, webtable.AliasRowPrefix, "!rank/"} {
				known = known || strings.HasPrefix(row, p)
			}
			if row != webtable.SchemaRow && !known {
				t.Errorf("a chain run wrote %s %s", row, col)
			}
			return true
		})
	})
	if err != nil || internal == 0 {
		t.Fatalf("scan of the internal rows: %d cells, %v", internal, err)
	}
}

func mustRow(u string) string {
	r, _ := webtable.Row(u)
	return r
}

// A new page's document is built once in the foreground: when its
// election completes it, not also when it is parsed or first ranked
// (both before it can have a document).
func TestNewPageExportedOnce(t *testing.T) {
	e := newEnv(t)
	urls := []string{"http://example.com/a", "http://example.com/b", "http://example.com/c"}
	for i, u := range urls {
		next := urls[(i+1)%len(urls)]
		e.fetch(u, 200, page("Page "+u, fmt.Sprintf("text of page %d", i), next, "next"))
	}
	e.idle()
	if n := len(e.index()); n != len(urls) {
		t.Fatalf("%d documents, want %d", n, len(urls))
	}
	for _, s := range e.w.Stats() {
		if s.Name == "export" && s.Runs != int64(len(urls)) {
			t.Errorf("export ran %d times for %d new pages, want once each", s.Runs, len(urls))
		}
	}
}

// TestElectionConflictsWithRankOfLonePage: rank tells no election when a
// page was alone in its cluster. A rank transaction that read the page
// alone, then writes a new value after a duplicate joined and the
// election read the old value, must conflict with that election (which
// rewrites the page's value), else the election's choice would rest on a
// value no one tells it has changed.
func TestElectionConflictsWithRankOfLonePage(t *testing.T) {
	e := newEnv(t)
	a, b := "http://example.com/a", "http://example.com/b"
	body := page("Same", "the same words on two pages")
	e.fetch(a, 200, body)
	e.idle()
	if got := e.get(a, webtable.ClusterSize); got != "1" {
		t.Fatalf("cluster size of a %q, want 1", got)
	}
	row := mustRow(a)
	tx, err := e.db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	size, err := tx.Get(bg, row, webtable.ClusterSize)
	if err != nil || string(size) != "1" {
		t.Fatalf("rank's read of a's cluster size: %q, %v", size, err)
	}
	if err := tx.Set(row, webtable.Rank, []byte("0.5")); err != nil {
		t.Fatal(err)
	}
	e.fetch(b, 200, body) // joins a's cluster; the election reads a's value
	e.idle()
	if got := e.get(a, webtable.ClusterSize); got != "2" {
		t.Fatalf("cluster size of a %q after b, want 2", got)
	}
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("rank's commit after the election: %v, want a conflict", err)
	}
}

// TestLonePagesElectOnce: on a site without duplicates, a new PageRank of
// a page already elected tells no election (elect-rank does not run).
func TestLonePagesElectOnce(t *testing.T) {
	e := newEnv(t)
	const n = 12
	url := func(i int) string { return fmt.Sprintf("http://example.com/p%d", i) }
	for i := range n {
		e.fetch(url(i), 200, page(fmt.Sprintf("Page %d", i), fmt.Sprintf("words of page number %d", i), url((i+1)%n), "next"))
	}
	e.idle()
	runs := func(name string) int64 {
		for _, s := range e.w.Stats() {
			if s.Name == name {
				return s.Runs
			}
		}
		return 0
	}
	before, rank := runs("elect-rank"), e.get(url(1), webtable.Rank)
	// A hub linking to every page moves all their values.
	var links []string
	for i := range n {
		links = append(links, url(i), fmt.Sprint("page ", i))
	}
	e.fetch(url(n), 200, page("Hub", "links to every page", links...))
	e.idle()
	if e.get(url(1), webtable.Rank) == rank {
		t.Fatal("the hub moved no value: the test proves nothing")
	}
	if d := runs("elect-rank") - before; d != 0 {
		t.Errorf("elect-rank ran %d times after values of lone pages moved, want 0", d)
	}
}

// TestClusterChangeConflictsWithRankRun: a rank run that read a page's
// old hash tells the old cluster's election when it writes the page's
// value; a concurrent change of the page's content (and so its cluster)
// must conflict with it (parse rewrites the page's value), else the new
// cluster's election would wait for a value no one tells it of.
func TestClusterChangeConflictsWithRankRun(t *testing.T) {
	e := newEnv(t)
	a := "http://example.com/a"
	e.fetch(a, 200, page("A", "the first words"))
	e.idle()
	hash := e.get(a, webtable.Hash)
	row := mustRow(a)
	tx, err := e.db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set(row, webtable.Rank, []byte("0.5")); err != nil {
		t.Fatal(err)
	}
	e.fetch(a, 200, page("A", "other words now"))
	e.idle()
	if e.get(a, webtable.Hash) == hash {
		t.Fatal("the hash did not change: the test proves nothing")
	}
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("the rank run's commit after the cluster change: %v, want a conflict", err)
	}
}

// Every observer of the chain is in exactly one of BulkStages.
func TestBulkStagesCoverTheChain(t *testing.T) {
	stage := make(map[string]int)
	for i, st := range observers.BulkStages(nil) {
		for _, n := range st.Observers {
			if _, dup := stage[n]; dup {
				t.Errorf("%s is in two stages", n)
			}
			stage[n] = i
		}
	}
	for _, o := range observers.Chain() {
		if _, ok := stage[o.Name]; !ok {
			t.Errorf("%s is in no stage", o.Name)
		}
		delete(stage, o.Name)
	}
	for n := range stage {
		t.Errorf("stage names %s, which is not in the chain", n)
	}
}
