package serving

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/webtable"
)

// TestCompounds: two words in a row of the query match a page that
// writes them as one word ("back up": "backup"; "auto increment":
// "autoincrement"; "shared buffers": "shared_buffers"; "user name":
// "user.name"; three words: "effective cache size", "sync with stdio"),
// with or without the stop word between the letters,
// while many pages have the words apart (no relaxing). A pair that no
// page writes as one word changes nothing.
func TestCompounds(t *testing.T) {
	ix := openIndex(t)
	var es []webtable.Export
	for i := range 12 {
		es = append(es, upsert(1, fmt.Sprint("o", i), fmt.Sprintf("http://db.test/other%d.html", i),
			fmt.Sprintf("Other %d", i), "Go back to the database list; auto mode; increment the counter of a column; shared memory and buffers; the user's name; an effective size of the cache; sync the streams with stdio.", 1))
	}
	es = append(es,
		upsert(1, "b", "http://db.test/backup.html", "Backup", "Make a backup of a database with the backup command.", 1),
		upsert(1, "a", "http://db.test/autoincrement.html", "Autoincrement", "A column declared autoincrement gets the next integer.", 1),
		upsert(1, "s", "http://db.test/memory.html", "Resource settings", "Set shared_buffers to a quarter of the memory.", 1),
		upsert(1, "u", "http://db.test/config.html", "Configuration", "Set user.name and user.email before the first commit.", 1),
		upsert(1, "q", "http://db.test/planner.html", "Planner settings", "Raise effective_cache_size on a machine with much memory.", 1),
		upsert(1, "i", "http://db.test/streams.html", "Streams and C", "Call sync_with_stdio(false) once, before any output.", 1),
	)
	apply(t, ix, es...)
	for _, c := range []struct{ q, want string }{
		{"how do I back up a database", "http://db.test/backup.html"},
		{"back up database", "http://db.test/backup.html"},
		{"auto increment column", "http://db.test/autoincrement.html"},
		{"shared buffers", "http://db.test/memory.html"},
		{"user name", "http://db.test/config.html"},
		{"effective cache size", "http://db.test/planner.html"},
		{"sync with stdio", "http://db.test/streams.html"},
	} {
		res := lookup(t, ix, c.q)
		if res.Relaxed {
			t.Errorf("%q: relaxed, want every word matched", c.q)
		}
		if got := urls(res); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: %v, want %s first", c.q, got, c.want)
		}
	}
	// The identifier is marked in the snippet.
	res := lookup(t, ix, "shared buffers")
	marked := false
	for _, sp := range res.Results[0].Snippet {
		marked = marked || sp.Mark && sp.Text == "shared_buffers"
	}
	if !marked {
		t.Errorf("shared buffers: snippet %+v, want shared_buffers marked", res.Results[0].Snippet)
	}
	if got := urls(lookup(t, ix, "database list")); slices.Contains(got, "http://db.test/backup.html") {
		t.Errorf("database list: %v, want no page without list", got)
	}
}
