package crawl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

// recrawlSite is a site of three linked pages and a 404.
func recrawlSite(t *testing.T) *site {
	s := newSite(t)
	s.page("/", `<a href="/a">a</a> <a href="/b">b</a> <a href="/gone">gone</a>`)
	s.page("/a", "page a")
	s.page("/b", "page b")
	return s
}

// slowOptions crawl once and then leave every page due in an hour.
func slowOptions(seeds ...string) Options {
	opt := testOptions(seeds...)
	opt.MinInterval, opt.InitialInterval = time.Hour, time.Hour
	return opt
}

func dueAt(t *testing.T, tb *table, u string) time.Time {
	t.Helper()
	return time.UnixMilli(atoi(tb.get(u, webtable.Due)))
}

func TestRecrawlHost(t *testing.T) {
	s := recrawlSite(t)
	other := recrawlSite(t) // another host: 127.0.0.1 on another port
	tb := openTable(t, "")
	tb.crawl(slowOptions(s.URL+"/", other.URL+"/"))
	now := time.Now()
	for _, u := range []string{s.URL + "/", s.URL + "/a", other.URL + "/a"} {
		if d := dueAt(t, tb, u); d.Before(now.Add(30 * time.Minute)) {
			t.Fatalf("%s due at %v, want in an hour", u, d)
		}
	}
	host := strings.TrimPrefix(s.URL, "http://") // 127.0.0.1:PORT
	n, err := RecrawlHost(t.Context(), tb.db, host, time.Time{})
	if err != nil || n != 4 {
		t.Fatalf("RecrawlHost(%s) = %d, %v; want 4 pages (with the 404)", host, n, err)
	}
	for _, u := range []string{s.URL + "/", s.URL + "/a", s.URL + "/b", s.URL + "/gone"} {
		if d := dueAt(t, tb, u); d.After(time.Now()) {
			t.Errorf("%s due at %v, want now", u, d)
		}
	}
	if d := dueAt(t, tb, other.URL+"/a"); d.Before(now.Add(30 * time.Minute)) {
		t.Errorf("the other port's page was moved: due %v", d)
	}
	// Without a port: every page of 127.0.0.1, whatever its port.
	if n, err := RecrawlHost(t.Context(), tb.db, "127.0.0.1", time.Time{}); err != nil || n != 8 {
		t.Errorf("RecrawlHost(127.0.0.1) = %d, %v; want both ports' 8", n, err)
	}
	// A crawl picks them up.
	before := s.count("/a")
	tb.crawl(slowOptions())
	if s.count("/a") != before+1 || other.count("/a") != 2 {
		t.Errorf("/a fetched %d and %d times, want again", s.count("/a"), other.count("/a"))
	}

	for _, host := range []string{"example.com", "127.0.0.1:1"} {
		if _, err := RecrawlHost(t.Context(), tb.db, host, time.Time{}); !errors.Is(err, ErrUnknownPage) || !strings.Contains(err.Error(), host) {
			t.Errorf("RecrawlHost(%s) = %v, want ErrUnknownPage naming it", host, err)
		}
	}
	for _, host := range []string{"", "http://example.com/", "a b"} {
		if _, err := RecrawlHost(t.Context(), tb.db, host, time.Time{}); err == nil || errors.Is(err, ErrUnknownPage) {
			t.Errorf("RecrawlHost(%q) = %v, want a bad host", host, err)
		}
	}
}

func TestRowPort(t *testing.T) {
	for _, tc := range []struct {
		row, port string
		want      bool
	}{
		{"com.example:http/", "", true},
		{"com.example:http/", "80", true},
		{"com.example:https/", "443", true},
		{"com.example:https/", "80", false},
		{"com.example:http:8080/x", "8080", true},
		{"com.example:http:8080/x", "80", false},
		{"[::1]:http:8080/", "8080", true},
		{"[::1]:http/", "8080", false},
	} {
		if got := rowPort(tc.row, tc.port); got != tc.want {
			t.Errorf("rowPort(%q, %q) = %v", tc.row, tc.port, got)
		}
	}
}

// spoolFilesIn lists what is left in the spool and in its bad directory.
func spoolFilesIn(t *testing.T, dir string) (queued, bad []string) {
	t.Helper()
	q, err := spoolFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, spoolBad))
	for _, e := range ents {
		bad = append(bad, e.Name())
	}
	return q, bad
}

func TestApplySpool(t *testing.T) {
	s := recrawlSite(t)
	tb := openTable(t, "")
	tb.crawl(slowOptions(s.URL + "/"))
	dir := filepath.Join(t.TempDir(), "recrawl")
	ctx := t.Context()

	// Nothing to do in a spool that does not exist.
	if res, err := ApplySpool(ctx, tb.db, dir, nil); err != nil || len(res) != 0 {
		t.Fatalf("missing spool: %v, %v", res, err)
	}
	if _, err := QueueRecrawl(dir, RecrawlRequest{}); err == nil {
		t.Error("an empty request was queued")
	}
	if _, err := QueueRecrawl(dir, RecrawlRequest{URLs: []string{"ftp://example.com/"}}); err == nil {
		t.Error("a non-HTTP URL was queued")
	}
	a, err := QueueRecrawl(dir, RecrawlRequest{URLs: []string{s.URL + "/a"}})
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := QueueRecrawl(dir, RecrawlRequest{URLs: []string{s.URL + "/b", s.URL + "/nowhere"}})
	if err != nil {
		t.Fatal(err)
	}
	host, err := QueueRecrawl(dir, RecrawlRequest{Host: "example.org"})
	if err != nil {
		t.Fatal(err)
	}
	// Malformed files: not JSON, an unknown field, half a file, no page.
	for name, body := range map[string]string{
		"0-garbage.json":   "{not json",
		"1-field.json":     `{"url": "http://example.com/"}`,
		"2-half.json":      `{"urls": ["http://exa`,
		"3-nothing.json":   `{}`,
		"4-two.json":       `{"host": "example.com"} {"host": "example.org"}`,
		".queue-1.tmp":     "{being written",
		"notes.txt":        "not a request",
		"5-bad-url.json":   `{"urls": ["javascript:alert(1)"]}`,
		"6-bad-host.json":  `{"host": "a/b"}`,
		"7-bad-type.json":  `{"urls": "http://example.com/"}`,
		"8-null-urls.json": `{"urls": null}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One more, already in bad: its name is kept free.
	os.MkdirAll(filepath.Join(dir, spoolBad), 0o755)
	os.WriteFile(filepath.Join(dir, spoolBad, "0-garbage.json"), []byte("older"), 0o644)

	res, err := ApplySpool(ctx, tb.db, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	byFile := map[string]SpoolResult{}
	for _, r := range res {
		byFile[r.File] = r
	}
	if r := byFile[a]; r.Err != nil || r.Moved != 1 {
		t.Errorf("%s: %+v", a, r)
	}
	if r := byFile[unknown]; !errors.Is(r.Err, ErrUnknownPage) || !strings.Contains(r.Err.Error(), "/nowhere") || r.Moved != 1 {
		t.Errorf("%s: %+v, want /b moved and /nowhere unknown", unknown, r)
	}
	if r := byFile[host]; !errors.Is(r.Err, ErrUnknownPage) || r.Moved != 0 {
		t.Errorf("%s: %+v", host, r)
	}
	bad := 0
	for _, r := range res {
		if r.Bad {
			bad++
		}
	}
	if bad != 9 || len(res) != 12 {
		t.Errorf("%d results, %d malformed; want 12 and 9: %+v", len(res), bad, res)
	}
	for _, u := range []string{s.URL + "/a", s.URL + "/b"} {
		if d := dueAt(t, tb, u); d.After(time.Now()) {
			t.Errorf("%s due at %v, want now", u, d)
		}
	}
	queued, badFiles := spoolFilesIn(t, dir)
	if len(queued) != 0 {
		t.Errorf("left in the spool: %v", queued)
	}
	if len(badFiles) != 10 || !slices.Contains(badFiles, "0-garbage.json") {
		t.Errorf("bad: %v", badFiles)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, spoolBad, "0-garbage.json")); string(b) != "older" {
		t.Errorf("a file in bad was overwritten: %q", b)
	}
	for _, name := range []string{".queue-1.tmp", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v (not a request: left alone)", name, err)
		}
	}

	// Each applied or malformed request left its outcome, read once.
	for path, want := range map[string]SpoolOutcome{
		a:                                 {PagesDue: 1},
		unknown:                           {PagesDue: 1, Error: "nowhere"},
		host:                              {Error: "example.org"},
		filepath.Join(dir, "2-half.json"): {Malformed: true, Error: "malformed"},
	} {
		o, err := ReadSpoolOutcome(path)
		if err != nil || o.PagesDue != want.PagesDue || o.Malformed != want.Malformed || !strings.Contains(o.Error, want.Error) || (want.Error == "") != (o.Error == "") {
			t.Errorf("outcome of %s: %+v, %v; want %+v", filepath.Base(path), o, err, want)
		}
		if _, err := ReadSpoolOutcome(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("outcome of %s read twice: %v", filepath.Base(path), err)
		}
	}
	// Outcomes nobody read go after spoolDoneTTL.
	old := time.Now().Add(-spoolDoneTTL - time.Minute)
	for _, name := range []string{"0-garbage.json", "1-field.json"} {
		if err := os.Chtimes(filepath.Join(dir, spoolDone, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ApplySpool(ctx, tb.db, dir, nil); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, spoolDone)); len(ents) != 6 {
		t.Errorf("%d outcomes left, want the 6 younger than an hour", len(ents))
	}
}

// A request queued while a crawler runs is applied by it: the page is
// fetched again at once, the file deleted; a malformed one is moved aside
// and the crawl goes on.
func TestRunningCrawlerAppliesSpool(t *testing.T) {
	s := recrawlSite(t)
	tb := openTable(t, "")
	dir := filepath.Join(tb.dir, "recrawl")
	early, err := QueueRecrawl(dir, RecrawlRequest{URLs: []string{s.URL + "/a"}}) // before the page is known
	if err != nil {
		t.Fatal(err)
	}
	opt := slowOptions(s.URL + "/")
	opt.Once = false
	opt.RecrawlDir = dir
	c, err := New(tb.db, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the first crawl", func() bool { return s.count("/a") == 1 && s.count("/b") == 1 })
	if _, err := os.Stat(early); !os.IsNotExist(err) {
		t.Errorf("the request queued before the run: %v, want applied (in part) and deleted", err)
	}

	if _, err := QueueRecrawl(dir, RecrawlRequest{URLs: []string{s.URL + "/a"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "/a fetched again", func() bool { return s.count("/a") == 2 })
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the malformed request moved aside", func() bool {
		_, err := os.Stat(filepath.Join(dir, spoolBad, "broken.json"))
		return err == nil
	})
	if _, err := QueueRecrawl(dir, RecrawlRequest{Host: strings.TrimPrefix(s.URL, "http://")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the host fetched again", func() bool { return s.count("/") == 2 && s.count("/a") == 3 && s.count("/b") == 2 })
	waitFor(t, "the spool empty", func() bool { q, _ := spoolFilesIn(t, dir); return len(q) == 0 })
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 30 s", what)
}

// PrivateAddrs lets a crawl reach exactly one loopback server: another
// on the same address but another port is refused, also when a page links
// to it.
func TestPrivateAddrs(t *testing.T) {
	allowed, refused := newSite(t), newSite(t)
	refused.page("/", "secret")
	allowed.page("/", fmt.Sprintf(`<a href="/a">a</a> <a href="%s/">elsewhere</a>`, refused.URL))
	allowed.page("/a", "page a")
	ap := netip.MustParseAddrPort(allowed.Listener.Addr().String())

	tb := openTable(t, "")
	opt := testOptions(allowed.URL+"/", refused.URL+"/") // the refused one is a seed too: in scope
	opt.PrivateAddrs = []netip.AddrPort{ap}
	tb.crawl(opt)
	if string(tb.get(allowed.URL+"/a", webtable.Body)) != "page a" {
		t.Error("the allowed server's page was not crawled")
	}
	if n := refused.count("/") + refused.count("/robots.txt"); n != 0 {
		t.Errorf("the other server got %d requests", n)
	}
	if e := string(tb.get(refused.URL+"/", webtable.Error)); !strings.Contains(e, "private") {
		t.Errorf("error %q, want a private-address refusal", e)
	}

	// The dialer: exactly the pair, also as an IPv4-mapped address.
	tr := newTransport(true, 5e9, 1, ap)
	_, port, _ := net.SplitHostPort(refused.Listener.Addr().String())
	for addr, ok := range map[string]bool{
		ap.String(): true, "[::ffff:127.0.0.1]:" + fmt.Sprint(ap.Port()): true,
		"127.0.0.1:" + port: false, "127.0.0.2:" + fmt.Sprint(ap.Port()): false,
	} {
		conn, err := tr.DialContext(t.Context(), "tcp", addr)
		if conn != nil {
			conn.Close()
		}
		if ok && err != nil || !ok && !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("dial %s: %v, want allowed %v", addr, err, ok)
		}
	}
	// Without AllowPrivate the list grants nothing.
	if _, err := newTransport(false, 5e9, 1, ap).DialContext(t.Context(), "tcp", ap.String()); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("dial without AllowPrivate: %v", err)
	}
}
