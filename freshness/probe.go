package freshness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrNoDocuments is returned by Probe when the queries find no indexed
// document to sample.
var ErrNoDocuments = errors.New("freshness: no indexed documents found")

// DefaultProbeAgent is the User-Agent of Probe's live fetches; robots.txt
// groups match its product token, "caffeine-freshness".
const DefaultProbeAgent = "caffeine-freshness/0.1 (+https://github.com/caffeine-go/caffeine)"

// DefaultQueries find documents to sample when ProbeOptions.Queries is
// empty: common words, none an English stop word.
var DefaultQueries = []string{"page", "web", "index", "data", "time", "new", "system", "example", "search", "version"}

// ProbeOptions configure Probe. The zero value of every field selects the
// default named in its comment.
type ProbeOptions struct {
	// Server is the deployment's base URL, like "http://127.0.0.1:8080".
	Server string
	// Sample is the number of documents to check. Default 100.
	Sample int
	// Queries find the documents: the sample is drawn from their results.
	// Default DefaultQueries.
	Queries []string
	// PerQuery is how many results of each query are read. Default 1,000.
	PerQuery int
	// Delay is the least time between two live fetches from one host; a
	// larger robots.txt Crawl-delay (up to a minute) wins. Default 1s;
	// negative means none.
	Delay time.Duration
	// UserAgent of the live fetches. Default DefaultProbeAgent.
	UserAgent string
	// Timeout bounds each request. Default 30s.
	Timeout time.Duration
	// MaxBody is where live bodies are cut. Default 10 MiB, the crawler's.
	MaxBody int64
	// Truth, if set, gives exact ages (the changingweb fixture's log, say)
	// instead of estimates.
	Truth Truth
	// Seed draws the sample.
	Seed int64
	// Client makes every request. Default a client with Timeout that does
	// not follow redirects.
	Client *http.Client
	// Logger receives per-document events (debug). Nil discards them.
	Logger *slog.Logger
	// Progress, if set, is called as Probe goes: after each query's
	// results are read and after each document is checked.
	Progress func(ProbeProgress)
}

// ProbeProgress is how far Probe has got.
type ProbeProgress struct {
	Queries, QueriesDone int // the queries, and those whose results are read
	Candidates           int // distinct documents found so far
	Sampled              int // documents to check (0 until the queries are done)
	Checked              int // documents checked so far, skipped ones included
	Fresh, Stale         int
	Skipped              int
	URL                  string // the document just checked
}

func (o *ProbeOptions) ensureDefaults() error {
	if o.Server == "" {
		return errors.New("freshness: no server")
	}
	o.Server = strings.TrimSuffix(o.Server, "/")
	if o.Sample <= 0 {
		o.Sample = 100
	}
	if len(o.Queries) == 0 {
		o.Queries = DefaultQueries
	}
	if o.PerQuery <= 0 {
		o.PerQuery = 1000
	}
	if o.Delay == 0 {
		o.Delay = time.Second
	} else if o.Delay < 0 {
		o.Delay = 0
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultProbeAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 10 << 20
	}
	if o.Client == nil {
		o.Client = &http.Client{
			Timeout:       o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Stage names, in pipeline order, of Report.Latency.
var Stages = []string{"parsed", "clustered", "exported", "searchable"}

// Report is what Probe found.
type Report struct {
	Server     string    `json:"server"`
	Time       time.Time `json:"time"`
	Queries    []string  `json:"queries"`
	Candidates int       `json:"candidates"` // distinct documents the queries returned
	Sampled    int       `json:"sampled"`
	Checked    int       `json:"checked"` // refetched and compared
	Skipped    int       `json:"skipped"` // robots.txt disallowed, or the refetch failed
	Fresh      int       `json:"fresh"`
	Stale      int       `json:"stale"`
	Pending    int       `json:"pending"` // stale because newer content is in the pipeline, not yet searchable
	Freshness  float64   `json:"freshness"`
	// AgeEstimator is "exact" (from ProbeOptions.Truth) or "poisson".
	AgeEstimator string  `json:"age_estimator"`
	MeanAge      float64 `json:"mean_age_s"`       // over checked documents, fresh ones at 0
	MeanAgeUpper float64 `json:"mean_age_upper_s"` // the same with each stale age at its upper bound
	MeanStaleAge float64 `json:"mean_stale_age_s"` // over stale documents
	// Latency is the distribution over the sampled documents of the time
	// from fetch to each stage, by stage name (Stages), from /api/doc.
	Latency map[string]Distribution `json:"latency"`
	// ResultLatency is IndexedAt − FetchedAt of the sampled search results.
	ResultLatency Distribution `json:"result_latency"`
	// ServerLatency is what /api/stats says of crawl→searchable, if it
	// says.
	ServerLatency *Distribution `json:"server_latency,omitempty"`
	Docs          []DocCheck    `json:"docs"`
}

// DocCheck is one sampled document.
type DocCheck struct {
	URL        string    `json:"url"`
	Query      string    `json:"query"`
	FetchedAt  time.Time `json:"fetched_at"` // of the indexed copy
	IndexedAt  time.Time `json:"indexed_at,omitzero"`
	CheckedAt  time.Time `json:"checked_at,omitzero"` // the live refetch
	IndexHash  string    `json:"index_hash,omitempty"`
	LiveHash   string    `json:"live_hash,omitempty"`
	LiveStatus int       `json:"live_status,omitempty"`
	Fresh      bool      `json:"fresh"`
	Pending    bool      `json:"pending,omitempty"`
	Age        float64   `json:"age_s"`
	AgeUpper   float64   `json:"age_upper_s"`
	ChangeRate float64   `json:"change_rate,omitempty"` // estimated changes per second
	Stages     DocStages `json:"stages"`
	Skipped    string    `json:"skipped,omitempty"` // why it was not checked
}

// The JSON API as this package reads it (serving's api.go names). Only what
// Probe uses is decoded.
type (
	apiResults struct {
		Total   int         `json:"total"`
		Results []apiResult `json:"results"`
	}
	apiResult struct {
		URL       string    `json:"url"`
		FetchedAt time.Time `json:"fetched_at"`
		IndexedAt time.Time `json:"indexed_at"`
	}
	apiDoc struct {
		URL         string     `json:"url"`
		ContentHash string     `json:"content_hash"`
		Status      string     `json:"status"`
		FetchedAt   time.Time  `json:"fetched_at"`
		Stages      *DocStages `json:"stages"`
		History     []apiFetch `json:"history"`
	}
	apiFetch struct {
		Time    time.Time `json:"time"`
		Status  int       `json:"status"`
		Changed bool      `json:"changed"`
	}
	apiStats struct {
		Latency *struct {
			Count int     `json:"count"`
			P50   float64 `json:"p50_s"`
			P90   float64 `json:"p90_s"`
			P99   float64 `json:"p99_s"`
		} `json:"latency"`
	}
)

// DocStages are the times the current content of a document passed each
// stage of the pipeline, as /api/doc reports them; zero when it has not.
type DocStages struct {
	Fetched    time.Time `json:"fetched,omitzero"`
	Parsed     time.Time `json:"parsed,omitzero"`
	Clustered  time.Time `json:"clustered,omitzero"`
	Exported   time.Time `json:"exported,omitzero"`
	Searchable time.Time `json:"searchable,omitzero"`
}

// At returns the time of the named stage (Stages), zero if unknown.
func (s DocStages) At(stage string) time.Time {
	switch stage {
	case "parsed":
		return s.Parsed
	case "clustered":
		return s.Clustered
	case "exported":
		return s.Exported
	case "searchable":
		return s.Searchable
	}
	return time.Time{}
}

// Probe measures a running deployment: it samples indexed documents from
// the results of the queries, reads what the deployment knows of each
// (/api/doc), refetches each live page politely (robots.txt, Delay per
// host, one request at a time) and compares content hashes computed as the
// indexing chain computes them (extract.HTML's Hash).
//
// A document is fresh when its indexed copy has the live page's hash. The
// indexed copy is the table's current content (content_hash) when that
// content is searchable: its searchable stage is set, or the search result's
// fetch time is not older than the content's fetch stage. Otherwise newer
// content is still in the pipeline and the document counts as stale
// (Pending). A live page that is gone (4xx), redirects, or is noindex is
// stale too: the index should have dropped it.
//
// Age, for a stale document whose indexed copy was fetched at f and
// refetched at r, lies in (0, r − f]: the first change the index has not
// seen is somewhere in (f, r]. With ProbeOptions.Truth the age is exact.
// Otherwise it is estimated assuming the page changes as a Poisson process
// of rate λ: the first change after f, given one happened by r, is
// exponential truncated to (0, D], D = r − f, so the expected age is
// D/(1 − e^{−λD}) − 1/λ. λ comes from the page's fetch history in
// /api/doc (Cho and Garcia-Molina's estimator −ln((n − X + 0.5)/(n + 0.5))/Ī
// for X changes seen in n revisits Ī apart on average); with no history or
// no change seen, λ → 0 and the estimate is D/2. AgeUpper is D.
//
// Probe stops at ctx's end and returns the documents checked so far.
func Probe(ctx context.Context, opt ProbeOptions) (*Report, error) {
	if err := opt.ensureDefaults(); err != nil {
		return nil, err
	}
	rep := &Report{Server: opt.Server, Queries: opt.Queries, Latency: make(map[string]Distribution), AgeEstimator: "poisson"}
	if opt.Truth != nil {
		rep.AgeEstimator = "exact"
	}

	prog := ProbeProgress{Queries: len(opt.Queries)}
	progress := func(p ProbeProgress) {
		if opt.Progress != nil {
			opt.Progress(p)
		}
	}

	// Candidates: the distinct results of every query, first query first.
	var cands []DocCheck
	seen := make(map[string]bool)
	for _, q := range opt.Queries {
		for start := 0; start < opt.PerQuery; {
			n := min(100, opt.PerQuery-start)
			var res apiResults
			v := url.Values{"q": {q}, "n": {strconv.Itoa(n)}, "start": {strconv.Itoa(start)}}
			if err := getJSON(ctx, opt.Client, opt.Server+"/api/search?"+v.Encode(), &res); err != nil {
				return nil, fmt.Errorf("freshness: search %q: %w", q, err)
			}
			for _, r := range res.Results {
				if !seen[r.URL] {
					seen[r.URL] = true
					cands = append(cands, DocCheck{URL: r.URL, Query: q, FetchedAt: r.FetchedAt, IndexedAt: r.IndexedAt})
				}
			}
			start += len(res.Results)
			if len(res.Results) < n || start >= res.Total {
				break
			}
		}
		prog.QueriesDone++
		prog.Candidates = len(cands)
		progress(prog)
	}
	rep.Candidates = len(cands)
	if len(cands) == 0 {
		return nil, ErrNoDocuments
	}
	if len(cands) > opt.Sample {
		rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x70726f6265)) // "probe"
		rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		cands = cands[:opt.Sample]
	}
	rep.Sampled = len(cands)
	prog.Sampled = len(cands)
	progress(prog)

	var st apiStats
	if err := getJSON(ctx, opt.Client, opt.Server+"/api/stats", &st); err == nil && st.Latency != nil && st.Latency.Count > 0 {
		rep.ServerLatency = &Distribution{Count: st.Latency.Count, P50: st.Latency.P50, P90: st.Latency.P90, P99: st.Latency.P99}
	}

	lf := newLiveFetcher(&opt)
	for i := range cands {
		if ctx.Err() != nil {
			cands = cands[:i]
			break
		}
		d := &cands[i]
		if err := check(ctx, &opt, lf, d); err != nil {
			d.Skipped = err.Error()
			prog.Skipped++
			opt.Logger.Debug("skipped", "url", d.URL, "err", err)
		} else {
			if d.Fresh {
				prog.Fresh++
			} else {
				prog.Stale++
			}
			opt.Logger.Debug("checked", "url", d.URL, "fresh", d.Fresh, "age_s", d.Age)
		}
		prog.Checked, prog.URL = i+1, d.URL
		progress(prog)
	}
	rep.Docs = cands
	rep.Time = time.Now()
	rep.summarize()
	return rep, nil
}

// check reads what the deployment knows of d, refetches it live and
// fills in freshness and age.
func check(ctx context.Context, opt *ProbeOptions, lf *liveFetcher, d *DocCheck) error {
	var doc apiDoc
	if err := getJSON(ctx, opt.Client, opt.Server+"/api/doc?url="+url.QueryEscape(d.URL), &doc); err != nil {
		return fmt.Errorf("doc: %w", err)
	}
	d.IndexHash = doc.ContentHash
	current := true // the index holds the table's current content
	if doc.Stages != nil {
		d.Stages = *doc.Stages
		current = !doc.Stages.Searchable.IsZero() ||
			(!doc.Stages.Fetched.IsZero() && !d.FetchedAt.Before(doc.Stages.Fetched))
	}
	if d.FetchedAt.IsZero() {
		d.FetchedAt = doc.FetchedAt
	}

	live, err := lf.fetch(ctx, d.URL)
	if err != nil {
		return err
	}
	d.CheckedAt, d.LiveStatus, d.LiveHash = live.at, live.status, live.hash
	switch {
	case !live.indexable:
		d.Fresh = false
	case !current:
		d.Fresh, d.Pending = false, true
	default:
		d.Fresh = sameHash(doc.ContentHash, live.hash)
	}

	upper := max(d.CheckedAt.Sub(d.FetchedAt), 0)
	if !d.Fresh {
		d.AgeUpper = upper.Seconds()
	}
	switch {
	case opt.Truth != nil:
		d.Age = Age(opt.Truth, d.URL, d.FetchedAt, d.CheckedAt).Seconds()
	case d.Fresh:
		d.Age = 0
	default:
		d.ChangeRate = changeRate(doc.History)
		d.Age = expectedAge(upper.Seconds(), d.ChangeRate)
	}
	return nil
}

// sameHash compares the table's content hash with a live page's; an empty
// text has no hash and the chain keys it by row instead.
func sameHash(index, live string) bool {
	if live == "" {
		return index == "" || strings.HasPrefix(index, "row:")
	}
	return index == live
}

// changeRate estimates a page's changes per second from its fetch history
// (Cho and Garcia-Molina's estimator for regular revisits, with the mean
// revisit interval): 0 when it has too little history or saw no change.
func changeRate(h []apiFetch) float64 {
	if len(h) < 2 {
		return 0
	}
	h = slices.Clone(h)
	slices.SortFunc(h, func(a, b apiFetch) int { return a.Time.Compare(b.Time) })
	x := 0
	for _, f := range h[1:] { // the oldest fetch brought the first copy
		if f.Changed {
			x++
		}
	}
	n := float64(len(h) - 1)
	mean := h[len(h)-1].Time.Sub(h[0].Time).Seconds() / n
	if x == 0 || mean <= 0 {
		return 0
	}
	return -math.Log((n-float64(x)+0.5)/(n+0.5)) / mean
}

// expectedAge is the expected age of a copy found stale D seconds after
// its fetch, for a Poisson process of rate lambda: D − E[X | X ≤ D] for
// X ~ Exp(lambda), which is D/2 as lambda → 0.
func expectedAge(d, lambda float64) float64 {
	if d <= 0 {
		return 0
	}
	ld := lambda * d
	if ld < 1e-6 {
		return d / 2
	}
	return d/(-math.Expm1(-ld)) - 1/lambda
}

func (r *Report) summarize() {
	var sumAge, sumUpper, sumStale float64
	lat := make(map[string][]time.Duration)
	var resLat []time.Duration
	for _, d := range r.Docs {
		if !d.IndexedAt.IsZero() && !d.FetchedAt.IsZero() {
			resLat = append(resLat, max(d.IndexedAt.Sub(d.FetchedAt), 0))
		}
		if f := d.Stages.Fetched; !f.IsZero() {
			for _, s := range Stages {
				if t := d.Stages.At(s); !t.IsZero() {
					lat[s] = append(lat[s], max(t.Sub(f), 0))
				}
			}
		}
		if d.Skipped != "" {
			r.Skipped++
			continue
		}
		r.Checked++
		if d.Fresh {
			r.Fresh++
		} else {
			r.Stale++
			sumStale += d.Age
			if d.Pending {
				r.Pending++
			}
		}
		sumAge += d.Age
		sumUpper += max(d.AgeUpper, d.Age)
	}
	if r.Checked > 0 {
		r.Freshness = float64(r.Fresh) / float64(r.Checked)
		r.MeanAge = sumAge / float64(r.Checked)
		r.MeanAgeUpper = sumUpper / float64(r.Checked)
	}
	if r.Stale > 0 {
		r.MeanStaleAge = sumStale / float64(r.Stale)
	}
	for _, s := range Stages {
		r.Latency[s] = Summarize(lat[s])
	}
	r.ResultLatency = Summarize(resLat)
}

// getJSON GETs u into v; a non-200 answer is an error with the server's
// {"error"} message if it has one.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %d %s", u, resp.StatusCode, e.Error)
		}
		return fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	return nil
}
