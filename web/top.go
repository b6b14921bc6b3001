package web

import (
	"net/http"

	"github.com/caffeine-go/caffeine/serving"
)

// topData is the data of top.html.
type topData struct {
	page
	T *serving.Top
	N int
}

func (s *Server) top(r *http.Request) (*serving.Top, int, error) {
	host, n, err := topParams(r)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := s.queryContext(r)
	defer cancel()
	t, err := s.b.Top(ctx, host, n)
	if err == nil && t == nil {
		err = errNilResult
	}
	if err != nil {
		return nil, 0, s.backendError(ctx, r, err)
	}
	out := *t // the backend's value is only read
	if out.Host == "" {
		out.Host = host
	}
	return &out, n, nil
}

func (s *Server) topPage(w http.ResponseWriter, r *http.Request) error {
	t, n, err := s.top(r)
	if err != nil {
		return err
	}
	title := "Top pages"
	if t.Host != "" {
		title = "Pages of " + t.Host
	}
	return s.render(w, http.StatusOK, "top.html", topData{page: page{Title: title, Nav: "top"}, T: t, N: n})
}

func (s *Server) apiTop(w http.ResponseWriter, r *http.Request) error {
	t, _, err := s.top(r)
	if err != nil {
		return err
	}
	out := *t
	out.Pages = nonNil(out.Pages)
	out.Hosts = nonNil(out.Hosts)
	writeJSON(w, http.StatusOK, out)
	return nil
}
