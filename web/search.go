package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

// searchData is the data of search.html.
type searchData struct {
	page
	Query    serving.Query
	Total    uint64
	Took     time.Duration
	Results  []resultView
	First    int        // 1-based position of the first result shown
	Last     int        // and of the last
	Prev     string     // link to the previous page, "" on the first
	Next     string     // link to the next page, "" on the last
	Pages    []pageLink // numbered pages, none for a single page
	Relaxed  bool       // few or no pages have all the words: pages with most of them are shown too
	AllWords int        // pages with all the words, when Relaxed
	Partial  bool       // the search stopped at its time budget: the best of the hits it scored
	// Estimated: Total is an estimate (serving.Results.TotalEstimated),
	// shown as "about".
	Estimated bool
	// Suggestion is the corrected query, "" for none; SuggestHref
	// searches for it.
	Suggestion  string
	SuggestHref string
	// Corrected: the results are Suggestion's; VerbatimHref searches
	// for the query as written.
	Corrected    bool
	VerbatimHref string
	// Home is what the home page shows (no query).
	Home homeView
	// PlainHref searches the query without its operators; set on a
	// page without results when that differs.
	PlainHref  string
	PlainWords string
}

// resultView is a result as the page shows it.
type resultView struct {
	serving.Result
	Href        string        // the link, "" when the URL is not http(s)
	SnippetHTML template.HTML // escaped, then marked
	Anchors     []string      // those worth showing (see shownAnchors)
	DupCount    int           // other members of the cluster, listed or not
	FullTitle   string        // the title with the site's name, when Title lost it
	SectionHref string        // the link to the section that answers (Result.Section), "" if none
}

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r)
	if err != nil {
		return err
	}
	d := searchData{page: page{Title: "Search", Nav: "search", Q: q.Q}, Query: q}
	if q.Q == "" {
		d.Home = s.home(r)
		return s.render(w, http.StatusOK, "search.html", d)
	}
	d.Title = q.Q
	res, took, err := s.search(r, q)
	if err != nil {
		return err
	}
	d.Total, d.Took, d.Relaxed, d.AllWords, d.Partial = res.Total, took, res.Relaxed, int(min(res.AllWords, relaxCap)), res.Partial
	d.Estimated = res.TotalEstimated
	if res.Suggestion != "" && res.Suggestion != q.Q {
		d.Suggestion, d.SuggestHref = res.Suggestion, searchHref(serving.Query{Q: res.Suggestion}, 0, q.N)
		if res.Corrected {
			// Further pages are the corrected query's.
			d.Corrected, d.VerbatimHref = true, searchHref(serving.Query{Q: q.Q, Verbatim: true}, 0, q.N)
		}
	}
	links := serving.Query{Q: q.Q, Verbatim: q.Verbatim}
	if d.Corrected {
		links = serving.Query{Q: res.Suggestion}
	}
	for _, hit := range res.Results {
		v := resultView{Result: hit, Href: safeHref(hit.URL), SnippetHTML: snippetHTML(hit.Snippet), Anchors: shownAnchors(hit.Anchors, hit.Title)}
		v.DupCount = max(len(hit.Duplicates), hit.ClusterSize-1)
		v.SectionHref = sectionHref(v.Href, hit.Section)
		d.Results = append(d.Results, v)
	}
	stripSiteName(d.Results)
	if len(d.Results) > 0 {
		d.First, d.Last = q.Start+1, q.Start+len(d.Results)
	}
	if q.Start > 0 {
		d.Prev = searchHref(links, max(0, q.Start-q.N), q.N)
	}
	if next := q.Start + q.N; uint64(next) < res.Total && next <= serving.MaxStart {
		d.Next = searchHref(links, next, q.N)
	}
	d.Pages = pager(links, res.Total, q.Start, q.N)
	d.Feed = feedHref(links.Q)
	if res.Total == 0 {
		if p := plainWords(q.Q); p != "" {
			d.PlainWords, d.PlainHref = p, searchHref(serving.Query{Q: p}, 0, q.N)
		}
	}
	return s.render(w, http.StatusOK, "search.html", d)
}

// search runs q on the backend. took is the backend's own measure when it
// gives one, else the time the call took.
func (s *Server) search(r *http.Request, q serving.Query) (*serving.Results, time.Duration, error) {
	ctx, cancel := s.queryContext(r)
	defer cancel()
	began := time.Now()
	res, err := s.b.Search(ctx, q)
	if err == nil && res == nil {
		err = errNilResult
	}
	if err != nil {
		return nil, 0, s.backendError(ctx, r, err)
	}
	took := res.Took
	if took <= 0 {
		took = time.Since(began)
	}
	return res, took, nil
}

// searchHref links to a page of results of q (its words and Verbatim).
func searchHref(q serving.Query, start, n int) string {
	v := url.Values{"q": {q.Q}}
	if q.Verbatim {
		v.Set("verbatim", "1")
	}
	if start > 0 {
		v.Set("start", strconv.Itoa(start))
	}
	if n != defaultN {
		v.Set("n", strconv.Itoa(n))
	}
	return "/search?" + v.Encode()
}

// apiResults is the body of GET /api/search.
type apiResults struct {
	Total   uint64 `json:"total"`             // exact, unless partial (then the hits scored, a lower bound) or total_estimated
	Partial bool   `json:"partial,omitempty"` // the search stopped at its time budget: the best results among the hits it scored
	// TotalEstimated: total is an estimate (a query of several words
	// with 10,000 pages or more); the results are exact.
	TotalEstimated bool        `json:"total_estimated,omitempty"`
	TookMS         float64     `json:"took_ms"`
	Relaxed        bool        `json:"relaxed"`             // few or no pages have all the words: pages with most of them are ranked too
	AllWords       *uint64     `json:"all_words,omitempty"` // when relaxed: the pages with all the words
	Suggestion     string      `json:"suggestion"`          // the query with misspelled words corrected, "" for none
	Corrected      bool        `json:"corrected,omitempty"` // the results are the suggestion's, not the query's as written
	Results        []apiResult `json:"results"`
}

// apiResult is one hit of GET /api/search. Times are RFC 3339; slices are
// never null.
type apiResult struct {
	URL         string    `json:"url"`
	Title       string    `json:"title"`
	Snippet     string    `json:"snippet"`      // plain text
	SnippetHTML string    `json:"snippet_html"` // escaped, matches in <mark>
	Score       float64   `json:"score"`
	PageRank    float64   `json:"pagerank"`
	FetchedAt   time.Time `json:"fetched_at"`
	IndexedAt   time.Time `json:"indexed_at"`
	Duplicates  []string  `json:"duplicates"`
	Similar     []string  `json:"similar"`       // near-copies folded under this result
	SimilarN    int       `json:"similar_count"` // len(Similar)
	Anchors     []string  `json:"anchors"`
	ClusterSize int       `json:"cluster_size"`
	FileType    string    `json:"filetype,omitempty"` // html, pdf or txt
	Lang        string    `json:"lang,omitempty"`     // the page's language ("en", "fr")
	// Section is the part of the page that answers the query, when a
	// part does: its heading and URL#fragment.
	Section *apiSection `json:"section,omitempty"`
}

// apiSection is a result's section.
type apiSection struct {
	Heading string `json:"heading"`
	URL     string `json:"url"`
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := queryParams(r)
	if err != nil {
		return err
	}
	if q.Q == "" {
		return badRequest("the query is empty: ask for /api/search?q=words")
	}
	f, err := format(r)
	if err != nil {
		return err
	}
	if f == "atom" {
		return s.apiFeed(w, r, q)
	}
	res, took, err := s.search(r, q)
	if err != nil {
		return err
	}
	out := apiResults{
		Total:          res.Total,
		TookMS:         float64(took) / float64(time.Millisecond),
		Relaxed:        res.Relaxed,
		Partial:        res.Partial,
		TotalEstimated: res.TotalEstimated,
		Suggestion:     res.Suggestion,
		Corrected:      res.Corrected,
		Results:        make([]apiResult, 0, len(res.Results)),
	}
	if res.Relaxed {
		out.AllWords = &res.AllWords
	}
	for _, hit := range res.Results {
		out.Results = append(out.Results, apiResult{
			URL:         hit.URL,
			Title:       hit.Title,
			Snippet:     snippetText(hit.Snippet),
			SnippetHTML: string(snippetHTML(hit.Snippet)),
			Score:       hit.Score,
			PageRank:    hit.PageRank,
			FetchedAt:   hit.FetchedAt,
			IndexedAt:   hit.IndexedAt,
			Duplicates:  nonNil(hit.Duplicates),
			Similar:     nonNil(hit.Similar),
			SimilarN:    len(hit.Similar),
			Anchors:     nonNil(hit.Anchors),
			ClusterSize: hit.ClusterSize,
			FileType:    hit.FileType,
			Lang:        hit.Lang,
			Section:     resultSection(hit),
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// nonNil makes a nil slice empty, so JSON has [] and not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// relaxCap bounds AllWords as the page shows it: relaxed results are
// those of queries few pages fully match.
const relaxCap = 1 << 20

// stripSiteName leaves the site's name off the titles when every titled
// result has it, as the same prefix or suffix (" — PostgreSQL 15
// Documentation"): it says nothing about one page. The full title stays
// in the link's tooltip.
func stripSiteName(rs []resultView) {
	var titles []string
	for _, r := range rs {
		if r.Title != "" {
			titles = append(titles, r.Title)
		}
	}
	pre, suf := commonAffix(titles)
	if pre == "" && suf == "" {
		return
	}
	for i := range rs {
		if rs[i].Title != "" {
			rs[i].FullTitle, rs[i].Title = rs[i].Title, stripAffix(rs[i].Title, pre, suf)
		}
	}
}

// resultSection is hit's section as the API gives it, nil if none.
func resultSection(hit serving.Result) *apiSection {
	u := sectionHref(safeHref(hit.URL), hit.Section)
	if u == "" {
		return nil
	}
	return &apiSection{Heading: hit.SectionHeading, URL: u}
}
