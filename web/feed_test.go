package web

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
	"github.com/mmcdole/gofeed"
	"golang.org/x/net/html"
)

// hostileTitle would end the title element, open a script and a CDATA
// section, and holds characters XML 1.0 cannot.
const hostileTitle = `Vacuum </title><script>alert(1)</script> ]]> & "quoted" <![CDATA[x` + "\x01\x0c"

// feedPage is a page of the feed tests' index.
type feedPage struct {
	row, url, title, text string
	pr                    float64
	fetched               time.Duration // before testNow
}

// feedIndex is a real index on t.TempDir() holding pages about vacuum
// fetched at different times, with PageRank the other way round: a feed
// ordered by rank would be upside down.
func feedIndex(t *testing.T) *serving.Index {
	t.Helper()
	ix, err := serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	index(t, ix,
		feedPage{"a", "http://127.0.0.1:9000/old", "Vacuum, the old page", "Vacuum reclaims storage.", 9, 72 * time.Hour},
		feedPage{"b", "http://127.0.0.1:9000/mid", hostileTitle, "Vacuum <b>bold</b> & autovacuum ]]> run it.", 5, 2 * time.Hour},
		feedPage{"c", "http://127.0.0.1:9000/new", "Vacuum, the new page", "Vacuum full rewrites the table.", 1, time.Minute},
		feedPage{"d", "http://127.0.0.1:9000/other", "Sorting", "Sort a list.", 3, time.Second},
	)
	return ix
}

func index(t *testing.T, ix *serving.Index, pages ...feedPage) {
	t.Helper()
	var us []serving.Update
	for _, p := range pages {
		d := &webtable.Doc{URL: p.url, Host: webtable.HostOf(p.url), Title: p.title, Text: p.text,
			PageRank: p.pr, FetchedAt: testNow.Add(-p.fetched), ClusterSize: 1}
		us = append(us, serving.Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: p.row, URL: p.url, Doc: d}})
	}
	if _, err := ix.Apply(us); err != nil {
		t.Fatal(err)
	}
}

// feedServer serves ix on a real HTTP server on 127.0.0.1.
func feedServer(t *testing.T, ix *serving.Index) *httptest.Server {
	t.Helper()
	s, _ := newTestServer(t, indexBackend{canned(), ix}, Options{})
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

// fetchFeed GETs a feed and parses it with gofeed, after checking the
// status, the content type, and that it is well-formed XML.
func fetchFeed(t *testing.T, hs *httptest.Server, path string) (*gofeed.Feed, string) {
	t.Helper()
	res, err := http.Get(hs.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/atom+xml; charset=utf-8" {
		t.Errorf("%s: Content-Type %q", path, ct)
	}
	d := xml.NewDecoder(strings.NewReader(body))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: not well-formed XML: %v\n%s", path, err, body)
		}
	}
	f, err := gofeed.NewParser().ParseString(body)
	if err != nil {
		t.Fatalf("%s: gofeed: %v\n%s", path, err, body)
	}
	if f.FeedType != "atom" {
		t.Errorf("%s: feed type %q", path, f.FeedType)
	}
	return f, body
}

func itemLinks(f *gofeed.Feed) []string {
	var out []string
	for _, it := range f.Items {
		out = append(out, it.Link)
	}
	return out
}

// TestAtomFeed: the feed of a query lists its matching pages newest
// fetched first (not by rank), with absolute self and alternate links on
// the request's origin, titles, summaries and fetch times; a page indexed
// later is at its top on the next poll.
func TestAtomFeed(t *testing.T) {
	ix := feedIndex(t)
	hs := feedServer(t, ix)
	f, _ := fetchFeed(t, hs, "/api/search?q=vacuum&format=atom")
	want := []string{"http://127.0.0.1:9000/new", "http://127.0.0.1:9000/mid", "http://127.0.0.1:9000/old"}
	if got := itemLinks(f); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("entries %v, want %v (newest first)", got, want)
	}
	if f.Title != "caffeine: vacuum" {
		t.Errorf("title %q", f.Title)
	}
	if f.FeedLink != hs.URL+"/api/search?format=atom&q=vacuum" || f.Link != hs.URL+"/search?q=vacuum" {
		t.Errorf("self %q, alternate %q", f.FeedLink, f.Link)
	}
	if f.UpdatedParsed == nil || !f.UpdatedParsed.Equal(testNow.Add(-time.Minute).Truncate(time.Second)) {
		t.Errorf("feed updated %v, want the newest entry's %v", f.UpdatedParsed, testNow.Add(-time.Minute))
	}
	for i, it := range f.Items {
		if it.UpdatedParsed == nil || it.GUID != it.Link {
			t.Errorf("entry %d: updated %v, id %q", i, it.UpdatedParsed, it.GUID)
		}
		if i > 0 && f.Items[i-1].UpdatedParsed.Before(*it.UpdatedParsed) {
			t.Errorf("entry %d is newer than entry %d", i, i-1)
		}
	}
	if it := f.Items[0]; it.Title != "Vacuum, the new page" || !strings.Contains(it.Description, "Vacuum full rewrites the table") {
		t.Errorf("first entry: title %q, summary %q", it.Title, it.Description)
	}

	// A page fetched now appears at the top of the next poll.
	index(t, ix, feedPage{"e", "http://127.0.0.1:9000/newest", "Vacuum tuning", "Tune vacuum cost limits.", 0.1, 0})
	f, _ = fetchFeed(t, hs, "/api/search?q=vacuum&format=atom&n=2")
	want = []string{"http://127.0.0.1:9000/newest", "http://127.0.0.1:9000/new"}
	if got := itemLinks(f); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after indexing a new page: %v, want %v", got, want)
	}

	// The JSON answer of the same query stays ranked.
	s, _ := newTestServer(t, indexBackend{canned(), ix}, Options{})
	if got := apiURLs(t, s, "vacuum"); len(got) != 4 || got[0] != "http://127.0.0.1:9000/old" {
		t.Errorf("ranked results %v, want the old page (highest PageRank) first", got)
	}
}

// TestAtomFeedEscaping: a title and text full of markup come out of the
// feed as the same text, never as elements.
func TestAtomFeedEscaping(t *testing.T) {
	hs := feedServer(t, feedIndex(t))
	f, body := fetchFeed(t, hs, "/api/search?q=autovacuum&format=atom")
	if len(f.Items) != 1 {
		t.Fatalf("%d entries, want 1", len(f.Items))
	}
	// The characters XML cannot hold become U+FFFD.
	wantTitle := strings.NewReplacer("\x01", "\uFFFD", "\x0c", "\uFFFD").Replace(hostileTitle)
	if it := f.Items[0]; it.Title != wantTitle {
		t.Errorf("title %q, want %q", it.Title, wantTitle)
	}
	if it := f.Items[0]; !strings.Contains(it.Description, "<b>bold</b> & autovacuum ]]>") {
		t.Errorf("summary %q", it.Description)
	}
	for _, raw := range []string{"<script", "<b>", "</title><", "<![CDATA["} {
		if strings.Contains(body, raw) {
			t.Errorf("the raw markup %q is in the feed", raw)
		}
	}
	// Element by element: entries hold only the elements the feed writes.
	var doc struct {
		Entries []struct {
			Inner []struct {
				XMLName xml.Name
			} `xml:",any"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range doc.Entries {
		for _, el := range e.Inner {
			switch el.XMLName.Local {
			case "id", "title", "updated", "link", "summary":
			default:
				t.Errorf("an entry holds a <%s>", el.XMLName.Local)
			}
		}
	}
}

// TestAtomFeedErrors: a bad query, an empty one and an unknown format are
// 400s with a JSON message, as the JSON API answers them.
func TestAtomFeedErrors(t *testing.T) {
	s, logs := newTestServer(t, indexBackend{canned(), feedIndex(t)}, Options{})
	for _, target := range []string{
		"/api/search?q=" + url.QueryEscape("vacuum~3") + "&format=atom",
		"/api/search?q=" + url.QueryEscape("nosuchfield:x") + "&format=atom",
		"/api/search?q=&format=atom",
		"/api/search?q=vacuum&format=atom&n=0",
		"/api/search?q=vacuum&format=rss",
		"/api/search?q=vacuum&format=" + url.QueryEscape("<x>"),
	} {
		m := getJSON(t, s, target, http.StatusBadRequest)
		if msg, _ := m["error"].(string); msg == "" {
			t.Errorf("%s: no error message", target)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("bad requests logged as errors:\n%s", logs)
	}
	m := getJSON(t, s, "/api/search?q=vacuum&format=json", http.StatusOK)
	wantArray(t, "format=json", m, "results", 3)
}

// TestOpenSearch: the description is served with its type, its templates
// on the request's scheme and host; a Host header that is not a host is
// refused.
func TestOpenSearch(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	req := httptest.NewRequest(http.MethodGet, "/opensearch.xml", nil)
	req.Host = "Search.Example:8080"
	req.Header.Set("X-Forwarded-Proto", "https")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/opensearchdescription+xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var d struct {
		XMLName   xml.Name
		ShortName string
		URLs      []struct {
			Type     string `xml:"type,attr"`
			Rel      string `xml:"rel,attr"`
			Template string `xml:"template,attr"`
		} `xml:"Url"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.XMLName.Space != "http://a9.com/-/spec/opensearch/1.1/" || d.XMLName.Local != "OpenSearchDescription" || d.ShortName == "" || len(d.ShortName) > 16 {
		t.Errorf("root %v, short name %q", d.XMLName, d.ShortName)
	}
	want := map[string]string{
		"text/html":                             "https://search.example:8080/search?q={searchTerms}",
		"application/atom+xml":                  "https://search.example:8080/api/search?q={searchTerms}&format=atom",
		"application/json":                      "https://search.example:8080/api/search?q={searchTerms}",
		"application/opensearchdescription+xml": "https://search.example:8080/opensearch.xml",
	}
	for _, u := range d.URLs {
		if want[u.Type] != u.Template {
			t.Errorf("%s: template %q, want %q", u.Type, u.Template, want[u.Type])
		}
		delete(want, u.Type)
	}
	if len(want) > 0 {
		t.Errorf("no templates for %v", want)
	}

	for _, host := range []string{`x"><script>alert(1)</script>`, "a b", "evil.example/path?", "user@evil.example"} {
		req := httptest.NewRequest(http.MethodGet, "/opensearch.xml", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("Host %q: status %d\n%s", host, rec.Code, rec.Body)
		}
	}
}

// TestHeadLinks: every page links the OpenSearch description; a results
// page links its query's feed, which answers.
func TestHeadLinks(t *testing.T) {
	ix := feedIndex(t)
	s, _ := newTestServer(t, indexBackend{canned(), ix}, Options{})
	q := `vacuum "full" & full`
	for _, target := range []string{"/", "/search?q=" + url.QueryEscape(q), "/top", "/status", "/doc?url=" + url.QueryEscape(evilPage), "/nowhere"} {
		_, body := get(t, s, target)
		links := headLinks(t, body)
		if links["search"] != "/opensearch.xml" {
			t.Errorf("%s: <link rel=search> %q", target, links["search"])
		}
		wantFeed := ""
		if strings.HasPrefix(target, "/search") {
			wantFeed = "/api/search?format=atom&q=" + url.QueryEscape(q)
		}
		if links["alternate"] != wantFeed {
			t.Errorf("%s: <link rel=alternate> %q, want %q", target, links["alternate"], wantFeed)
		}
	}
	hs := feedServer(t, ix)
	f, _ := fetchFeed(t, hs, "/api/search?format=atom&q="+url.QueryEscape(q))
	if len(f.Items) != 1 || f.Items[0].Link != "http://127.0.0.1:9000/new" {
		t.Errorf("the linked feed: %v", itemLinks(f))
	}
}

// headLinks maps rel to href of the <link>s in body's head, with the
// types a feed and a search engine need.
func headLinks(t *testing.T, body string) map[string]string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "link" {
			switch rel, typ := attr(n, "rel"), attr(n, "type"); {
			case rel == "search" && typ == "application/opensearchdescription+xml",
				rel == "alternate" && typ == "application/atom+xml":
				out[rel] = attr(n, "href")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}
