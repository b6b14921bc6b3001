package bigtable

import "github.com/caffeine-go/caffeine/percolator"

// SetInterleave has s read several filters with Bigtable's interleave on
// the emulator too (on), or the emulator's way (off).
func SetInterleave(s percolator.Store, on bool) { s.(*Store).interleave = on }
