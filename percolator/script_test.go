package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// TestScripts runs the transaction and notification scripts in
// testdata/script, each on a new table on Badger in a temporary directory,
// in the style of pebble's datadriven tests. Commands (arguments in
// brackets are optional):
//
//	open [observed=c1,c2] [weak=c3]  open the table (else opened on first use)
//	begin t1                         start transaction t1
//	get t1 row col                   read in t1's snapshot
//	set t1 row col value             buffer a write in t1
//	delete t1 row col                buffer a deletion in t1
//	tx-notify t1 row col             buffer a weak notification in t1
//	commit t1                        commit t1: committed, or the error
//	commit t1 crash=POINT            commit t1 and abandon it at POINT:
//	                                 after-primary-prewrite, after-prewrites,
//	                                 after-primary-commit, mid-secondaries
//	rollback t1                      roll t1 back
//	read row col                     read in a new snapshot
//	cleanup                          DB.CleanLocks: resolve abandoned locks
//	notify row col                   DB.Notify: a weak notification
//	observer name=N col=C out=O      define an observer that copies C to O
//	run-observers                    run a worker until idle, print the runs
//	scan-notifications               the notifications pending, per cell
//	dump                             the raw cells: data, lock, write, notify
//
// Timestamps print as names: t1.start and t1.commit for a script's
// transactions, obs(N,row).start for an observer run, ts1, ts2... for
// the others in the order they are first printed. At the end the table
// must be clean: no lock left, no transaction running.
//
// go test ./percolator -run TestScripts -rewrite regenerates the expected
// outputs; read every change against the paper before committing it.
func TestScripts(t *testing.T) {
	runScripts(t, func(t *testing.T, opt percolator.Options) *percolator.DB {
		db, _ := percolatortest.Open(t, opt)
		return db
	})
}

// TestScriptsShared runs the scripts on Badger with its ExclusiveStore
// hidden, as on a table other processes can reach: every commit in two
// phases, locks judged by the writer's heartbeat. The outputs are the same.
func TestScriptsShared(t *testing.T) {
	runScripts(t, func(t *testing.T, opt percolator.Options) *percolator.DB {
		return percolatortest.OpenOn(t, percolatortest.Shared(openStore(t, t.TempDir())), opt)
	})
}

// TestScriptsBigtable runs the scripts on the Bigtable store, on a new
// table of the emulator each.
func TestScriptsBigtable(t *testing.T) {
	runScripts(t, func(t *testing.T, opt percolator.Options) *percolator.DB {
		return percolatortest.OpenOn(t, bigtableStore(t, "script-"+strings.ReplaceAll(t.Name(), "/", "-")), opt)
	})
}

// runScripts runs every script of testdata/script on a table that open
// opens.
func runScripts(t *testing.T, open func(t *testing.T, opt percolator.Options) *percolator.DB) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		s := &script{t: t, openDB: open, txs: map[string]*percolator.Tx{}, names: map[uint64]string{}}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	t         *testing.T
	openDB    func(t *testing.T, opt percolator.Options) *percolator.DB
	db        *percolator.DB
	txs       map[string]*percolator.Tx
	observers []percolator.Observer
	names     map[uint64]string // timestamp → its name in the output
	others    int               // unnamed timestamps seen

	mu   sync.Mutex
	runs []string // observer runs of the current run-observers
}

var crashPoints = map[string]percolator.CrashPoint{
	"after-primary-prewrite": percolator.CrashAfterPrimaryPrewrite,
	"after-prewrites":        percolator.CrashAfterPrewrites,
	"after-primary-commit":   percolator.CrashAfterPrimaryCommit,
	"mid-secondaries":        percolator.CrashMidSecondaries,
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	if d.Cmd == "open" {
		if s.db != nil {
			d.Fatalf(t, "open: the table is open already")
		}
		s.open(t, d)
		return ""
	}
	if s.db == nil {
		s.db = s.openDB(s.t, percolator.Options{})
	}
	switch d.Cmd {
	case "begin":
		name := s.arg(t, d, 0)
		if s.txs[name] != nil {
			d.Fatalf(t, "transaction %s begun already", name)
		}
		tx, err := s.db.Begin(ctx)
		if err != nil {
			return "error: " + err.Error()
		}
		s.txs[name] = tx
		s.names[tx.StartTs()] = name + ".start"
		return ""
	case "get":
		v, err := s.tx(t, d).Get(ctx, s.arg(t, d, 1), s.arg(t, d, 2))
		return value(v, err)
	case "set":
		return errText(s.tx(t, d).Set(s.arg(t, d, 1), s.arg(t, d, 2), []byte(s.arg(t, d, 3))))
	case "delete":
		return errText(s.tx(t, d).Delete(s.arg(t, d, 1), s.arg(t, d, 2)))
	case "tx-notify":
		return errText(s.tx(t, d).Notify(s.arg(t, d, 1), s.arg(t, d, 2)))
	case "commit":
		tx := s.tx(t, d)
		name := s.arg(t, d, 0)
		if d.HasArg("crash") {
			var at string
			d.ScanArgs(t, "crash", &at)
			p, ok := crashPoints[at]
			if !ok {
				d.Fatalf(t, "unknown crash point %q", at)
			}
			percolator.SetCrash(tx, func(q percolator.CrashPoint) bool { return q == p })
		}
		err := tx.Commit(ctx)
		if c := tx.CommitTs(); c != 0 {
			s.names[c] = name + ".commit"
		}
		switch {
		case errors.Is(err, percolator.ErrCrashed):
			return "crashed"
		case err != nil:
			return "error: " + err.Error()
		}
		return "committed"
	case "rollback":
		s.tx(t, d).Rollback()
		return ""
	case "read":
		var v []byte
		err := s.db.View(ctx, func(tx *percolator.Tx) error {
			var err error
			v, err = tx.Get(ctx, s.arg(t, d, 0), s.arg(t, d, 1))
			return err
		})
		return value(v, err)
	case "cleanup":
		n, err := s.db.CleanLocks(ctx)
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("resolved %d locks", n)
	case "notify":
		return errText(s.db.Notify(ctx, s.arg(t, d, 0), s.arg(t, d, 1)))
	case "observer":
		var name, col, out string
		d.ScanArgs(t, "name", &name)
		d.ScanArgs(t, "col", &col)
		d.ScanArgs(t, "out", &out)
		s.observers = append(s.observers, s.copier(name, col, out))
		return ""
	case "run-observers":
		return s.runObservers(t, d)
	case "scan-notifications":
		return s.scanNotifications(t)
	case "dump":
		return s.dump(t)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

func (s *script) open(t *testing.T, d *datadriven.TestData) {
	var opt percolator.Options
	for _, a := range d.CmdArgs {
		var cols []string
		for _, v := range a.Vals {
			cols = append(cols, strings.Split(v, ",")...)
		}
		switch a.Key {
		case "observed":
			opt.Observed = cols
		case "weak":
			opt.Weak = cols
		default:
			d.Fatalf(t, "open: unknown argument %q", a.Key)
		}
	}
	s.db = s.openDB(s.t, opt)
}

// arg returns the command's i-th positional argument.
func (s *script) arg(t *testing.T, d *datadriven.TestData, i int) string {
	if i >= len(d.CmdArgs) || len(d.CmdArgs[i].Vals) > 0 {
		d.Fatalf(t, "%s: want argument %d", d.Cmd, i+1)
	}
	return d.CmdArgs[i].Key
}

// tx returns the transaction named by the first argument.
func (s *script) tx(t *testing.T, d *datadriven.TestData) *percolator.Tx {
	tx := s.txs[s.arg(t, d, 0)]
	if tx == nil {
		d.Fatalf(t, "no transaction %s", s.arg(t, d, 0))
	}
	return tx
}

// copier is an observer that copies col to out, and logs its run.
func (s *script) copier(name, col, out string) percolator.Observer {
	return percolator.Observer{Name: name, Column: col, Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		v, err := tx.Get(ctx, row, col)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.names[tx.StartTs()] = fmt.Sprintf("obs(%s,%s).start", name, row)
		s.runs = append(s.runs, fmt.Sprintf("%s: %s %s = %s → %s", name, row, col, value(v, nil), out))
		s.mu.Unlock()
		return tx.Set(row, out, v)
	}}
}

// runObservers runs a worker with the script's observers until it is idle
// and prints the runs, sorted.
func (s *script) runObservers(t *testing.T, d *datadriven.TestData) string {
	w, err := percolator.NewWorker(s.db, percolator.WorkerOptions{Scanners: 1, Workers: 1, IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond}, s.observers...)
	if err != nil {
		return "error: " + err.Error()
	}
	w.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = w.WaitIdle(ctx)
	w.Close()
	if err != nil {
		d.Fatalf(t, "WaitIdle: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := s.runs
	s.runs = nil
	sort.Strings(runs)
	if len(runs) == 0 {
		return "no runs"
	}
	return strings.Join(runs, "\n")
}

// scanNotifications prints the cells with a notification pending, one line
// each however many versions it has.
func (s *script) scanNotifications(t *testing.T) string {
	var lines []string
	for _, c := range s.cells(t) {
		if c.family == "notify" && (len(lines) == 0 || lines[len(lines)-1] != c.row+" "+c.col) {
			lines = append(lines, c.row+" "+c.col)
		}
	}
	if len(lines) == 0 {
		return "none"
	}
	return strings.Join(lines, "\n")
}

func (s *script) dump(t *testing.T) string {
	var lines []string
	for _, c := range s.cells(t) {
		lines = append(lines, fmt.Sprintf("%s %s %s@%s %s", c.row, c.col, c.family, s.name(c.ts), c.what))
	}
	if len(lines) == 0 {
		return "empty"
	}
	return strings.Join(lines, "\n")
}

type dumpCell struct {
	row, col, family string
	ts               uint64
	what             string
}

var (
	startField  = regexp.MustCompile(`start=(\d+)`)
	writerField = regexp.MustCompile(` writer=\S+ wall=\d+`)
)

// cells reads the table's raw cells with DB.Dump, writer IDs and wall
// times cut, start timestamps named.
func (s *script) cells(t *testing.T) []dumpCell {
	var b strings.Builder
	if err := s.db.Dump(context.Background(), &b, "", ""); err != nil {
		t.Fatal(err)
	}
	var cells []dumpCell
	for line := range strings.SplitSeq(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 4)
		fam, ts, ok := strings.Cut(f[2], "@")
		if len(f) != 4 || !ok {
			t.Fatalf("dump line %q", line)
		}
		n, err := strconv.ParseUint(ts, 10, 64)
		if err != nil {
			t.Fatalf("dump line %q: %v", line, err)
		}
		what := writerField.ReplaceAllString(f[3], "")
		what = startField.ReplaceAllStringFunc(what, func(m string) string {
			n, _ := strconv.ParseUint(m[len("start="):], 10, 64)
			return "start=" + s.name(n)
		})
		cells = append(cells, dumpCell{row: f[0], col: f[1], family: fam, ts: n, what: what})
	}
	return cells
}

// name returns the name of timestamp ts in the output.
func (s *script) name(ts uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.names[ts]; ok {
		return n
	}
	s.others++
	s.names[ts] = fmt.Sprintf("ts%d", s.others)
	return s.names[ts]
}

func value(v []byte, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case v == nil:
		return "<none>"
	}
	return strconv.Quote(string(v))
}

func errText(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ""
}
