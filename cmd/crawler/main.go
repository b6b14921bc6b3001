// Command crawler is not built yet; see the project's issues.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "crawler: not implemented yet")
	os.Exit(2)
}
