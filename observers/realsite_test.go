package observers_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/internal/testsite"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/webtable"
)

const siteURL = "http://site.test"

// hostTransport sends requests for site.test to the test server and
// everything else to the crawler's guarded transport.
type hostTransport struct {
	guarded http.RoundTripper
	direct  *http.Transport
	addr    string
}

func (h *hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != "site.test" {
		return h.guarded.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Host = h.addr
	r2.Host = "site.test"
	return h.direct.RoundTrip(r2)
}

// crawlSite crawls s, reached as http://site.test (see hostTransport) so that
// the address guard stays on and refuses the private address among the
// seeds.
func crawlSite(t *testing.T, s *testsite.Site, e *env) {
	t.Helper()
	direct := &http.Transport{}
	t.Cleanup(direct.CloseIdleConnections)
	c, err := crawl.New(e.db, crawl.Options{
		Seeds:        []string{siteURL + "/", "http://10.9.9.9/"},
		Once:         true,
		Delay:        -1,
		Parallel:     4,
		Workers:      8,
		Timeout:      5 * time.Second,
		RetryBackoff: 5 * time.Millisecond,
		MaxRedirects: 3,
		NoSitemaps:   true,
		WrapTransport: func(guarded http.RoundTripper) http.RoundTripper {
			return &hostTransport{guarded: guarded, direct: direct, addr: s.Listener.Addr().String()}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// texts are the anchor texts of d, sorted.
func texts(d *webtable.Doc) []string {
	var out []string
	if d != nil {
		for _, a := range d.Anchors {
			out = append(out, a.Text)
		}
	}
	slices.Sort(out)
	return out
}

// rankTol is Verify's PageRank tolerance: the rank observer writes a value
// when it moves by 0.2%, so incremental values may lag the batch's by
// about that; 0.5% still catches what reaches no page through a redirect
// (every value of the site was ~1% off).
const rankTol = 0.005

// verifyIdle runs the chain until idle and compares it with the batch.
func verifyIdle(t *testing.T, e *env) *observers.Batch {
	t.Helper()
	e.idle()
	diffs, b, err := observers.Verify(bg, e.db, rankTol, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error("verify:", d)
	}
	return b
}

// Every fetch outcome reaches the chain: redirects, 404s, robots and
// refusals get the page state the batch gives them, redirect targets carry
// the anchors and the PageRank that flow through the redirects, and
// Verify passes after a first crawl and after pages changed what they
// answer (200 → 301, 404 → 200, 301 → 200).
func TestRealSiteVerify(t *testing.T) {
	s := testsite.New(t)
	e := newEnv(t)
	crawlSite(t, s, e)
	b := verifyIdle(t, e)

	states := map[string]string{
		"/":                    webtable.StateOK,
		"/moved":               webtable.StateRedirect,
		"/found":               webtable.StateRedirect,
		"/temp":                webtable.StateRedirect,
		"/perm":                webtable.StateRedirect,
		"/away":                webtable.StateRedirect,
		"/loop-a":              webtable.StateRedirect,
		"/loop-b":              webtable.StateRedirect,
		"/long0":               webtable.StateRedirect,
		"/missing":             webtable.StateGone,
		"/removed":             webtable.StateGone,
		"/broken":              webtable.StateGone,
		"/private/secret.html": webtable.StateGone,
		"/docs/dir/index.html": webtable.StateRedirect,
		"/docs/dir/":           webtable.StateOK,
		"/dup-redirect":        webtable.StateRedirect,
		"/flip1":               webtable.StateOK,
		"/flip2":               webtable.StateGone,
		"/flip3":               webtable.StateRedirect,
	}
	for p, want := range states {
		if got := e.get(siteURL+p, webtable.State); got != want {
			t.Errorf("%s: state %q, want %q", p, got, want)
		}
	}
	if got := e.get("http://10.9.9.9/", webtable.State); got != webtable.StateGone {
		t.Errorf("refused seed: state %q, want gone", got)
	}
	if got := e.get("http://10.9.9.9/", webtable.Error); !strings.HasPrefix(got, webtable.CauseRefused) {
		t.Errorf("refused seed: error %q, want %q...", got, webtable.CauseRefused)
	}
	if got := e.get(siteURL+"/private/secret.html", webtable.Error); !strings.HasPrefix(got, webtable.CauseRobots) {
		t.Errorf("disallowed page: error %q, want %q...", got, webtable.CauseRobots)
	}

	// The document page (/api/doc) says why a page is not indexed.
	for u, want := range map[string]string{
		"http://10.9.9.9/":               "refused",
		siteURL + "/private/secret.html": "disallowed",
		siteURL + "/missing":             webtable.StateGone,
		siteURL + "/docs/dir/index.html": webtable.StateRedirect,
		siteURL + "/long0":               webtable.StateRedirect,
	} {
		info, err := feed.LookupDoc(bg, e.db, nil, "", u)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != want {
			t.Errorf("%s: /api/doc status %q, want %q", u, info.Status, want)
		}
	}
	if info, err := feed.LookupDoc(bg, e.db, nil, "", siteURL+"/docs/dir/"); err != nil || len(info.Inlinks) != 3 {
		t.Errorf("/docs/dir/: inlinks %v (%v), want the 3 links to dir/ and dir/index.html", info.Inlinks, err)
	}

	idx := e.index()
	wantAnchors := map[string][]string{
		"/target.html": {"moved link", "target from docs"},
		"/t302.html":   {"flip three", "found link", "to the 302 target"},
		"/t307.html":   {"temp link"},
		"/t308.html":   {"perm link"},
		"/docs/dir/":   {"back to dir", "dir index link", "the dir index"},
	}
	for p, want := range wantAnchors {
		d := idx[siteURL+p]
		if d == nil {
			t.Errorf("%s: not in the index", p)
			continue
		}
		if got := texts(d); !slices.Equal(got, want) {
			t.Errorf("%s: anchors %q, want %q", p, got, want)
		}
	}
	// The redirect to a duplicate: its anchor reaches the cluster's one
	// document, whichever copy is canonical.
	var copies []*webtable.Doc
	for _, p := range []string{"/copy1.html", "/copy2.html"} {
		if d := idx[siteURL+p]; d != nil {
			copies = append(copies, d)
		}
	}
	if len(copies) != 1 {
		t.Errorf("%d documents for the duplicate pair, want 1", len(copies))
	} else if got := texts(copies[0]); !slices.Contains(got, "dup link") || !slices.Contains(got, "first copy") {
		t.Errorf("duplicate pair anchors %q, want both links", got)
	}
	// PageRank flows through the redirect: the target has more than a page
	// nothing links to.
	if r := b.Rank[mustRow(siteURL+"/target.html")]; r < 0.3 {
		t.Errorf("target.html batch PageRank %.3f: nothing flowed through the redirect", r)
	}
	for _, p := range []string{"/missing", "/moved", "/private/secret.html"} {
		if idx[siteURL+p] != nil {
			t.Errorf("%s is in the index", p)
		}
	}

	// Round 2: the flips change what they answer.
	s.SetRound(2)
	var flips []string
	for _, p := range []string{"/flip1", "/flip2", "/flip3"} {
		flips = append(flips, siteURL+p)
	}
	if n, err := crawl.Recrawl(bg, e.db, flips, time.Time{}); err != nil || n != 3 {
		t.Fatalf("Recrawl: %d, %v", n, err)
	}
	crawlSite(t, s, e)
	verifyIdle(t, e)
	for p, want := range map[string]string{"/flip1": webtable.StateRedirect, "/flip2": webtable.StateOK, "/flip3": webtable.StateOK} {
		if got := e.get(siteURL+p, webtable.State); got != want {
			t.Errorf("round 2: %s: state %q, want %q", p, got, want)
		}
	}
	idx = e.index()
	if idx[siteURL+"/flip1"] != nil {
		t.Error("round 2: /flip1 redirects but is still in the index")
	}
	for _, p := range []string{"/flip2", "/flip3"} {
		if idx[siteURL+p] == nil {
			t.Errorf("round 2: %s answers 200 but is not in the index", p)
		}
	}
	if got := texts(idx[siteURL+"/target.html"]); !slices.Contains(got, "flip one") || !slices.Contains(got, "flip two to target") {
		t.Errorf("round 2: target.html anchors %q, want the flip links too", got)
	}
	if got := texts(idx[siteURL+"/t302.html"]); slices.Contains(got, "flip three") {
		t.Errorf("round 2: t302.html anchors %q still hold /flip3's, which no longer redirects there", got)
	}
}
