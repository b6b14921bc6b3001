package webtable

import (
	"strconv"
	"strings"
)

// ExportRow is the export queue row of an export of page row at version:
// ExportPrefix + %020d(version) + "/" + row, so the queue is in version
// order.
func ExportRow(version uint64, row string) string {
	return ExportFrom(version) + row
}

// ParseExportRow splits an export queue row into its version and page row.
func ParseExportRow(key string) (version uint64, row string, ok bool) {
	rest, found := strings.CutPrefix(key, ExportPrefix)
	if !found || len(rest) < 21 || rest[20] != '/' {
		return 0, "", false
	}
	v, err := strconv.ParseUint(rest[:20], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return v, rest[21:], true
}
