package serving

import (
	"context"
	"fmt"
	"github.com/blevesearch/bleve/v2/search/query"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// forgivingIndex is a small manual: a few pages about vacuum and
// configuration, one about checkpoints and WAL together.
func forgivingIndex(t testing.TB) *Index {
	t.Helper()
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 6 {
		es = append(es, upsert(1, fmt.Sprint("v", i), fmt.Sprintf("http://pg.test/vacuum%d.html", i),
			fmt.Sprintf("Vacuum %d", i), "VACUUM reclaims storage occupied by dead tuples. Routine vacuuming.", 1))
	}
	for i := range 4 {
		es = append(es, upsert(1, fmt.Sprint("c", i), fmt.Sprintf("http://pg.test/config%d.html", i),
			fmt.Sprintf("Configuration %d", i), "Configuring the server: the configuration file sets parameters.", 1))
	}
	es = append(es,
		upsert(1, "w", "http://pg.test/wal.html", "WAL", "Checkpoints flush the write-ahead log.", 1),
		upsert(1, "k", "http://pg.test/checkpoint.html", "Checkpoint", "A checkpoint writes dirty buffers.", 1),
		upsert(1, "x", "http://other.test/checkpoint.html", "Checkpoint elsewhere", "A checkpoint writes dirty buffers.", 1),
		upsert(1, "s", "http://pg.test/ship.html", "Ships", "Cargo stowage on deck.", 1),
	)
	apply(t, ix, es...)
	return ix
}

func lookup(t *testing.T, ix *Index, q string) *Results {
	t.Helper()
	res, err := ix.Search(context.Background(), Query{Q: q, N: 10})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

func urls(res *Results) []string {
	var out []string
	for _, r := range res.Results {
		out = append(out, r.URL)
	}
	return out
}

// TestRelaxed: when no page has every word, pages with most of them come
// back, ranked by how many they have, and the results say so; fields,
// hosts and exclusions stay required.
func TestRelaxed(t *testing.T) {
	ix := forgivingIndex(t)

	res := lookup(t, ix, "checkpoint dirty log")
	if !res.Relaxed {
		t.Fatalf("not relaxed: %v", urls(res))
	}
	got := urls(res)
	if len(got) != 3 || !slices.Contains(got[:2], "http://pg.test/checkpoint.html") || got[2] != "http://pg.test/wal.html" {
		t.Errorf("relaxed results %v: the pages with two of the words first, then the one with one", got)
	}
	if res.Total != 3 {
		t.Errorf("total %d", res.Total)
	}

	// All words on few pages: those first, then the pages with some.
	res = lookup(t, ix, "checkpoint dirty")
	if got := urls(res); !res.Relaxed || res.AllWords != 2 || res.Total != 3 || len(got) != 3 || got[2] != "http://pg.test/wal.html" {
		t.Errorf("checkpoint dirty: relaxed %v, all words %d, total %d, %v", res.Relaxed, res.AllWords, res.Total, got)
	}
	// All words on many pages: strict, not relaxed.
	if res := lookup(t, ix, "vacuum storage"); res.Relaxed || res.Total != 6 || res.AllWords != 6 {
		t.Errorf("vacuum storage: relaxed %v, total %d", res.Relaxed, res.Total)
	}
	// A host stays required.
	if got := urls(lookup(t, ix, "checkpoint dirty log site:other.test")); !slices.Equal(got, []string{"http://other.test/checkpoint.html"}) {
		t.Errorf("with site: %v", got)
	}
	// Exclusions stay.
	if got := urls(lookup(t, ix, "checkpoint dirty log -buffers")); !slices.Equal(got, []string{"http://pg.test/wal.html"}) {
		t.Errorf("with an exclusion: %v", got)
	}
	// A question's filler words are not required.
	if res := lookup(t, ix, "how can I reclaim storage"); res.Relaxed || res.Total != 6 {
		t.Errorf("question: relaxed %v, total %d", res.Relaxed, res.Total)
	}
	// So are the verbs of how it is asked for.
	if res := lookup(t, ix, "how do I get and use storage"); res.Relaxed || res.Total != 6 {
		t.Errorf("question with get, use: relaxed %v, total %d", res.Relaxed, res.Total)
	}
	// The same word outside a question is.
	if res := lookup(t, ix, "reclaim storage can"); !res.Relaxed || res.AllWords != 0 {
		t.Errorf("not a question: relaxed %v, all words %d", res.Relaxed, res.AllWords)
	}
	// Words the user marked required are not relaxed.
	if res := lookup(t, ix, "+checkpoint +dirty +log"); res.Relaxed || res.Total != 0 {
		t.Errorf("+words: relaxed %v, total %d", res.Relaxed, res.Total)
	}
	// One word cannot be relaxed.
	if res := lookup(t, ix, "nothinglikethis"); res.Relaxed || res.Total != 0 {
		t.Errorf("one word: relaxed %v, total %d", res.Relaxed, res.Total)
	}
	// A phrase counts as one unit: relaxed with the other word.
	if res := lookup(t, ix, `"dirty buffers" wal`); !res.Relaxed || res.Total != 3 {
		t.Errorf("phrase: relaxed %v, total %d", res.Relaxed, res.Total)
	}
}

// TestSuggestion: a rare word close to a common one gets a suggestion made
// of the index's terms, written as pages write them.
func TestSuggestion(t *testing.T) {
	ix := forgivingIndex(t)
	cases := []struct{ q, want string }{
		{"vacum", "vacuum"},
		{"Vacum", "vacuum"},
		{"vacum storage", "vacuum storage"},
		{"vaccuum", "vacuum"},
		{"vacuum storgae", "vacuum storage"}, // a transposition is one edit
		{"configuraton file", "configuration file"},
		{"vacum site:pg.test", "vacuum site:pg.test"},
		// common words, or nothing close: no suggestion
		{"vacuum", ""},
		{"checkpoint", ""},
		{"zzzzzz", ""},
		{"stowage", ""}, // a word a page has, near one only six pages have (storage)
		{"vacum~1", ""},
		{`"vacum"`, ""},
		{"title:vacum", "title:vacuum"},
	}
	for _, c := range cases {
		if got := lookup(t, ix, c.q).Suggestion; got != c.want {
			t.Errorf("%q: suggestion %q, want %q", c.q, got, c.want)
		}
	}
	// The suggestion finds pages.
	if res := lookup(t, ix, "vacuum"); res.Total != 6 {
		t.Errorf("vacuum: %d results", res.Total)
	}
}

// TestRelaxedOrder: a page with all the words stays above pages with two
// of them that match those better, unless clearly better.
func TestRelaxedOrder(t *testing.T) {
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 3 {
		es = append(es, upsert(1, fmt.Sprint("p", i), fmt.Sprintf("http://x.test/p%d.html", i),
			"Notes", "Snapshot isolation: each snapshot sees rows under isolation.", 1))
	}
	es = append(es, upsert(1, "f", "http://x.test/full.html", "Transactions",
		"Transactions run under snapshot isolation; a serialization failure makes the client retry the transaction.", 1))
	for i := range 20 {
		es = append(es, upsert(1, fmt.Sprint("o", i), fmt.Sprintf("http://x.test/o%d.html", i), "Other", "Serialization of rows to text, and other topics.", 1))
	}
	apply(t, ix, es...)
	res := lookup(t, ix, "snapshot isolation serialization")
	if got := urls(res); !res.Relaxed || res.AllWords != 1 || len(got) == 0 || got[0] != "http://x.test/full.html" {
		t.Errorf("relaxed %v, all words %d: %v", res.Relaxed, res.AllWords, got)
	}
}

// TestCorrected: a misspelled word whose correction finds clearly more
// pages is corrected; the results say so and keep the suggestion;
// Verbatim searches the words as written.
func TestCorrected(t *testing.T) {
	ix := forgivingIndex(t)
	res := lookup(t, ix, "vacum storage")
	if !res.Corrected || res.Suggestion != "vacuum storage" || res.Total != 6 || res.Relaxed {
		t.Fatalf("vacum storage: corrected %v, suggestion %q, total %d, relaxed %v", res.Corrected, res.Suggestion, res.Total, res.Relaxed)
	}
	if len(res.Results[0].Snippet) < 2 || !slices.ContainsFunc(res.Results[0].Snippet, func(s Span) bool { return s.Mark && s.Text == "VACUUM" }) {
		t.Errorf("the snippet marks the corrected word: %v", res.Results[0].Snippet)
	}
	v, err := ix.Search(context.Background(), Query{Q: "vacum storage", N: 10, Verbatim: true})
	if err != nil {
		t.Fatal(err)
	}
	if v.Corrected || v.Suggestion != "vacuum storage" || !v.Relaxed || v.AllWords != 0 {
		t.Errorf("verbatim: corrected %v, suggestion %q, relaxed %v", v.Corrected, v.Suggestion, v.Relaxed)
	}
	// A later page of a corrected query is corrected too.
	p2, err := ix.Search(context.Background(), Query{Q: "vacum", N: 2, Start: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !p2.Corrected || len(p2.Results) != 2 {
		t.Errorf("page 2: corrected %v, %d results", p2.Corrected, len(p2.Results))
	}
}

// TestSuggestionForms: a correction is written as pages write it, and a
// form of the stem far from the word typed is not suggested.
func TestSuggestionForms(t *testing.T) {
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 8 {
		es = append(es, upsert(1, fmt.Sprint("r", i), fmt.Sprintf("http://net.test/r%d.html", i),
			fmt.Sprintf("Receiving %d", i), "The server is receiving messages; receiving takes time.", 1))
	}
	es = append(es,
		upsert(1, "h0", "http://net.test/h0.html", "Hosting", "Hosting sites. Call send_messages.", 1),
		upsert(1, "h1", "http://net.test/h1.html", "Hosting", "Hosting sites. Call send_messages.", 1),
		upsert(1, "q0", "http://net.test/q0.html", "Queries", "Recursive queries refer to themselves.", 1),
		upsert(1, "q1", "http://net.test/q1.html", "Queries", "Recursive queries refer to themselves.", 1))
	for i := range 6 {
		es = append(es, upsert(1, fmt.Sprint("f", i), fmt.Sprintf("http://net.test/f%d.html", i), "Drop", "Refuse to drop it if anything depends on it.", 1))
	}
	apply(t, ix, es...)
	cases := []struct{ q, want string }{
		{"recieve", ""},            // only "receiving" is written: another word
		{"recieving", "receiving"}, // a transposition
		{"hot", ""},                // too short to guess
		{"hsot", ""},               // pages write only "hosting", far from it
		{"messges", "messages"},
		{"hostin", "hosting"},             // no page has it: a word two pages have is enough
		{"send_mesages", "send_messages"}, // an identifier
		{"recusive", "recursive"},         // not "refuse": its stem is as close, the word is not
	}
	for _, c := range cases {
		if got := lookup(t, ix, c.q).Suggestion; got != c.want {
			t.Errorf("%q: suggestion %q, want %q", c.q, got, c.want)
		}
	}
}

func TestReplaceWord(t *testing.T) {
	cases := []struct{ s, w, by, want string }{
		{"vacum", "vacum", "vacuum", "vacuum"},
		{"autovacum vacum", "vacum", "vacuum", "autovacum vacuum"},
		{"title:vacum -x", "vacum", "vacuum", "title:vacuum -x"},
		{"vacumm", "vacum", "vacuum", "vacumm"},
	}
	for _, c := range cases {
		if got, _ := replaceWord(c.s, c.w, c.by); got != c.want {
			t.Errorf("replaceWord(%q, %q): %q, want %q", c.s, c.w, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"vacum", "vacuum", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"checkpiont", "checkpoint", 1}, {"explian", "explain", 1}, {"ab", "ba", 1}, {"état", "etat", 1}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// TestSuggestionContext: of the corrections of a word, the one the
// query's other words come with: "handle" is the commoner word near
// "handlr", "handler" the one pages say with "termination"; a word the
// analyzer splits (a C++ scope) has its parts corrected.
func TestSuggestionContext(t *testing.T) {
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 8 {
		es = append(es, upsert(1, fmt.Sprint("h", i), fmt.Sprintf("http://cpp.test/handle%d.html", i),
			fmt.Sprintf("Handles %d", i), "A handle to a node of a map.", 1))
	}
	for i := range 3 {
		es = append(es, upsert(1, fmt.Sprint("t", i), fmt.Sprintf("http://cpp.test/terminate%d.html", i),
			fmt.Sprintf("Termination %d", i), "The termination handler runs when an exception escapes. See std::unordered_map and std::handler.", 1))
	}
	apply(t, ix, es...)
	for _, c := range []struct{ q, want string }{
		{"termination handlr", "termination handler"},
		{"handlr", "handle"},
		{"std::unordred_map", "std::unordered_map"},
		{"std::handlr", "std::handler"}, // a part's context is the scope's other parts
	} {
		if got := lookup(t, ix, c.q).Suggestion; got != c.want {
			t.Errorf("%q: suggestion %q, want %q", c.q, got, c.want)
		}
	}
}

// The counts that choose a correction stop where told: past it a
// candidate is common enough, and counting every page of a big index
// cost as much as scoring them.
func TestCountUpTo(t *testing.T) {
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 7 {
		es = append(es, upsert(1, fmt.Sprint("p", i), fmt.Sprintf("http://count.test/p%d.html", i),
			fmt.Sprintf("Page %d", i), "the termination handler of page", 1))
	}
	apply(t, ix, es...)
	r := reader(t, ix)
	defer r.Close()
	an := ix.bi.Mapping().AnalyzerNamed(analyzer)
	term := string(an.Analyze([]byte("handler"))[0].Term)
	before := []string{string(an.Analyze([]byte("termination"))[0].Term)}
	for _, c := range []struct {
		max  uint64
		want uint64
	}{{3, 3}, {7, 7}, {100, 7}} {
		q := query.NewTermQuery(term)
		q.SetField(fText)
		if n, err := countUpTo(t.Context(), r, ix.bi.Mapping(), q, c.max); err != nil || n != c.want {
			t.Errorf("countUpTo(%d) = %d, %v; want %d", c.max, n, err, c.want)
		}
	}
	if n, err := together(t.Context(), r, ix.bi.Mapping(), before, term, nil); err != nil || n != [2]uint64{7, 7} {
		t.Errorf("together = %v, %v; want 7 as a phrase and 7 anywhere", n, err)
	}
}
