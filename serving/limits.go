package serving

import (
	"context"
	"regexp/syntax"
	"runtime"
	"strings"

	"github.com/blevesearch/bleve/v2/search/searcher"
	vregexp "github.com/blevesearch/vellum/regexp"
	zapx "github.com/blevesearch/zapx/v17"
)

// maxExpansion is how many index terms one regexp, wildcard, fuzzy or
// prefix term may expand to (per field); a query expanding to more is a
// bad query. Bleve's limit is process-wide and off by default.
const maxExpansion = 1024

func init() {
	searcher.DisjunctionMaxClauseCount = maxExpansion
	// A new segment's buffer starts at the last segment's bytes a
	// document times the batch's documents plus this bump (100 by
	// default): after a batch of one 5 MB document, the next batch of
	// one took 470 MB at once. Without the bump the estimate is the
	// batch's own size, and the buffer grows from there as it must.
	zapx.NewSegmentBufferNumResultsBump = 0
}

// checkRegexp refuses what Bleve would refuse at search time, with a plain
// message: Go regexp syntax errors, anchors and word boundaries (a term
// regexp always matches a whole term), and automata over Bleve's size
// limit.
func checkRegexp(re string) error {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return badQuery("bad regular expression /%s/: %s", clip(re, 60), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if hasAssertion(parsed) {
		return badQuery(`regular expression /%s/: a regular expression matches whole terms, as if it began with ^ and ended with $; remove ^, $, \b, \B, \A and \z`, clip(re, 60))
	}
	if _, err := vregexp.NewParsedWithLimit(re, parsed, vregexp.DefaultLimit); err != nil {
		return badQuery("regular expression /%s/ is too complex; make it shorter or more specific", clip(re, 60))
	}
	return nil
}

func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if hasAssertion(sub) {
			return true
		}
	}
	return false
}

// wildcardToRegexp is how Bleve turns a wildcard into a regexp.
var wildcardToRegexp = strings.NewReplacer(
	"+", `\+`, "(", `\(`, ")", `\)`, "^", `\^`, "$", `\$`, ".", `\.`,
	"{", `\{`, "}", `\}`, "[", `\[`, "]", `\]`, `|`, `\|`, `\`, `\\`,
	"*", ".*", "?", ".")

// checkWildcard refuses a wildcard whose automaton is over Bleve's limit.
func checkWildcard(w string) error {
	if _, err := vregexp.New(wildcardToRegexp.Replace(w)); err != nil {
		return badQuery("wildcard %s is too complex; use fewer ? and *", clip(w, 60))
	}
	return nil
}

// limiter bounds how many searches run at once, and how many of them are
// costly (regexps, wildcards, fuzzy terms), so that expensive queries
// cannot take every core. Waiting for a slot ends with the request's
// context.
type limiter struct {
	all    chan struct{}
	costly chan struct{}
}

// newLimiter allows n searches at once (0: one per core), of which half
// (at least one) may be costly.
func newLimiter(n int) *limiter {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &limiter{all: make(chan struct{}, n), costly: make(chan struct{}, max(1, n/2))}
}

// acquire waits for a slot (a costly and a general one for a costly
// search, in that order) and returns its release.
func (l *limiter) acquire(ctx context.Context, costly bool) (release func(), err error) {
	if costly {
		select {
		case l.costly <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case l.all <- struct{}{}:
	case <-ctx.Done():
		if costly {
			<-l.costly
		}
		return nil, ctx.Err()
	}
	return func() {
		<-l.all
		if costly {
			<-l.costly
		}
	}, nil
}
