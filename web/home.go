package web

import (
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/caffeine-go/caffeine/serving"
)

// The home page shows what was crawled and a few example queries, drawn
// from the titles of the top pages: one small Top call, kept for homeTTL.
const (
	homeTTL      = time.Minute
	homeTopPages = 12 // pages whose titles give the examples
	homeExamples = 6
	homeHosts    = 5 // hosts named
	exampleWords = 3 // words of an example query at most
)

// homeView is what the home page shows under its heading; the zero value
// shows nothing (an empty index, or a backend that failed).
type homeView struct {
	Pages     int      // documents in the index
	Hosts     int      // hosts with indexed pages
	MoreHosts bool     // Hosts is the facet's cap: at least that many
	TopHosts  []string // the hosts with the most pages
	Examples  []string // queries
}

// homeCache keeps the home page's view for homeTTL.
type homeCache struct {
	mu sync.Mutex
	v  homeView
	at time.Time
}

// home returns the home page's view, computed at most once per homeTTL.
// A failing backend leaves it empty: the home page still works.
func (s *Server) home(r *http.Request) homeView {
	c := &s.homeCache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.opt.Now()
	if age := now.Sub(c.at); !c.at.IsZero() && age >= 0 && age < homeTTL {
		return c.v
	}
	ctx, cancel := s.queryContext(r)
	defer cancel()
	var v homeView
	if st, err := s.b.Stats(ctx); err == nil && st != nil {
		v.Pages = st.Indexed
	} else if err != nil {
		s.opt.Logger.Warn("home: stats", "err", err)
	}
	if t, err := s.b.Top(ctx, "", homeTopPages); err == nil && t != nil {
		v.Hosts, v.MoreHosts = len(t.Hosts), len(t.Hosts) >= serving.MaxResults
		for _, h := range t.Hosts[:min(len(t.Hosts), homeHosts)] {
			v.TopHosts = append(v.TopHosts, h.Host)
		}
		titles := make([]string, 0, len(t.Pages))
		for _, p := range t.Pages {
			titles = append(titles, p.Title)
		}
		v.Examples = exampleQueries(titles, homeExamples)
	} else if err != nil {
		s.opt.Logger.Warn("home: top", "err", err)
	}
	c.v, c.at = v, now
	return v
}

// exampleStop are words an example query leaves out.
var exampleStop = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "this": true,
	"that": true, "are": true, "was": true, "its": true, "how": true, "what": true, "you": true,
	"your": true, "our": true, "not": true, "but": true, "all": true, "can": true, "use": true,
	"using": true, "about": true, "home": true, "page": true, "index": true, "welcome": true,
	"chapter": true, "part": true, "section": true, "appendix": true,
}

// romanNumeral: "vii" of "Part VII. Internals" is no word to search.
func romanNumeral(w string) bool {
	return len(w) <= 4 && strings.Trim(w, "ivxlc") == ""
}

// exampleQueries makes up to n queries of the titles: the site's name
// (an affix every title shares) left off, then the first exampleWords
// words of three letters or more that are not stop words, lower-cased;
// no query twice.
func exampleQueries(titles []string, n int) []string {
	pre, suf := commonAffix(titles)
	var out []string
	seen := map[string]bool{}
	for _, t := range titles {
		t = stripAffix(t, pre, suf)
		var words []string
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '_' }) {
			if len([]rune(w)) < 3 || exampleStop[w] || !hasLetter(w) || romanNumeral(w) {
				continue
			}
			words = append(words, w)
			if len(words) == exampleWords {
				break
			}
		}
		q := strings.Join(words, " ")
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		out = append(out, q)
		if len(out) == n {
			break
		}
	}
	return out
}

// plainWords is q without its operators, for a zero-results page: quotes,
// "+", wildcards and fuzziness gone, excluded words and fields other than
// title, text and anchors dropped, those three kept as their words.
// "" when nothing is left or q has no operators.
func plainWords(q string) string {
	var words []string
	for _, w := range strings.Fields(q) {
		if strings.HasPrefix(w, "-") {
			continue
		}
		w = strings.TrimLeft(w, "+")
		if field, val, ok := strings.Cut(w, ":"); ok {
			switch strings.Trim(strings.ToLower(field), `"(+`) {
			case "title", "text", "anchors":
				w = val
			default:
				continue
			}
		}
		if i := strings.IndexByte(w, '~'); i >= 0 {
			w = w[:i]
		}
		w = strings.Trim(strings.Map(func(r rune) rune {
			if strings.ContainsRune(`"()*?/\`, r) {
				return ' '
			}
			return r
		}, w), " ")
		words = append(words, strings.Fields(w)...)
	}
	p := strings.Join(words, " ")
	if p == strings.Join(strings.Fields(q), " ") {
		return ""
	}
	return p
}
