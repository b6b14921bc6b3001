package serving

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func openIndex(t testing.TB) *Index {
	t.Helper()
	ix, err := OpenIndex(filepath.Join(t.TempDir(), "index"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// apply applies exports to ix as new documents.
func apply(t testing.TB, ix *Index, es ...webtable.Export) {
	t.Helper()
	us := make([]Update, len(es))
	for i, e := range es {
		us[i] = Update{Export: e}
	}
	if _, err := ix.Apply(us); err != nil {
		t.Fatal(err)
	}
}

func upsert(version uint64, row, url, title, text string, pr float64, anchors ...string) webtable.Export {
	d := &webtable.Doc{URL: url, Host: webtable.HostOf(url), Title: title, Text: text, PageRank: pr,
		FetchedAt: time.UnixMilli(int64(version)).UTC(), ClusterSize: 1}
	for _, a := range anchors {
		d.Anchors = append(d.Anchors, webtable.Anchor{From: "http://other.example/", Text: a})
	}
	return webtable.Export{Op: webtable.OpUpsert, Version: version, Row: row, URL: url, Doc: d}
}

func find(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), Query{Q: q, N: 10})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var urls []string
	for _, r := range res.Results {
		urls = append(urls, r.URL)
	}
	return urls
}

func TestRanking(t *testing.T) {
	ix := openIndex(t)
	apply(t, ix,
		upsert(1, "a", "http://a.example/", "Vacuum tuning", "how to tune autovacuum for large tables", 1),
		upsert(1, "b", "http://b.example/", "Indexes", "vacuum is mentioned once in this long text about indexes and btrees and more", 1),
		upsert(1, "c", "http://c.example/", "Other", "nothing relevant here at all", 1, "vacuum guide", "vacuum guide"),
		upsert(1, "d", "http://d.example/", "Popular", "vacuum is mentioned once in this long text about indexes and btrees and more", 40),
	)
	got := find(t, ix, "vacuum")
	if len(got) != 4 || got[0] != "http://a.example/" {
		t.Fatalf("title match should win: %v", got)
	}
	// d and b have the same text: PageRank orders them.
	if pos(got, "http://d.example/") > pos(got, "http://b.example/") {
		t.Fatalf("higher PageRank should rank higher among equals: %v", got)
	}
	// Anchor text alone finds a page.
	if got := find(t, ix, "guide"); len(got) != 1 || got[0] != "http://c.example/" {
		t.Fatalf("anchor match: %v", got)
	}
	if got := find(t, ix, `"long text about indexes"`); len(got) != 2 {
		t.Fatalf("phrase: %v", got)
	}
	if got := find(t, ix, `vacuum -btrees`); len(got) != 2 {
		t.Fatalf("negation: %v", got)
	}
	if got := find(t, ix, `title:indexes`); len(got) != 1 || got[0] != "http://b.example/" {
		t.Fatalf("field query: %v", got)
	}
	if got := find(t, ix, `vacuu*`); len(got) != 4 {
		t.Fatalf("prefix: %v", got)
	}
}

func pos(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func TestBadQueries(t *testing.T) {
	ix := openIndex(t)
	for _, q := range []Query{
		{Q: "", N: 10},
		{Q: "   ", N: 10},
		{Q: strings.Repeat("a", MaxQueryLen+1), N: 10},
		{Q: "title:~", N: 10},
		{Q: "+", N: 10},
		{Q: `"unterminated`, N: 10},
		{Q: "a", N: 0},
		{Q: "a", N: MaxResults + 1},
		{Q: "a", N: 10, Start: -1},
		{Q: "/[a-/", N: 10},
		{Q: "\xff\xfe", N: 10},
	} {
		_, err := ix.Search(context.Background(), q)
		if !errors.Is(err, ErrBadQuery) {
			t.Errorf("Search(%q, n=%d, start=%d) = %v, want ErrBadQuery", q.Q, q.N, q.Start, err)
		}
	}
}

func TestSnippet(t *testing.T) {
	ix := openIndex(t)
	text := strings.Repeat("filler words here. ", 40) + "The <b>vacuum</b> process reclaims storage; vacuuming often helps. " + strings.Repeat("more filler. ", 40)
	apply(t, ix, upsert(1, "a", "http://a.example/", "T", text, 1))
	res, err := ix.Search(context.Background(), Query{Q: "vacuum storage", N: 1})
	if err != nil || len(res.Results) != 1 {
		t.Fatal(res, err)
	}
	sn := res.Results[0].Snippet
	var marked []string
	var all strings.Builder
	for _, s := range sn {
		if s.Mark {
			marked = append(marked, s.Text)
		}
		all.WriteString(s.Text)
	}
	if strings.Join(marked, ",") != "vacuum,storage,vacuuming" {
		t.Fatalf("marked %q in %q", marked, all.String())
	}
	if !strings.HasPrefix(all.String(), "…") || !strings.HasSuffix(all.String(), "…") || len(all.String()) > snippetLen+20 {
		t.Fatalf("window: %q", all.String())
	}
	// The raw text is kept raw: escaping is the renderer's job.
	if !strings.Contains(all.String(), "<b>") {
		t.Fatalf("snippet lost text: %q", all.String())
	}
}

func TestTop(t *testing.T) {
	ix := openIndex(t)
	apply(t, ix,
		upsert(1, "a", "http://a.example/", "A", "x", 3),
		upsert(1, "b", "http://a.example/b", "B", "x", 5),
		upsert(1, "c", "http://c.example/", "C", "x", 4),
	)
	top, err := ix.Top(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Pages) != 3 || top.Pages[0].URL != "http://a.example/b" || top.Pages[2].URL != "http://a.example/" {
		t.Fatalf("top: %+v", top.Pages)
	}
	if len(top.Hosts) != 2 || top.Hosts[0] != (HostCount{"a.example", 2}) {
		t.Fatalf("hosts: %+v", top.Hosts)
	}
	top, err = ix.Top(context.Background(), "c.example", 10)
	if err != nil || len(top.Pages) != 1 {
		t.Fatalf("host top: %+v %v", top, err)
	}

	// Inbound anchors are counted from other hosts and from the page's own.
	e := upsert(2, "c", "http://c.example/", "C", "x", 4, "from other")
	e.Doc.Anchors = append(e.Doc.Anchors, webtable.Anchor{From: "http://c.example/d", Text: "d"},
		webtable.Anchor{From: "http://c.example/e", Text: ""})
	apply(t, ix, e)
	top, err = ix.Top(context.Background(), "c.example", 10)
	if err != nil || len(top.Pages) != 1 || top.Pages[0].Inbound != 1 || top.Pages[0].InboundHost != 2 {
		t.Fatalf("inbound: %+v %v", top, err)
	}

	// Anchors a document left out (webtable.Doc.CutAnchors) count too.
	e = upsert(3, "c", "http://c.example/", "C", "x", 4, "from other")
	e.Doc.MoreAnchors, e.Doc.MoreCrossHost = 10, 4
	apply(t, ix, e)
	top, err = ix.Top(context.Background(), "c.example", 10)
	if err != nil || len(top.Pages) != 1 || top.Pages[0].Inbound != 5 || top.Pages[0].InboundHost != 6 {
		t.Fatalf("inbound with anchors left out: %+v %v", top, err)
	}
}
