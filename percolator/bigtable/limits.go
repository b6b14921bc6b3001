package bigtable

import (
	"fmt"
	"os"
	"regexp"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/caffeine-go/caffeine/percolator"
)

// MaxMessage is the largest gRPC message the store sends or receives:
// Bigtable's limit on a row (256 MiB, which bounds a cell too: Bigtable
// takes cells up to 100 MiB) plus room for the keys and framing of the
// response holding it. gRPC's default receive limit (4 MiB) would refuse a
// large page body or a batch read meeting several.
const MaxMessage = 256<<20 + 1<<20

// emulatorEnv is the variable the Bigtable client reads the emulator's
// address from.
const emulatorEnv = "BIGTABLE_EMULATOR_HOST"

// sizeOptions returns the client options raising gRPC's message limits to
// MaxMessage, to be placed before the caller's options (a connection the
// caller passes wins), and the connection to the emulator they dial when
// BIGTABLE_EMULATOR_HOST is set (the client's own emulator connection
// keeps gRPC's defaults, and dial options do not reach a pre-dialed
// connection), which the store closes.
func sizeOptions() ([]option.ClientOption, *grpc.ClientConn, error) {
	limits := grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage), grpc.MaxCallSendMsgSize(MaxMessage))
	addr := os.Getenv(emulatorEnv)
	if addr == "" {
		return []option.ClientOption{option.WithGRPCDialOption(limits)}, nil, nil
	}
	conn, err := grpc.NewClient("passthrough:///"+scheme.ReplaceAllString(addr, ""),
		grpc.WithTransportCredentials(insecure.NewCredentials()), limits)
	if err != nil {
		return nil, nil, fmt.Errorf("bigtable: emulator %q: %w", addr, err)
	}
	return []option.ClientOption{option.WithGRPCConn(conn)}, conn, nil
}

// scheme matches a URL scheme the client strips from the emulator address.
var scheme = regexp.MustCompile("^(http://|https://|passthrough:///)")

// maxFilterBytes is the size of the predicate a conditional mutation
// sends at most: Cloud Bigtable refuses a filter of more than 20 KB, and
// the emulator's predicate (nested conditions, one a filter; see
// predicateFilter) would pass protobuf's nesting limit long before.
const maxFilterBytes = 16 << 10

// filterBytes is about what f takes in a request, as btFilter writes it
// (a column range: the column twice; a timestamp range, Latest and
// KeysOnly), plus the condition or interleave around it; never less.
func filterBytes(f percolator.Filter) int {
	col := f.Column
	if col == "" {
		col = f.ColumnPrefix
	}
	return len(f.Family) + 2*len(col) + 64
}

// FitPredicate returns how many of filters, from the first, fit in one
// conditional mutation's predicate (percolator.PredicateLimiter): a
// transaction writing more cells of a row prewrites it in pieces.
func (s *Store) FitPredicate(filters []percolator.Filter) int {
	size := 0
	for i, f := range filters {
		if size += filterBytes(f); size > maxFilterBytes {
			return i
		}
	}
	return len(filters)
}
