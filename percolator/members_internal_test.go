package percolator

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"
)

// views returns each member's view of the members ids, all running the
// observers obs[id] (default "o").
func views(ids []string, obs map[string][]string) map[string]*members {
	var all []member
	for _, id := range ids {
		o := obs[id]
		if o == nil {
			o = []string{"o"}
		}
		all = append(all, member{id: id, observers: o})
	}
	out := make(map[string]*members)
	for _, m := range all {
		p := &partition{id: m.id, observers: m.observers}
		var others []member
		for _, x := range all {
			if x.id != m.id {
				others = append(others, x)
			}
		}
		out[m.id] = p.build(time.Now(), others)
	}
	return out
}

// owners returns, for each row, the members whose view says they own its
// notification for observer "o".
func owners(vs map[string]*members, rows []string) map[string][]string {
	out := make(map[string][]string)
	for _, row := range rows {
		for id, v := range vs {
			g := v.groups["o"]
			if g != nil && g.mine[Bucket(row)] {
				out[row] = append(out[row], id)
			}
		}
	}
	return out
}

func testRows(n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf("com.example.www%d/page/%d", i%17, i)
	}
	return rows
}

// Members that agree on who is live agree on the owner of every row: each
// row has exactly one, and the shares are even.
func TestRendezvousOneOwner(t *testing.T) {
	ids := []string{"0a1b", "77ff", "c3d2", "deadbeef", "e0"}
	rows := testRows(5000)
	share := make(map[string]int)
	for row, who := range owners(views(ids, nil), rows) {
		if len(who) != 1 {
			t.Fatalf("%s owned by %v, want one member", row, who)
		}
		share[who[0]]++
	}
	for _, id := range ids {
		if n := share[id]; n < len(rows)/len(ids)*8/10 || n > len(rows)/len(ids)*12/10 {
			t.Errorf("shares %v: %s is more than 20%% off an even share", share, id)
		}
	}
}

// A death moves only the dead member's rows, a join only the rows the new
// member takes.
func TestRendezvousMovesOnlyOneShare(t *testing.T) {
	ids := []string{"0a1b", "77ff", "c3d2", "deadbeef"}
	rows := testRows(4000)
	before := owners(views(ids, nil), rows)
	afterDeath := owners(views(ids[1:], nil), rows) // 0a1b died
	afterJoin := owners(views(append([]string{"new1"}, ids...), nil), rows)
	took := 0
	for _, row := range rows {
		if was, now := before[row][0], afterDeath[row][0]; was != now && was != ids[0] {
			t.Fatalf("%s moved from %s to %s when %s died", row, was, now, ids[0])
		}
		if was, now := before[row][0], afterJoin[row][0]; was != now {
			if now != "new1" {
				t.Fatalf("%s moved from %s to %s when new1 joined", row, was, now)
			}
			took++
		}
	}
	// Rows move by bucket (Buckets of them), so shares vary more than
	// rows would.
	if took < len(rows)/5*7/10 {
		t.Errorf("the new member took %d of %d rows, want about a fifth", took, len(rows))
	}
}

// A row's notification for an observer belongs to a member running it:
// members of other observers take none, and a lone member of an observer
// owns all of its notifications.
func TestRendezvousByObserver(t *testing.T) {
	ids := []string{"a", "b", "c"}
	vs := views(ids, map[string][]string{"a": {"o"}, "b": {"o", "x"}, "c": {"x"}})
	for row, who := range owners(vs, testRows(1000)) {
		if len(who) != 1 || who[0] == "c" {
			t.Fatalf("%s's o owned by %v, want one of a, b", row, who)
		}
	}
	if g := vs["c"].groups["x"]; len(g.hashes) != 2 {
		t.Errorf("x's group has %d members, want b and c", len(g.hashes))
	}
	if _, ok := vs["c"].groups["o"]; ok {
		t.Error("c, which does not run o, has a group for it")
	}
	if g := views([]string{"a", "b"}, map[string][]string{"a": {"o"}, "b": {"x"}})["a"].groups["o"]; len(g.hashes) != 1 {
		t.Errorf("a alone runs o, yet its group has %d members", len(g.hashes))
	}
}

func TestFNV64(t *testing.T) {
	for _, s := range []string{"", "a", "com.example.www/", "\x00meta/scanner/0123"} {
		f := fnv.New64a()
		f.Write([]byte(s))
		if got, want := fnv64(s), f.Sum64(); got != want {
			t.Errorf("fnv64(%q) = %x, want %x", s, got, want)
		}
	}
}

// BenchmarkOwned measures what the partition adds to a pass per notified
// row: filtering its cells by owner among 3 and 20 members.
func BenchmarkOwned(b *testing.B) {
	obs := map[string]*observerState{"in": {Observer: Observer{Name: "o", Column: "in"}}}
	for _, n := range []int{3, 20} {
		b.Run(fmt.Sprint(n, "members"), func(b *testing.B) {
			var ids []string
			for i := range n {
				ids = append(ids, fmt.Sprintf("%016x", mix64(uint64(i))))
			}
			v := views(ids, nil)[ids[0]]
			rows := testRows(1024)
			cells := make([]Cell, 2)
			b.ResetTimer()
			for i := range b.N {
				cells = cells[:2]
				cells[0] = Cell{Family: famNotify, Column: "in", Ts: 2}
				cells[1] = Cell{Family: famNotify, Column: "in", Ts: 1}
				v.owned(rows[i%len(rows)], cells, obs)
			}
		})
	}
}

func TestBucketRangesAndClip(t *testing.T) {
	var mine [Buckets]bool
	for _, b := range []int{0, 1, 2, 7, Buckets - 1} {
		mine[b] = true
	}
	k := BucketStart
	ranges := bucketRanges(mine)
	want := []KeyRange{{k(0), k(3)}, {k(7), k(8)}, {k(Buckets - 1), ""}}
	if !slices.Equal(ranges, want) {
		t.Fatalf("bucketRanges = %q, want %q", ranges, want)
	}
	for _, tc := range []struct {
		name     string
		from, to string
		want     []KeyRange
	}{
		{"All", "", "", want},
		{"FromInside", k(1) + "row", "", []KeyRange{{k(1) + "row", k(3)}, {k(7), k(8)}, {k(Buckets - 1), ""}}},
		{"ToInside", "", k(7) + "x", []KeyRange{{k(0), k(3)}, {k(7), k(7) + "x"}}},
		{"Between", k(3), k(7), nil},
		{"Wrapped", "", k(1) + "row", []KeyRange{{k(0), k(1) + "row"}}},
		{"LastOnly", k(Buckets-1) + "z", "", []KeyRange{{k(Buckets-1) + "z", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clip(ranges, tc.from, tc.to); !slices.Equal(got, tc.want) {
				t.Errorf("clip(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
	for _, row := range testRows(100) {
		key := BucketKey(row)
		if got, ok := RowOfBucketKey(key); !ok || got != row {
			t.Errorf("RowOfBucketKey(BucketKey(%q)) = %q", row, got)
		}
		if b := Bucket(row); key < BucketStart(b) || BucketStart(b+1) != "" && key >= BucketStart(b+1) {
			t.Errorf("BucketKey(%q) outside its bucket %d", row, b)
		}
	}
}
