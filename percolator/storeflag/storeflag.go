// Package storeflag selects a command's table from its flags: -data DIR,
// the embedded Badger store, is the default; -table
// bigtable://PROJECT/INSTANCE/TABLE (with -app-profile) names a Cloud
// Bigtable table instead. BIGTABLE_EMULATOR_HOST points the client at an
// emulator, as usual.
//
// Commands that keep local files besides the table (cmd/search's serving
// index) take -data for those with -table; the others take one of the two
// (Check).
package storeflag

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	gbigtable "cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/caffeine-go/caffeine/internal/indexdir"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
)

var (
	// ErrNoTable is returned by Check when neither -data nor -table is
	// given.
	ErrNoTable = errors.New("storeflag: no table: give -data DIR (the embedded Badger table) or -table bigtable://PROJECT/INSTANCE/TABLE (Cloud Bigtable)")
	// ErrTwoTables is returned by Check when both -data and -table are
	// given.
	ErrTwoTables = errors.New("storeflag: -data and -table both name a table: -data DIR is the embedded Badger table, -table a Cloud Bigtable one; give one of them")
)

// Flags holds the values of -table, -app-profile and -oracle.
type Flags struct {
	Table      string
	AppProfile string
	// Oracle is the comma-separated host:port list of the oracle servers
	// of -table (indexer oracle); empty takes timestamps from the table's
	// oracle row.
	Oracle string
}

// Register defines -table, -app-profile and -oracle on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Table, "table", "", "Cloud Bigtable table `URL` bigtable://PROJECT/INSTANCE/TABLE, used instead of an embedded Badger table in -data (BIGTABLE_EMULATOR_HOST for the emulator)")
	fs.StringVar(&f.Oracle, "oracle", "", "with -table: take timestamps from the oracle servers at `ADDRS` (host:port, comma-separated; see indexer oracle) instead of the table's oracle row")
	fs.StringVar(&f.AppProfile, "app-profile", "", "with -table: the Bigtable app profile `ID` of data calls; it needs single-cluster routing with transactional writes allowed (default: the instance's default profile)")
}

// Set reports whether -table was given.
func (f *Flags) Set() bool { return f.Table != "" }

// Validate checks -table and -app-profile alone: -table must parse, and
// -app-profile goes with -table only. A command whose table is Bigtable's
// or else in its -data directory uses Check instead.
func (f *Flags) Validate() error {
	if !f.Set() {
		if f.AppProfile != "" {
			return errors.New("storeflag: -app-profile without -table: the app profile is of a Bigtable table")
		}
		if f.Oracle != "" {
			return errors.New("storeflag: -oracle without -table: an oracle server serves a Bigtable table (the embedded table has its own oracle)")
		}
		return nil
	}
	if _, err := f.oracle(); err != nil {
		return err
	}
	_, err := f.Config()
	return err
}

// oracle returns a client of the servers of -oracle, or nil without it.
func (f *Flags) oracle() (*percolator.OracleClient, error) {
	if f.Oracle == "" {
		return nil, nil
	}
	c, err := percolator.NewOracleClient(strings.Split(f.Oracle, ","))
	if err != nil {
		return nil, fmt.Errorf("storeflag: -oracle %q: %w", f.Oracle, err)
	}
	return c, nil
}

// Check checks the flags of a command whose table is either the Badger
// table in data (its -data flag) or -table: exactly one must be given
// (ErrNoTable, ErrTwoTables), and the flags must pass Validate.
func (f *Flags) Check(data string) error {
	switch {
	case data == "" && !f.Set() && f.AppProfile == "":
		return ErrNoTable
	case data != "" && f.Set():
		return ErrTwoTables
	case data != "" && f.AppProfile != "":
		return errors.New("storeflag: -app-profile goes with -table, not -data: the Badger table has no app profile")
	case data != "" && f.Oracle != "":
		return errors.New("storeflag: -oracle goes with -table, not -data: the Badger table has its own oracle")
	}
	return f.Validate()
}

// Config returns the Bigtable configuration the flags name.
func (f *Flags) Config() (bigtable.Config, error) {
	cfg, err := ParseTable(f.Table)
	if err != nil {
		return cfg, err
	}
	if f.AppProfile != "" && !appProfile.MatchString(f.AppProfile) {
		return cfg, fmt.Errorf("storeflag: -app-profile %q: not an app profile id", f.AppProfile)
	}
	cfg.AppProfile = f.AppProfile
	return cfg, nil
}

// Open opens the table the flags name, creating it if it does not exist
// (bigtable.Open).
func (f *Flags) Open(ctx context.Context) (*bigtable.Store, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	// An unreachable host or emulator would make the client retry for
	// ever: opening (which creates the table if missing) gets OpenTimeout.
	orc, err := f.oracle()
	if err != nil {
		return nil, err
	}
	if orc != nil {
		cfg.Timestamps = orc // the store closes it
	}
	octx, cancel := context.WithTimeout(ctx, OpenTimeout)
	defer cancel()
	st, err := bigtable.Open(octx, cfg)
	if err != nil && orc != nil {
		orc.Close()
	}
	if err != nil && octx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("storeflag: %s not reachable within %v (BIGTABLE_EMULATOR_HOST=%q): %w", f.Table, OpenTimeout, os.Getenv("BIGTABLE_EMULATOR_HOST"), err)
	}
	return st, err
}

// TableFile is the file in a search -table index directory that names the
// Bigtable table the index there serves (internal/indexdir).
const TableFile = indexdir.TableFile

// IndexTable returns the table named in dir/TableFile: the table whose
// serving index dir holds, or "" if dir has no TableFile.
func IndexTable(dir string) (string, error) { return indexdir.Table(dir) }

// OpenTimeout bounds opening a Bigtable table, and asking whether it
// exists.
var OpenTimeout = 30 * time.Second

// Exists reports whether the table -table names exists (Open creates it;
// a command that only changes what is there asks first).
func (f *Flags) Exists(ctx context.Context) (bool, error) {
	cfg, err := f.Config()
	if err != nil {
		return false, err
	}
	admin, err := gbigtable.NewAdminClient(ctx, cfg.Project, cfg.Instance, cfg.Options...)
	if err != nil {
		return false, fmt.Errorf("storeflag: admin client: %w", err)
	}
	defer admin.Close()
	octx, cancel := context.WithTimeout(ctx, OpenTimeout)
	defer cancel()
	_, err = admin.TableInfo(octx, cfg.Table)
	if err != nil && octx.Err() != nil && ctx.Err() == nil {
		return false, fmt.Errorf("storeflag: %s not reachable within %v (BIGTABLE_EMULATOR_HOST=%q): %w", f.Table, OpenTimeout, os.Getenv("BIGTABLE_EMULATOR_HOST"), err)
	}
	switch status.Code(err) {
	case codes.OK:
		return true, nil
	case codes.NotFound:
		return false, nil
	}
	return false, fmt.Errorf("storeflag: table %q: %w", cfg.Table, err)
}

// OpenStore opens the table of a command that passed Check: the Bigtable
// table of -table if it is set, else the Badger table in data with opt. A
// Badger error keeps Badger's message, which is all a caller has to tell a
// directory another process holds.
func (f *Flags) OpenStore(ctx context.Context, data string, opt badger.Options) (percolator.Store, error) {
	if f.Set() {
		st, err := f.Open(ctx)
		if err != nil {
			return nil, err // not a nil *Store in a non-nil interface
		}
		return st, nil
	}
	if data == "" {
		return nil, ErrNoTable
	}
	if table, err := IndexTable(data); err != nil {
		return nil, err
	} else if table != "" {
		return nil, fmt.Errorf("storeflag: %s holds the serving index of %s, not a table: give -table %s instead of -data", data, table, table)
	}
	st, err := badger.Open(data, opt)
	if err != nil {
		return nil, err
	}
	return st, nil
}

var (
	// Bigtable's own rules: project ids, instance ids, table ids, app
	// profile ids.
	projectID  = regexp.MustCompile(`^[a-z][-a-z0-9.:]{4,61}[a-z0-9]$`)
	instanceID = regexp.MustCompile(`^[a-z][-a-z0-9]{4,31}[a-z0-9]$`)
	tableID    = regexp.MustCompile(`^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,42}$`)
	appProfile = regexp.MustCompile(`^[_a-zA-Z0-9][-_.a-zA-Z0-9]*$`)
)

const scheme = "bigtable://"

// ParseTable parses bigtable://PROJECT/INSTANCE/TABLE. The table id may
// be at most 43 characters: the store adds "-index" for its notify index
// table, and Bigtable allows 50.
func ParseTable(s string) (bigtable.Config, error) {
	rest, ok := strings.CutPrefix(s, scheme)
	if !ok {
		return bigtable.Config{}, fmt.Errorf("storeflag: -table %q: want %sPROJECT/INSTANCE/TABLE", s, scheme)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return bigtable.Config{}, fmt.Errorf("storeflag: -table %q: want %sPROJECT/INSTANCE/TABLE", s, scheme)
	}
	cfg := bigtable.Config{Project: parts[0], Instance: parts[1], Table: parts[2]}
	var errs []error
	if !projectID.MatchString(cfg.Project) {
		errs = append(errs, fmt.Errorf("project %q is not a project id", cfg.Project))
	}
	if !instanceID.MatchString(cfg.Instance) {
		errs = append(errs, fmt.Errorf("instance %q is not an instance id", cfg.Instance))
	}
	if !tableID.MatchString(cfg.Table) {
		errs = append(errs, fmt.Errorf("table %q is not a table id of at most 43 characters", cfg.Table))
	}
	if len(errs) > 0 {
		return bigtable.Config{}, fmt.Errorf("storeflag: -table %q: %w", s, errors.Join(errs...))
	}
	return cfg, nil
}

// LogCalls logs the data calls a Bigtable store sent, by kind and in all
// (nothing for other stores): what this process cost the table.
func LogCalls(log *slog.Logger, st percolator.Store) {
	c, ok := st.(interface{ Calls() map[string]int64 })
	if !ok {
		return
	}
	calls := c.Calls()
	names := slices.Sorted(maps.Keys(calls))
	total := int64(0)
	args := make([]any, 0, 2*len(names)+2)
	for _, n := range names {
		total += calls[n]
		args = append(args, n, calls[n])
	}
	log.Info("bigtable calls", append([]any{"total", total}, args...)...)
}
