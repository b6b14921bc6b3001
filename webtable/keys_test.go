package webtable

import "testing"

func TestQueueAndFrontierKeys(t *testing.T) {
	row := "com.example.www:http/a?b/c"
	k := ExportRow(42, row)
	if k != "!export/00000000000000000042/"+row {
		t.Errorf("ExportRow = %q", k)
	}
	if v, r, ok := ParseExportRow(k); !ok || v != 42 || r != row {
		t.Errorf("ParseExportRow(%q) = %d, %q, %v", k, v, r, ok)
	}
	if ExportFrom(43) <= k || ExportFrom(42) > k {
		t.Errorf("ExportFrom does not bound %q", k)
	}
	d := DueRow(1_700_000_000_000, row)
	if ms, r, ok := ParseDueRow(d); !ok || ms != 1_700_000_000_000 || r != row {
		t.Errorf("ParseDueRow(%q) = %d, %q, %v", d, ms, r, ok)
	}
	if DueFrom(1_700_000_000_001) <= d || DueFrom(1_700_000_000_000) > d {
		t.Errorf("DueFrom does not bound %q", d)
	}
	for _, bad := range []string{"", "!export/", "!export/12/x", "!export/0000000000000000004x/r", "!due/17/x", "!due/17000000000000x/r"} {
		if _, _, ok := ParseExportRow(bad); ok {
			t.Errorf("ParseExportRow(%q) ok", bad)
		}
		if _, _, ok := ParseDueRow(bad); ok {
			t.Errorf("ParseDueRow(%q) ok", bad)
		}
	}
}

// TestSpreadDueRows: a frontier row of a spread table is in its row's
// bucket, between the bucket's keys of the positions around it, and parses
// as the spread-1 row does.
func TestSpreadDueRows(t *testing.T) {
	const ms = 1_700_000_000_000
	for _, row := range []string{"com.example.www:http/a?b/c", "org.example:http/", "com.example:http/x"} {
		k, pos, b := SpreadDueRow(16, ms, row), DueRow(ms, row), SpreadOf(row, 16)
		if gotMs, r, ok := ParseDueRow(k); !ok || gotMs != ms || r != row || DuePos(k) != pos {
			t.Errorf("ParseDueRow(%q) = %d, %q, %v; DuePos %q", k, gotMs, r, ok, DuePos(k))
		}
		if k < DueIn(16, b, DueFrom(ms)) || k >= DueIn(16, b, DueFrom(ms+1)) || k >= DueBucketEnd(16, b) || k < DueIn(16, b, DuePrefix) {
			t.Errorf("%q outside bucket %d's range of its time", k, b)
		}
		for o := range 16 {
			if o != b && k >= DueIn(16, o, DuePrefix) && k < DueBucketEnd(16, o) {
				t.Errorf("%q in bucket %d's range, its bucket is %d", k, o, b)
			}
		}
		if SpreadDueRow(1, ms, row) != pos || DueIn(1, 0, pos) != pos {
			t.Errorf("spread 1 changes the frontier rows")
		}
	}
}
