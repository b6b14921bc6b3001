package bigtable

import "github.com/caffeine-go/caffeine/percolator"

// ForceInterleave has s read several filters with Bigtable's interleave
// on the emulator too.
func ForceInterleave(s percolator.Store) { s.(*Store).interleave = true }
