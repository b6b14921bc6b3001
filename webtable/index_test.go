package webtable

import "testing"

// TestIndexQueues: the default index keeps ExportPrefix and SearchableAt;
// another's queue is outside the default's scan range, and no queue's range
// holds another's rows.
func TestIndexQueues(t *testing.T) {
	row := "com.example/a"
	m, r, r2 := QueueOf(DefaultIndex), QueueOf("r"), QueueOf("r2")
	if m.Row(42, row) != ExportRow(42, row) || m.Served != SearchableAt || QueueOf("") != m {
		t.Errorf("the default queue is %+v", m)
	}
	if r.Served == SearchableAt || r.Served == r2.Served {
		t.Errorf("served columns %q %q", r.Served, r2.Served)
	}
	for _, n := range []int{1, 16} {
		qs := []Queue{SpreadQueue(DefaultIndex, n), SpreadQueue("r", n), SpreadQueue("r2", n)}
		for _, q := range qs {
			k, b := q.Row(42, row), SpreadOf(row, n)
			if q.Version(k) != 42 || k < q.From(b, 42) || k >= q.From(b, 43) || k >= q.BucketEnd(b) || k >= q.End() {
				t.Errorf("%s (spread %d): row %q outside its range", q.Name, n, k)
			}
			if n > 1 && (b == 0 || k < q.From(b, 0) || k < q.BucketEnd(b-1)) {
				t.Errorf("%s (spread %d): row %q in bucket %d, or its range holds another bucket's", q.Name, n, k, b)
			}
			for _, o := range qs {
				if o != q && k >= o.Prefix && k < o.End() {
					t.Errorf("%s's row %q is in %s's range", q.Name, k, o.Name)
				}
			}
		}
	}
	for name, ok := range map[string]bool{"main": true, "r-2_b": true, "": false, "R": false, "a/b": false, "a.b": false} {
		if err := CheckIndexName(name); (err == nil) != ok {
			t.Errorf("CheckIndexName(%q) = %v", name, err)
		}
	}
}
