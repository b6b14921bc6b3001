package crawl

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/internal/budget"
	"github.com/caffeine-go/caffeine/webtable"
)

// Large bodies, announced by Content-Length or not, hold a share of the
// memory budget from their fetch to the end of their extraction: never
// more than the share at once, all of it given back, every page whole.
func TestLargeBodiesHoldTheBudget(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1TiB") // Apply leaves the runtime's limit alone
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	(&budget.Budget{MB: 64}).Apply(ctx) // lends 16 MiB
	const size = 3 << 20
	text := strings.Repeat("lorem ipsum ", size/12)
	s := newSite(t)
	var links strings.Builder
	for i := range 6 {
		fmt.Fprintf(&links, `<a href="/big%d">big %d</a>`, i, i)
		declared := i%2 == 0
		s.mux.HandleFunc(fmt.Sprintf("/big%d", i), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			body := "<html><body><p>" + text + "</p></body></html>"
			if declared {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			} else {
				w.(http.Flusher).Flush() // chunked: no length announced
			}
			w.Write([]byte(body))
		})
	}
	s.page("/", links.String())
	tb := openTable(t, "")
	tb.crawl(testOptions(s.URL + "/"))
	for i := range 6 {
		if got := len(tb.get(fmt.Sprintf("%s/big%d", s.URL, i), webtable.Body)); got < size {
			t.Errorf("/big%d: body of %d bytes stored, want %d at least", i, got, size)
		}
	}
	now, peak := budget.Lent()
	if now != 0 || peak != 16<<20 {
		t.Fatalf("after the crawl %d bytes lent, at most %d; want 0, and the whole share of %d for each large body", now, peak, 16<<20)
	}
}
