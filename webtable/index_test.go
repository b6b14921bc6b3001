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
	for _, q := range []Queue{m, r, r2} {
		k := q.Row(42, row)
		if q.Version(k) != 42 || k < q.From(42) || k >= q.From(43) || k >= q.End() {
			t.Errorf("%s: row %q outside its range", q.Name, k)
		}
		for _, o := range []Queue{m, r, r2} {
			if o != q && k >= o.Prefix && k < o.End() {
				t.Errorf("%s's row %q is in %s's range", q.Name, k, o.Name)
			}
		}
	}
	for name, ok := range map[string]bool{"main": true, "r-2_b": true, "": false, "R": false, "a/b": false, "a.b": false} {
		if err := CheckIndexName(name); (err == nil) != ok {
			t.Errorf("CheckIndexName(%q) = %v", name, err)
		}
	}
}
