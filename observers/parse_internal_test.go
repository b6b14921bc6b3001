package observers

import "testing"

// TestExpectedSize: the size a parse borrows for before it reads a body
// comes from the fetch's Content-Length or its truncated mark, within
// the body limit; a fetch that says nothing is borrowed for once read.
func TestExpectedSize(t *testing.T) {
	for _, c := range []struct {
		hdrs, truncated string
		want            int64
	}{
		{`{"Content-Length":"5000000"}`, "", 5_000_000},
		{`{"content-length":"123"}`, "", 123},
		{`{"Content-Length":"99999999999"}`, "", truncatedSize},
		{`{"Content-Length":"-1"}`, "", 0},
		{`{"Content-Length":"x"}`, "", 0},
		{`{"Content-Type":"text/html"}`, "1", truncatedSize},
		{``, "1", truncatedSize},
		{`not json`, "", 0},
		{``, "", 0},
	} {
		if got := expectedSize([]byte(c.hdrs), []byte(c.truncated)); got != c.want {
			t.Errorf("expectedSize(%s, %q) = %d, want %d", c.hdrs, c.truncated, got, c.want)
		}
	}
}
