// Package bigtable is a percolator.Store on the Cloud Bigtable API
// (cloud.google.com/go/bigtable), for tables shared by many processes.
//
// Every Store method is one Bigtable call (ReadRow, ReadRows,
// CheckAndMutateRow, MutateRows, ReadModifyWriteRow), plus the admin calls
// of EnsureFamilies. The store is not a percolator.ExclusiveStore: Bigtable
// cannot hold a row while the oracle is asked, so the DB commits every
// transaction in two phases on it.
//
// Timestamps: the client truncates cell timestamps to milliseconds, so a
// cell at oracle timestamp ts is written at ts×1000 µs, and an inclusive
// filter range [min, max] becomes [min×1000, (max+1)×1000). Timestamps up
// to 2^52−1 fit (×1000 stays below 2^63). Families get no garbage
// collection rule: an age-based rule would read the oracle's timestamps as
// wall times (Percolator's GC deletes old versions itself).
//
// Exact columns and column prefixes are column range filters, never
// regular expressions, so column names may hold any byte. A cell matched by
// several filters of a union (Bigtable's Interleave returns it once per
// filter) is returned once.
//
// A conditional mutation whose RPC failed with an unknown outcome
// (Unavailable, DeadlineExceeded, Aborted, Internal, or Canceled while the
// caller's context is alive) is decided by re-reading the cells its branches
// set; see CheckAndMutateRow.
//
// Notifications: Bigtable has no locality groups, so a scan filtered to the
// notify family would read the whole table. Families in the locality
// groups of Config.IndexGroups (by default Percolator's "notify") therefore
// also get an index in a separate table; see the comment of groupIndex.
//
// Real Bigtable needs an app profile with single-cluster routing and
// transactional writes allowed, because CheckAndMutateRow and
// ReadModifyWriteRow are refused (or not atomic) under multi-cluster
// routing: pass it as Config.AppProfile.
package bigtable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/caffeine-go/caffeine/percolator"
)

// Config names a table and how to reach it.
type Config struct {
	Project, Instance, Table string
	// AppProfile is the app profile of data calls; empty is the instance's
	// default. It must use single-cluster routing with transactional
	// writes allowed.
	AppProfile string
	// IndexGroups are the locality groups whose families are mirrored in
	// the group index (see groupIndex); nil means DefaultIndexGroups.
	IndexGroups []string
	// Options are passed to the data and admin clients (credentials, a
	// pre-dialed connection). With BIGTABLE_EMULATOR_HOST set, the clients
	// talk to the emulator there without credentials.
	Options []option.ClientOption
	// Timestamps, if set, is where the DBs opened on the store take their
	// timestamps (an oracle server's percolator.OracleClient) instead of
	// the table's oracle row. The store closes it if it has a Close
	// method.
	Timestamps percolator.TimestampSource
}

// DefaultIndexGroups indexes Percolator's notify group only. Its lock
// group is not indexed here: this index may miss a cell for a while (a
// process dying between the two writes), which a notification survives
// (it runs later) but GC's oldest lock must not. Percolator keeps a lock
// index of its own in the table instead (one entry per transaction,
// written before its first lock), which the lock sweep and GC read.
var DefaultIndexGroups = []string{"notify"}

// Store is a percolator.Store on one Bigtable table (and its group index
// table, see groupIndex). It is safe for concurrent use.
type Store struct {
	cfg    Config
	client *bigtable.Client
	admin  *bigtable.AdminClient
	tbl    *bigtable.Table
	index  *groupIndex
	// mutations gathers concurrent MutateRows calls (batch.go).
	mutations together[rowWrite, applied]
	conn      *grpc.ClientConn // the emulator connection of sizeOptions, or nil
	// interleave has reads of several filters use Bigtable's interleave
	// on the emulator too (tests; see readFilter).
	interleave bool

	mu     sync.Mutex
	groups map[string]bool // families mirrored in the group index

	increments atomic.Uint64 // Increment calls, for pruneEvery
	calls      calls
	indexRows  atomic.Int64 // rows read from the group index
}

var (
	_ percolator.TimestampStore = (*Store)(nil)
	_ percolator.BucketStore    = (*Store)(nil)
)

// Open connects to the table of cfg, creating it if it does not exist. The
// caller calls EnsureFamilies before using it, as with any store.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Project == "" || cfg.Instance == "" || cfg.Table == "" {
		return nil, fmt.Errorf("bigtable: project, instance and table are required (got %q/%q/%q)", cfg.Project, cfg.Instance, cfg.Table)
	}
	opts, conn, err := sizeOptions()
	if err != nil {
		return nil, err
	}
	client, err := bigtable.NewClientWithConfig(ctx, cfg.Project, cfg.Instance, bigtable.ClientConfig{AppProfile: cfg.AppProfile}, append(opts, cfg.Options...)...)
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("bigtable: client: %w", err)
	}
	admin, err := bigtable.NewAdminClient(ctx, cfg.Project, cfg.Instance, cfg.Options...)
	if err != nil {
		client.Close()
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("bigtable: admin client: %w", err)
	}
	s := &Store{cfg: cfg, client: client, admin: admin, conn: conn, tbl: client.Open(cfg.Table), groups: make(map[string]bool)}
	s.index = &groupIndex{s: s, tbl: client.Open(indexTable(cfg.Table))}
	for _, t := range []string{cfg.Table, indexTable(cfg.Table)} {
		if err := s.createTable(ctx, t); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// indexTable is the name of the group index table of table.
func indexTable(table string) string { return table + "-index" }

// oldIndexTable is the name of the group index of table when it was
// indexed by row: EnsureFamilies moves it to indexTable (see migrate).
func oldIndexTable(table string) string { return table + "-groups" }

func (s *Store) createTable(ctx context.Context, table string) error {
	if _, err := s.admin.TableInfo(ctx, table); err == nil {
		return nil
	} else if status.Code(err) != codes.NotFound {
		return fmt.Errorf("bigtable: table %q: %w", table, err)
	}
	if err := s.admin.CreateTable(ctx, table); err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("bigtable: create table %q: %w", table, err)
	}
	return nil
}

// EnsureFamilies implements percolator.Store. Families are created without
// a garbage collection rule. Locality groups do not exist in Bigtable: a
// family in one of Config.IndexGroups is indexed in the group index table
// instead.
func (s *Store) EnsureFamilies(ctx context.Context, fams []percolator.Family) error {
	if err := s.ensure(ctx, s.cfg.Table, fams); err != nil {
		return err
	}
	indexed := s.cfg.IndexGroups
	if indexed == nil {
		indexed = DefaultIndexGroups
	}
	var grouped []percolator.Family
	for _, f := range fams {
		if f.LocalityGroup != "" && slices.Contains(indexed, f.LocalityGroup) {
			grouped = append(grouped, percolator.Family{Name: f.Name})
		}
	}
	if err := s.ensure(ctx, indexTable(s.cfg.Table), grouped); err != nil {
		return err
	}
	s.mu.Lock()
	for _, f := range grouped {
		s.groups[f.Name] = true
	}
	s.mu.Unlock()
	return s.migrate(ctx, grouped)
}

// migrate moves the group index of a table indexed by row (oldIndexTable)
// to the bucketed index, then deletes it: every index cell is written
// again under its row's BucketKey. Several processes may do it at once
// (the writes are the same); one that finds the old table gone is done.
// A cell a process of the old layout indexes after the move is found by
// the next sweep.
func (s *Store) migrate(ctx context.Context, grouped []percolator.Family) error {
	old := oldIndexTable(s.cfg.Table)
	if len(grouped) == 0 {
		return nil
	}
	if _, err := s.admin.TableInfo(ctx, old); status.Code(err) == codes.NotFound {
		return nil
	} else if err != nil {
		return fmt.Errorf("bigtable: table %q: %w", old, err)
	}
	var filters []percolator.Filter
	for _, f := range grouped {
		filters = append(filters, percolator.Filter{Family: f.Name, KeysOnly: true})
	}
	var batch []percolator.RowMutation
	err := s.client.Open(old).ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		var muts []percolator.Mutation
		for _, c := range cells(r) {
			muts = append(muts, percolator.Mutation{Op: percolator.SetCell, Family: c.Family, Column: c.Column, Ts: c.Ts})
		}
		if len(muts) > 0 {
			batch = append(batch, percolator.RowMutation{Row: r.Key(), Mutations: muts})
		}
		if len(batch) >= verifyBatch {
			s.index.add(ctx, batch)
			batch = nil
		}
		return true
	}, bigtable.RowFilter(unionFilter(filters)))
	if status.Code(err) == codes.NotFound {
		return nil // another process moved it
	}
	if err != nil {
		return fmt.Errorf("bigtable: read %q to move it: %w", old, err)
	}
	s.index.add(ctx, batch)
	if err := s.admin.DeleteTable(ctx, old); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("bigtable: delete %q after moving it: %w", old, err)
	}
	return nil
}

func (s *Store) ensure(ctx context.Context, table string, fams []percolator.Family) error {
	if len(fams) == 0 {
		return nil
	}
	info, err := s.admin.TableInfo(ctx, table)
	if err != nil {
		return fmt.Errorf("bigtable: table %q: %w", table, err)
	}
	have := make(map[string]bool, len(info.FamilyInfos))
	for _, f := range info.FamilyInfos {
		have[f.Name] = true
	}
	for _, f := range fams {
		if have[f.Name] {
			continue
		}
		if err := s.admin.CreateColumnFamily(ctx, table, f.Name); err != nil && status.Code(err) != codes.AlreadyExists {
			return fmt.Errorf("bigtable: create family %q of %q: %w", f.Name, table, err)
		}
		have[f.Name] = true
	}
	return nil
}

// grouped reports whether fam is mirrored in the group index.
func (s *Store) grouped(fam string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[fam]
}

// Timestamps implements percolator.TimestampStore: Config.Timestamps.
func (s *Store) Timestamps() percolator.TimestampSource { return s.cfg.Timestamps }

// Close implements percolator.Store.
func (s *Store) Close() error {
	err := s.client.Close()
	if c, ok := s.cfg.Timestamps.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	// With a connection passed in Config.Options, the data client closes
	// it for both.
	if aerr := s.admin.Close(); status.Code(aerr) != codes.Canceled {
		err = errors.Join(err, aerr)
	}
	if s.conn != nil {
		// Closed by the data client already unless the caller passed a
		// connection of its own.
		s.conn.Close()
	}
	return err
}
