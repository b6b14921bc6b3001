package web

import (
	"net/http"
	"time"

	"github.com/caffeine-go/caffeine/serving/feed"
)

// maxCachedText is how much of the indexed text the document page shows.
const maxCachedText = 256 << 10

// docData is the data of doc.html.
type docData struct {
	page
	D           *feed.DocInfo
	Href        string // link to the page itself, "" when not http(s)
	IsCanonical bool
	Stages      []stageView
	Latency     time.Duration // crawl → searchable of the current content, 0 if not yet
	Text        string        // the cached copy, cut at maxCachedText
	TextCut     bool
}

// stageView is one row of the pipeline table.
type stageView struct {
	Name  string
	Time  time.Time
	After time.Duration // since fetched; 0 for the fetch itself or when unknown
}

func (s *Server) doc(r *http.Request) (*feed.DocInfo, error) {
	u, err := urlParam(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.queryContext(r)
	defer cancel()
	d, err := s.b.Doc(ctx, u)
	if err == nil && d == nil {
		err = errNilResult
	}
	if err != nil {
		return nil, s.backendError(ctx, r, err)
	}
	return d, nil
}

func (s *Server) docPage(w http.ResponseWriter, r *http.Request) error {
	d, err := s.doc(r)
	if err != nil {
		return err
	}
	v := docData{
		page:        page{Title: d.URL, Nav: "doc"},
		D:           d,
		Href:        safeHref(d.URL),
		IsCanonical: d.Canonical == "" || d.Canonical == d.URL,
		Text:        d.Text,
	}
	if d.Title != "" {
		v.Title = d.Title
	}
	st := d.Stages
	for _, sv := range []stageView{
		{Name: "fetched", Time: st.Fetched},
		{Name: "parsed", Time: st.Parsed},
		{Name: "clustered", Time: st.Clustered},
		{Name: "exported", Time: st.Exported},
		{Name: "searchable", Time: st.Searchable},
	} {
		if !sv.Time.IsZero() && !st.Fetched.IsZero() {
			sv.After = sv.Time.Sub(st.Fetched)
		}
		v.Stages = append(v.Stages, sv)
	}
	if !st.Fetched.IsZero() && !st.Searchable.IsZero() {
		v.Latency = st.Searchable.Sub(st.Fetched)
	}
	if len(v.Text) > maxCachedText {
		v.Text, v.TextCut = clipBytes(v.Text, maxCachedText), true
	}
	return s.render(w, http.StatusOK, "doc.html", v)
}

// clipBytes cuts s to at most n bytes on a rune boundary.
func clipBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (s *Server) apiDoc(w http.ResponseWriter, r *http.Request) error {
	d, err := s.doc(r)
	if err != nil {
		return err
	}
	out := *d
	out.Outlinks = nonNil(out.Outlinks)
	out.Inlinks = nonNil(out.Inlinks)
	out.Duplicates = nonNil(out.Duplicates)
	out.Similar = nonNil(out.Similar)
	out.History = nonNil(out.History)
	writeJSON(w, http.StatusOK, out)
	return nil
}
