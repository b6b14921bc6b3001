package crawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A recrawl spool is a directory of request files, one JSON
// RecrawlRequest each, that `crawler recrawl` writes when another process
// holds the table (Badger's directory lock keeps a second process out)
// and that the process owning the table applies: Options.RecrawlDir has
// Run poll it. Writers write a hidden temporary file and rename it, so a
// reader never sees half a request; names start with the time, so
// requests are applied in the order they were made. A request is deleted
// once applied; a malformed one is moved into the spool's "bad"
// subdirectory and logged; one that fails for another reason (the table)
// stays for the next poll. What became of an applied or malformed request
// is written, before the request goes, to the spool's "done"
// subdirectory under the request's name (a SpoolOutcome), for the
// writer to read (ReadSpoolOutcome); outcomes nobody read go after
// spoolDoneTTL.

// RecrawlRequest asks for pages to be made due now: the pages at URLs,
// and every page of Host (as RecrawlHost takes it).
type RecrawlRequest struct {
	URLs []string  `json:"urls,omitempty"`
	Host string    `json:"host,omitempty"`
	Time time.Time `json:"time"` // when it was asked
}

// Check reports what is wrong with r, if anything: it names no page, or a
// URL that is not an http(s) URL, or a host that is not one.
func (r RecrawlRequest) Check() error {
	if len(r.URLs) == 0 && r.Host == "" {
		return errors.New("crawl: recrawl request names no URL and no host")
	}
	for _, u := range r.URLs {
		n, err := webtable.Normalize(u)
		if err == nil {
			_, err = webtable.Row(n)
		}
		if err != nil {
			return fmt.Errorf("crawl: recrawl request: %q: %w", u, err)
		}
	}
	if r.Host != "" {
		if _, _, err := hostPrefix(r.Host); err != nil {
			return err
		}
	}
	return nil
}

// Apply makes r's pages due now (Recrawl and RecrawlHost) and returns how
// many moved. Unknown pages are an error wrapping ErrUnknownPage, after
// the known ones moved.
func (r RecrawlRequest) Apply(ctx context.Context, db *percolator.DB) (int, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	var unknown []error // only ErrUnknownPage: any other error returns
	moved := 0
	if len(r.URLs) > 0 {
		n, err := Recrawl(ctx, db, r.URLs, time.Time{})
		moved += n
		if err != nil && !errors.Is(err, ErrUnknownPage) {
			return moved, err
		}
		unknown = append(unknown, err)
	}
	if r.Host != "" {
		n, err := RecrawlHost(ctx, db, r.Host, time.Time{})
		moved += n
		if err != nil && !errors.Is(err, ErrUnknownPage) {
			return moved, err
		}
		unknown = append(unknown, err)
	}
	return moved, errors.Join(unknown...)
}

// spoolBad is the subdirectory of a spool that malformed requests are
// moved to; spoolDone the one outcomes are written to.
const (
	spoolBad  = "bad"
	spoolDone = "done"
)

// spoolDoneTTL is how long an outcome nobody read is kept.
const spoolDoneTTL = time.Hour

// SpoolOutcome is what the process holding the table did with a request
// file: how many pages it made due, and why it did not apply it in full
// (unknown pages, named; a malformed request).
type SpoolOutcome struct {
	PagesDue  int    `json:"pages_due"`
	Error     string `json:"error,omitempty"`
	Malformed bool   `json:"malformed,omitempty"`
}

// ReadSpoolOutcome reads and deletes the outcome of the request file at
// path (as QueueRecrawl returned it); fs.ErrNotExist while there is none.
func ReadSpoolOutcome(path string) (SpoolOutcome, error) {
	var o SpoolOutcome
	done := filepath.Join(filepath.Dir(path), spoolDone, filepath.Base(path))
	b, err := os.ReadFile(done)
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("crawl: recrawl outcome %s: %w", done, err)
	}
	os.Remove(done)
	return o, nil
}

// writeOutcome writes the outcome of request file name into dir's done
// subdirectory (a temporary file, then renamed).
func writeOutcome(dir, name string, o SpoolOutcome) error {
	done := filepath.Join(dir, spoolDone)
	if err := os.MkdirAll(done, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return writeRenamed(filepath.Join(done, name), append(b, '\n'), false)
}

// writeRenamed writes b to path through a hidden temporary file in its
// directory, renamed into place, so no reader sees half of it; durable
// makes the file and the rename survive a machine crash.
func writeRenamed(path string, b []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".spool-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		syncDir(dir)
	}
	return nil
}

// dropOldOutcomes deletes the outcomes in dir older than spoolDoneTTL.
func dropOldOutcomes(dir string) {
	done := filepath.Join(dir, spoolDone)
	ents, err := os.ReadDir(done)
	if err != nil {
		return
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > spoolDoneTTL {
			os.Remove(filepath.Join(done, e.Name()))
		}
	}
}

// QueueRecrawl writes r into the spool dir (created if needed) for the
// process that holds the table, and returns the request file's path.
func QueueRecrawl(dir string, r RecrawlRequest) (string, error) {
	if err := r.Check(); err != nil {
		return "", err
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var id [4]byte
	rand.Read(id[:])
	name := filepath.Join(dir, r.Time.UTC().Format("20060102T150405.000000000Z")+"-"+hex.EncodeToString(id[:])+".json")
	if err := writeRenamed(name, append(b, '\n'), true); err != nil {
		return "", fmt.Errorf("crawl: queue recrawl request: %w", err)
	}
	return name, nil
}

// syncDir makes a rename in dir durable, where the platform allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// SpoolResult is what ApplySpool did with one request file.
type SpoolResult struct {
	File  string // the request file's path
	Moved int    // pages made due
	Err   error  // why it was not applied in full (see ApplySpool)
	Bad   bool   // malformed: moved into the spool's bad directory
}

// ApplySpool applies and deletes the requests in the spool dir, oldest
// first, and logs each outcome on log. A malformed request is moved into
// dir/bad and logged as a warning; unknown pages are logged, and the
// request is deleted once its known pages are due; a request the table
// failed on stays for the next call. A missing dir holds no request.
func ApplySpool(ctx context.Context, db *percolator.DB, dir string, log *slog.Logger) ([]SpoolResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	names, err := spoolFiles(dir)
	if err != nil {
		return nil, err
	}
	dropOldOutcomes(dir)
	var out []SpoolResult
	for _, name := range names {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		res := SpoolResult{File: filepath.Join(dir, name)}
		req, err := readRequest(res.File)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another process took it
		}
		if err == nil {
			res.Moved, err = req.Apply(ctx, db)
		}
		res.Err = err
		switch {
		case err == nil || errors.Is(err, ErrUnknownPage) || errors.Is(err, errMalformed):
			o := SpoolOutcome{PagesDue: res.Moved, Malformed: errors.Is(err, errMalformed)}
			if err != nil {
				o.Error = err.Error()
			}
			if werr := writeOutcome(dir, name, o); werr != nil {
				log.Warn("recrawl outcome not written", "file", res.File, "err", werr)
			}
		}
		switch {
		case err == nil || errors.Is(err, ErrUnknownPage):
			if rerr := os.Remove(res.File); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return out, rerr
			}
			if err != nil {
				log.Warn("recrawl request applied in part", "file", res.File, "pages_due", res.Moved, "err", err)
			} else {
				log.Info("recrawl request applied", "file", res.File, "pages_due", res.Moved)
			}
		case errors.Is(err, errMalformed):
			res.Bad = true
			if merr := moveAside(dir, name); merr != nil {
				return out, merr
			}
			log.Warn("recrawl request malformed; moved aside", "file", res.File, "to", filepath.Join(dir, spoolBad), "err", err)
		default:
			log.Warn("recrawl request not applied; retried later", "file", res.File, "err", err)
		}
		out = append(out, res)
	}
	return out, nil
}

// errMalformed marks a request file that cannot be applied as it is.
var errMalformed = errors.New("malformed recrawl request")

// readRequest reads and checks a request file.
func readRequest(path string) (RecrawlRequest, error) {
	var r RecrawlRequest
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if dec.More() {
		return r, fmt.Errorf("%w: more than one JSON value", errMalformed)
	}
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return r, nil
}

// spoolFiles lists the request files of dir in name (time) order:
// visible *.json files. Temporary files start with a dot.
func spoolFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// moveAside moves dir/name into dir/bad, keeping a file already there.
func moveAside(dir, name string) error {
	bad := filepath.Join(dir, spoolBad)
	if err := os.MkdirAll(bad, 0o755); err != nil {
		return err
	}
	to := filepath.Join(bad, name)
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = filepath.Join(bad, fmt.Sprintf("%s.%d", name, i))
	}
	return os.Rename(filepath.Join(dir, name), to)
}

// spoolInterval is how often a running crawler looks for recrawl
// requests.
const spoolInterval = time.Second

// applySpool applies the requests in Options.RecrawlDir, logging a
// failure to read it.
func (c *Crawler) applySpool(ctx context.Context) {
	if _, err := ApplySpool(ctx, c.db, c.opt.RecrawlDir, c.log); err != nil && ctx.Err() == nil {
		c.log.Warn("recrawl spool not read", "dir", c.opt.RecrawlDir, "err", err)
	}
}

// pollSpool applies the spool every interval until ctx ends.
func (c *Crawler) pollSpool(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.applySpool(ctx)
	}
}
