// Package indexdir names what a serving index directory says of the
// table it serves: a directory of `search -table` holds, beside the
// index, a file naming the Bigtable table. It imports no store, so that
// the engine can read it without the Bigtable client.
package indexdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TableFile is the file in a search -table index directory that names the
// Bigtable table the index there serves. Such a directory holds no table
// of its own: storeflag.OpenStore refuses it as -data rather than create
// an empty Badger table beside the index.
const TableFile = "table"

// Table returns the table named in dir/TableFile: the table whose
// serving index dir holds, or "" if dir has no TableFile.
func Table(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, TableFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("indexdir: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
