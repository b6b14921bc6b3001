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
