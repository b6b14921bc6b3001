package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

// The judged sets, by name: judged/NAME.tsv.
//
//go:embed judged/*.tsv
var judgedSets embed.FS

// judgedQuery is a query and the pages that answer it (paths under the
// corpus root, the first the page it is about).
type judgedQuery struct {
	q     string
	pages []string
}

// loadJudged reads an embedded set by name, else a file.
func loadJudged(name string) ([]judgedQuery, error) {
	b, err := judgedSets.ReadFile("judged/" + name + ".tsv")
	if err != nil {
		if b, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("judged set %q: neither an embedded set (postgresql, git-doc) nor a readable file: %w", name, err)
		}
	}
	return parseJudged(b)
}

// parseJudged reads lines of query TAB path [TAB path...].
func parseJudged(b []byte) ([]judgedQuery, error) {
	var qs []judgedQuery
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 2 || strings.TrimSpace(f[0]) == "" || strings.TrimSpace(f[1]) == "" {
			return nil, fmt.Errorf("line %d: want a query, a tab and the path of the page that answers it", n)
		}
		jq := judgedQuery{q: strings.TrimSpace(f[0])}
		for _, p := range f[1:] {
			if p = strings.TrimSpace(p); p != "" {
				jq.pages = append(jq.pages, strings.TrimPrefix(p, "/"))
			}
		}
		qs = append(qs, jq)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("no judged queries")
	}
	return qs, nil
}

// report is what an evaluation measured.
type report struct {
	queries     int
	p1, p3, mrr float64
	p50, p99    time.Duration
	misses      []miss
	snippets    []string // the first result's snippet a query, marks in [brackets]
}

// miss is a query whose answering page was not first.
type miss struct {
	q     string
	want  string
	rank  int // 0: not in the first 10
	first []string
}

// evaluate runs every query once to judge it and rounds more times to time
// it.
func evaluate(ctx context.Context, b *built, qs []judgedQuery, rounds int, profile string) (*report, error) {
	r := &report{queries: len(qs)}
	var took []time.Duration
	for round := 0; round <= rounds; round++ {
		if round == 1 && profile != "" {
			f, err := os.Create(profile)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return nil, err
			}
			defer pprof.StopCPUProfile()
		}
		for _, jq := range qs {
			began := time.Now()
			res, err := b.ix.Search(ctx, serving.Query{Q: jq.q, N: 10})
			if err != nil {
				return nil, fmt.Errorf("query %q: %w", jq.q, err)
			}
			if round > 0 {
				took = append(took, time.Since(began))
				continue
			}
			r.snippets = append(r.snippets, firstSnippet(jq.q, res))
			rank := 0
			var paths []string
			for i, h := range res.Results {
				p := pathOf(b.base, h.URL)
				paths = append(paths, p)
				if rank == 0 && slices.Contains(jq.pages, p) {
					rank = i + 1
				}
			}
			if rank == 1 {
				r.p1++
			}
			if rank >= 1 && rank <= 3 {
				r.p3++
			}
			if rank > 0 {
				r.mrr += 1 / float64(rank)
			}
			if rank != 1 {
				r.misses = append(r.misses, miss{q: jq.q, want: jq.pages[0], rank: rank, first: paths[:min(3, len(paths))]})
			}
		}
	}
	n := float64(len(qs))
	r.p1, r.p3, r.mrr = r.p1/n, r.p3/n, r.mrr/n
	slices.Sort(took)
	r.p50 = took[len(took)/2]
	r.p99 = took[min(len(took)-1, len(took)*99/100)]
	return r, nil
}

// pathOf returns a result URL's path under the corpus root ("index.html"
// for the root itself).
func pathOf(base, u string) string {
	p := strings.TrimPrefix(strings.TrimPrefix(u, base), "/")
	if p == "" {
		return "index.html"
	}
	return p
}

// firstSnippet is a query's first result's snippet as a line.
func firstSnippet(q string, res *serving.Results) string {
	if len(res.Results) == 0 {
		return fmt.Sprintf("%q: no results", q)
	}
	var b strings.Builder
	for _, s := range res.Results[0].Snippet {
		if s.Mark {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	return fmt.Sprintf("%q: %s", q, b.String())
}

func (r *report) print(w io.Writer, misses, snippets bool) {
	fmt.Fprintf(w, "P@1 %.3f  P@3 %.3f  MRR %.3f  query p50 %.2f ms  p99 %.2f ms\n",
		r.p1, r.p3, r.mrr, ms(r.p50), ms(r.p99))
	if snippets {
		fmt.Fprintln(w, "first results' snippets:")
		for _, s := range r.snippets {
			fmt.Fprintln(w, "  "+s)
		}
	}
	if !misses || len(r.misses) == 0 {
		return
	}
	fmt.Fprintln(w, "not first (rank: 0 = not in the first 10):")
	for _, m := range r.misses {
		fmt.Fprintf(w, "  %-36q want %-40s rank %d; first %s\n", m.q, m.want, m.rank, strings.Join(m.first, " "))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
