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
	kind  string // one of kinds
	pages []string
}

// The kinds of judged queries, as a set marks them ([keyword], [question],
// [typo] lines): words as in an index, natural questions with their stop
// words, and words with a typo.
var kinds = []string{"keyword", "question", "typo"}

// loadJudged reads an embedded set by name, else a file.
func loadJudged(name string) ([]judgedQuery, error) {
	b, err := judgedSets.ReadFile("judged/" + name + ".tsv")
	if err != nil {
		if b, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("judged set %q: neither an embedded set (postgresql, git-doc, sqlite, debian-handbook, libstdc++, qt) nor a readable file: %w", name, err)
		}
	}
	return parseJudged(b)
}

// parseJudged reads lines of query TAB path [TAB path...]; a line [kind]
// makes the queries after it of that kind (keyword before the first).
func parseJudged(b []byte) ([]judgedQuery, error) {
	var qs []judgedQuery
	kind := kinds[0]
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") && !strings.Contains(line, "\t") {
			k := strings.TrimSpace(line[1 : len(line)-1])
			if !slices.Contains(kinds, k) {
				return nil, fmt.Errorf("line %d: unknown kind %q: want one of %s", n, k, strings.Join(kinds, ", "))
			}
			kind = k
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 2 || strings.TrimSpace(f[0]) == "" || strings.TrimSpace(f[1]) == "" {
			return nil, fmt.Errorf("line %d: want a query, a tab and the path of the page that answers it", n)
		}
		jq := judgedQuery{q: strings.TrimSpace(f[0]), kind: kind}
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
	scores
	p50, p99 time.Duration
	misses   []miss
	snippets []string // the first result's snippet a query, marks in [brackets]
	baseline *scores  // plain BM25 over the same pages, nil when not measured
}

// scores are the success rates of a set's queries, of all and by kind.
type scores struct {
	all    tally
	byKind map[string]*tally
}

// tally sums the ranks of the answering pages of n queries.
type tally struct {
	n           int
	p1, p3, mrr float64 // sums until mean
}

// add counts a query whose first answering page came at rank (0: not in
// the first 10).
func (s *scores) add(kind string, rank int) {
	if s.byKind == nil {
		s.byKind = make(map[string]*tally)
	}
	t := s.byKind[kind]
	if t == nil {
		t = &tally{}
		s.byKind[kind] = t
	}
	for _, t := range []*tally{&s.all, t} {
		t.n++
		if rank == 1 {
			t.p1++
		}
		if rank >= 1 && rank <= 3 {
			t.p3++
		}
		if rank > 0 {
			t.mrr += 1 / float64(rank)
		}
	}
}

func (t tally) rates() (p1, p3, mrr float64) {
	if t.n == 0 {
		return 0, 0, 0
	}
	n := float64(t.n)
	return t.p1 / n, t.p3 / n, t.mrr / n
}

// rankOf is the rank of the first of paths that answers jq, 0 if none.
func rankOf(jq judgedQuery, paths []string) int {
	for i, p := range paths {
		if slices.Contains(jq.pages, p) {
			return i + 1
		}
	}
	return 0
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
	r := &report{}
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
			var paths []string
			for _, h := range res.Results {
				paths = append(paths, pathOf(b.base, h.URL))
			}
			rank := rankOf(jq, paths)
			r.add(jq.kind, rank)
			if rank != 1 {
				r.misses = append(r.misses, miss{q: jq.q, want: jq.pages[0], rank: rank, first: paths[:min(3, len(paths))]})
			}
		}
	}
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
	p1, p3, mrr := r.all.rates()
	fmt.Fprintf(w, "P@1 %.3f  P@3 %.3f  MRR %.3f  query p50 %.2f ms  p99 %.2f ms\n",
		p1, p3, mrr, ms(r.p50), ms(r.p99))
	r.printKinds(w)
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

// printKinds prints the scores by kind of query, beside the baseline's.
func (r *report) printKinds(w io.Writer) {
	head := fmt.Sprintf("%-9s %4s  %-19s", "type", "n", "P@1   P@3   MRR")
	if r.baseline != nil {
		head += "  plain BM25 P@1   P@3   MRR"
	}
	fmt.Fprintln(w, head)
	row := func(name string, t tally, b *tally) {
		p1, p3, mrr := t.rates()
		line := fmt.Sprintf("%-9s %4d  %.3f %.3f %.3f", name, t.n, p1, p3, mrr)
		if b != nil {
			p1, p3, mrr := b.rates()
			line += fmt.Sprintf("  %14.3f %.3f %.3f", p1, p3, mrr)
		}
		fmt.Fprintln(w, line)
	}
	for _, k := range kinds {
		t := r.byKind[k]
		if t == nil {
			continue
		}
		var b *tally
		if r.baseline != nil {
			b = r.baseline.byKind[k]
		}
		row(k, *t, b)
	}
	var b *tally
	if r.baseline != nil {
		b = &r.baseline.all
	}
	row("all", r.all, b)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
