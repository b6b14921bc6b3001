package bigtable

import (
	"fmt"
	"os"
	"regexp"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
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
