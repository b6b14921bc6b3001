package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
)

// runOracle is `indexer oracle -table URL -listen ADDR`: the timestamp
// oracle server of a Bigtable table, for the processes started with
// -oracle ADDR. Several may run on one table: one serves, the others
// take over when it dies.
func runOracle(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("indexer oracle", flag.ContinueOnError)
	var tf storeflag.Flags
	tf.Register(fs)
	listen := fs.String("listen", "127.0.0.1:7433", "serve timestamps on this `address`")
	id := fs.String("id", "", "this server's name in the table's lease row (default host-pid-random)")
	ttl := fs.Duration("lease", 3*time.Second, "how long the lease lasts unrenewed: the longest fail-over")
	skew := fs.Duration("clock-skew", 500*time.Millisecond, "the most two servers' clocks differ")
	data := fs.String("data", "", "not taken: an embedded table has its oracle in its one process")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data != "" {
		return errors.New("oracle: -data names an embedded table, whose one process has its own oracle: the oracle server serves a Bigtable table (-table bigtable://PROJECT/INSTANCE/TABLE)")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("oracle: unexpected argument %q", fs.Arg(0))
	}
	if !tf.Set() {
		return errors.New("oracle: -table is required: the oracle server serves a Bigtable table (the embedded table has its own oracle)")
	}
	if tf.Oracle != "" {
		return errors.New("oracle: -oracle names servers to take timestamps from, not this one: give -listen")
	}
	if err := tf.Validate(); err != nil {
		return err
	}
	st, err := tf.Open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer storeflag.LogCalls(slog.Default(), st) // what serving cost the table
	srv, err := percolator.NewOracleServer(st, percolator.OracleServerOptions{ID: *id, LeaseTTL: *ttl, ClockSkew: *skew, Logger: slog.Default()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	slog.Info("oracle: serving", "addr", ln.Addr().String(), "table", tf.Table)
	return srv.Serve(ctx, ln)
}
