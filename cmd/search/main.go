// Command search is not built yet; see the project's issues.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "search: not implemented yet")
	os.Exit(2)
}
