package webtable

import "testing"

// The rows of entries of their own (members, redirects, spilled links)
// parse back to their owner and item, sort inside their owner's range,
// and nothing else parses.
func TestSubRows(t *testing.T) {
	for _, c := range []struct {
		prefix string
		row    func(owner, item string) string
		rng    func(owner string) (string, string)
		parse  func(row string) (string, string, bool)
	}{
		{MemberRowPrefix, MemberRow, MemberRange, ParseMemberRow},
		{AliasRowPrefix, AliasRow, AliasRange, ParseAliasRow},
		{InSpillPrefix, InSpillRow, InSpillRange, ParseInSpillRow},
	} {
		owner, item := "com.example:http/a", "com.example:http/b?x=1"
		r := c.row(owner, item)
		if o, i, ok := c.parse(r); !ok || o != owner || i != item {
			t.Errorf("%s: parse(%q) = %q, %q, %v", c.prefix, r, o, i, ok)
		}
		start, end := c.rng(owner)
		if r < start || r >= end {
			t.Errorf("%s: %q outside [%q, %q)", c.prefix, r, start, end)
		}
		// Another owner that begins with this one's name is outside.
		if o := c.row(owner+"x", item); o >= start && o < end {
			t.Errorf("%s: %q inside [%q, %q)", c.prefix, o, start, end)
		}
		for _, bad := range []string{owner, c.prefix + owner, c.prefix + "\x00" + item, c.prefix + owner + "\x00", "!x/" + owner + "\x00" + item} {
			if _, _, ok := c.parse(bad); ok {
				t.Errorf("%s: parse(%q) ok", c.prefix, bad)
			}
		}
	}
}
