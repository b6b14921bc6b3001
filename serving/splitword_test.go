package serving

import (
	"testing"
)

// A query word the analyzer splits ("f-string") needs all its parts, and
// finds them together first.
func TestSplitWordSearch(t *testing.T) {
	ix := openIndex(t)
	apply(t, ix,
		upsert(1, "d", "http://id.test/d.html", "Formatting", "An f-string formats values inline.", 1),
		upsert(1, "e", "http://id.test/e.html", "Flags", "The f flag makes a string; the string is formatted.", 1),
		upsert(1, "s", "http://id.test/s.html", "Text", "A string is text; a string of strings.", 1),
		upsert(1, "h", "http://id.test/h.html", "Hooks", "The pre-commit hook runs before a commit.", 1),
		upsert(1, "c", "http://id.test/c.html", "Commits", "Commit after the pre step; commit again.", 1),
	)
	cases := []struct {
		q     string
		first string
		n     int // pages found
	}{
		{"f-string", "d", 2},        // then the page with "f" and "string" apart, not the one without "f"
		{"pre-commit", "h", 2},      // then the page with "pre" and "commit" apart
		{"pre-commit hook", "h", 2}, // the second has not "hook": relaxed
	}
	for _, c := range cases {
		got := urls(lookup(t, ix, c.q))
		if len(got) != c.n || got[0] != "http://id.test/"+c.first+".html" {
			t.Errorf("%q: %v, want %d pages, %s.html first", c.q, got, c.n, c.first)
		}
	}
}
