package serving

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/caffeine-go/caffeine/internal/diskspace"
	"github.com/caffeine-go/caffeine/webtable"
)

// Options configure an Index.
type Options struct {
	// OnApply, if set, is called after every applied batch with what it
	// changed (in the applying goroutine; keep it quick).
	OnApply func([]Applied)
	// Logger receives failures. Nil discards them.
	Logger *slog.Logger
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
	// MaxSearches is how many searches run at once; half of them (at
	// least one) may be costly (regexps, wildcards, fuzzy terms). Others
	// wait for their context's deadline at most. 0 means one per core.
	MaxSearches int
	// DiskReserve is the least free space the index keeps in its
	// directory's file system: OpenIndex and Apply fail with ErrDiskFull
	// while there is less (see space.go). Zero means DefaultIndexReserve;
	// a negative value turns the check off.
	DiskReserve int64
}

// Applied is one document change the index applied.
type Applied struct {
	URL       string
	Row       string
	Op        webtable.Op
	Version   uint64 // the export's version (its transaction's start timestamp)
	FetchedAt time.Time
	IndexedAt time.Time // when the batch became searchable
	// NewContent is true for an upsert whose document was fetched after the
	// one the index had (a recrawl that changed the page, or a new page),
	// false for updates of rank, anchors or duplicates only. Only these
	// count in the crawl→searchable latency.
	NewContent bool
}

// Index is the serving index: a Bleve (scorch) index of the canonical
// documents. It applies what it is given; the Feeder decides what that is
// (exports in version order, stale ones skipped), keeping the version
// applied for every row in the table.
type Index struct {
	bi     bleve.Index
	dir    string
	opt    Options
	guard  *diskspace.Guard      // of free space; nil without a reserve
	broken atomic.Pointer[error] // set by a failed batch (breaks)

	mu      sync.Mutex // serializes Apply
	latency *window
	limit   *limiter
	ranks   *ranks        // the factors of ranked searches, by segment
	lengths *fieldLengths // the fields' mean lengths, for BM25
	langs   *indexLangs   // the analyzers of the languages held (langs.go)
	// exhaustive turns the fast path of ranked searches off (topk.go):
	// benchmarks compare the two. Set before searching.
	exhaustive bool
}

// Update is one export to apply, with the fetch time of the document the
// index has for the row (zero if none), which tells a new page or content
// from a change of rank, anchors or duplicates.
type Update struct {
	webtable.Export
	Prev time.Time
}

// OpenIndex opens the index in dir, creating it if dir does not exist.
func OpenIndex(dir string, opt Options) (*Index, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	guard, err := startGuard(dir, opt)
	if err != nil {
		return nil, err
	}
	bi, err := bleve.OpenUsing(dir, indexConfig())
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		bi, err = bleve.NewUsing(dir, indexMapping(), scorch.Name, scorch.Name, indexConfig())
	}
	if err != nil {
		if guard != nil {
			guard.Close()
		}
		return nil, fmt.Errorf("serving: open index %s: %w", dir, err)
	}
	ix := &Index{bi: bi, dir: dir, opt: opt, guard: guard, latency: newWindow(10_000), limit: newLimiter(opt.MaxSearches), ranks: newRanks(), lengths: newFieldLengths()}
	kept, err := bi.GetInternal(fieldLengthsKey)
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("serving: open index %s: %w", dir, err)
	}
	ix.lengths.load(kept)
	ix.langs = newIndexLangs(bi.Mapping())
	if err := ix.loadLangs(); err != nil {
		ix.Close()
		return nil, fmt.Errorf("serving: open index %s: %w", dir, err)
	}
	if ix.langs.m == nil {
		opt.Logger.Warn("serving: the index analyses every page as English; rebuild it (search -rebuild) to analyse each page in its language", "dir", dir)
	}
	return ix, nil
}

// indexConfig is the scorch configuration of an index, at creation and
// at every open. Merge planning: a segment below FloorSegmentSize
// documents counts as that size when segments are tiered. Bleve's default
// (2,000) puts every segment of a bulk load's small batches in the lowest
// tier, so each merge rewrites the biggest of them again with a few new
// ones; at 50, the Debian handbook's 3,302 documents written twice in
// batches of 16 take half the CPU (52 s → 27 s on the 2-core machine), for a
// few more small segments to search.
func indexConfig() map[string]any {
	return map[string]any{"scorchMergePlanOptions": map[string]any{"FloorSegmentSize": 50}}
}

// Close closes the index, keeping the field lengths measured since the
// last batch.
func (ix *Index) Close() error {
	var err error
	if ix.Health() == nil {
		err = ix.bi.SetInternal(fieldLengthsKey, ix.lengths.encode())
	}
	if ix.guard != nil {
		ix.guard.Close()
	}
	return errors.Join(err, ix.bi.Close())
}

// Dir is the index's directory.
func (ix *Index) Dir() string { return ix.dir }

// Count returns the number of documents in the index.
func (ix *Index) Count() (int, error) {
	n, err := ix.bi.DocCount()
	return int(n), err
}

// Latency returns the crawl→searchable latencies of the last applied
// new-content documents.
func (ix *Index) Latency() Latency { return ix.latency.summary() }

// Version returns the export version of row's document, and whether the
// index has one.
func (ix *Index) Version(row string) (uint64, bool, error) {
	d, err := ix.bi.Document(row)
	if err != nil || d == nil {
		return 0, false, err
	}
	var v uint64
	d.VisitFields(func(f index.Field) {
		if nf, ok := f.(index.NumericField); ok && f.Name() == fVersion {
			if x, err := nf.Number(); err == nil {
				v = uint64(x)
			}
		}
	})
	return v, true, nil
}

// Apply applies updates as one batch (for a row given twice, the newer
// version) and returns what changed. It applies nothing and returns an
// error wrapping ErrDiskFull or ErrIndexBroken while Health does.
func (ix *Index) Apply(updates []Update) ([]Applied, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.Health(); err != nil {
		return nil, err
	}

	newest := make(map[string]Update, len(updates))
	for _, u := range updates {
		if u.Row == "" {
			continue
		}
		if cur, ok := newest[u.Row]; !ok || u.Version > cur.Version {
			newest[u.Row] = u
		}
	}
	now := ix.opt.Now().UTC()
	b := ix.bi.NewBatch()
	// The field lengths measured up to the last batch go with this one.
	b.SetInternal(fieldLengthsKey, ix.lengths.encode())
	var docs []*bdoc.Document // analysed by the batch: their lengths
	size := 0                 // of the documents, roughly
	applied := make([]Applied, 0, len(newest))
	for _, row := range sortedKeys(newest) {
		u := newest[row]
		a := Applied{URL: u.URL, Row: row, Op: u.Op, Version: u.Version, IndexedAt: now}
		switch {
		case u.Op == webtable.OpUpsert && u.Doc != nil:
			a.FetchedAt = u.Doc.FetchedAt
			a.NewContent = u.Doc.FetchedAt.After(u.Prev)
			size += docSize(u.Doc)
			d := bdoc.NewDocument(row)
			if err := ix.bi.Mapping().MapDocument(d, fields(u.Doc, u.Version, now)); err != nil {
				return nil, fmt.Errorf("serving: index %s: %w", u.URL, err)
			}
			if err := b.IndexAdvanced(d); err != nil {
				return nil, fmt.Errorf("serving: index %s: %w", u.URL, err)
			}
			docs = append(docs, d)
		case u.Op == webtable.OpDelete:
			b.Delete(row)
		default:
			ix.opt.Logger.Warn("serving: bad export; skipped", "op", u.Op, "row", row)
			continue
		}
		applied = append(applied, a)
	}
	if len(applied) == 0 {
		return nil, nil
	}
	if ix.guard != nil {
		// The guard looks at the disk every so many bytes, in the
		// background; a batch looks for itself, so that a burst of
		// batches never outruns the look into a full disk.
		if err := ix.guard.Need(int64(size)); err != nil {
			return nil, err
		}
	}
	if err := ix.batch(b, size); err != nil {
		return nil, err
	}
	ix.lengths.add(docs)
	for _, u := range newest {
		if u.Op == webtable.OpUpsert && u.Doc != nil {
			ix.langs.add(primaryLang(u.Doc.Lang))
		}
	}
	// Searchable from now: Batch returns once searches see the batch.
	done := ix.opt.Now().UTC()
	for i := range applied {
		applied[i].IndexedAt = done
	}
	for _, a := range applied {
		if a.NewContent && !a.FetchedAt.IsZero() {
			ix.latency.add(a.IndexedAt.Sub(a.FetchedAt).Seconds())
		}
	}
	if ix.opt.OnApply != nil && len(applied) > 0 {
		ix.opt.OnApply(applied)
	}
	return applied, nil
}

// loadLangs records the languages of the indexed pages (the lang
// field's terms).
func (ix *Index) loadLangs() error {
	d, err := ix.bi.FieldDict(fLang)
	if err != nil {
		return err
	}
	defer d.Close()
	var langs []string
	for e, err := d.Next(); e != nil || err != nil; e, err = d.Next() {
		if err != nil {
			return err
		}
		langs = append(langs, e.Term)
	}
	ix.langs.add(langs...)
	return nil
}

// docSize returns about how many bytes d takes in a segment.
func docSize(d *webtable.Doc) int {
	n := 512 + len(d.URL) + len(d.Title) + len(d.Text)
	for _, a := range d.Anchors {
		n += len(a.Text)
	}
	return n
}

// document is what Bleve indexes for a Doc.
type document struct {
	URL         string    `json:"url"`
	Host        string    `json:"host"`
	Lang        string    `json:"lang,omitempty"`
	FileType    string    `json:"filetype"`
	Title       string    `json:"title"`
	TitleShown  string    `json:"title_shown,omitempty"`
	Text        string    `json:"text"`
	Anchors     []string  `json:"anchors"`
	TopAnchors  []string  `json:"top_anchors"`
	Duplicates  []string  `json:"duplicates"`
	Similar     []string  `json:"similar,omitempty"`
	Sections    string    `json:"sections,omitempty"`
	Headings    []string  `json:"headings,omitempty"`
	PageRank    float64   `json:"pagerank"`
	LinkDensity float64   `json:"link_density"`
	Mismatch    float64   `json:"lang_mismatch"`
	ClusterSize float64   `json:"cluster_size"`
	Inbound     float64   `json:"inbound"`
	InboundHost float64   `json:"inbound_host"`
	Version     float64   `json:"version"`
	FetchedAt   time.Time `json:"fetched_at"`
	IndexedAt   time.Time `json:"indexed_at"`
}

// topAnchors is how many distinct anchor texts a result shows.
const topAnchors = 5

func fields(d *webtable.Doc, version uint64, now time.Time) document {
	doc := document{
		URL: d.URL, Host: d.Host, Lang: primaryLang(d.Lang), FileType: fileType(d.Kind), Title: d.Title, Text: d.Text,
		Duplicates: d.Duplicates, Similar: d.Similar, PageRank: d.PageRank, ClusterSize: float64(d.ClusterSize),
		Version: float64(version), FetchedAt: d.FetchedAt, IndexedAt: now, LinkDensity: d.LinkDensity,
		Sections: webtable.EncodeSections(d.Sections), Headings: headings(d.Sections),
	}
	if d.LangMismatch {
		doc.Mismatch = 1
	}
	if d.TitleCore != "" && d.TitleCore != d.Title {
		// The site's affix (" — Python 3.11 documentation") is on every
		// page of the site: it is shown, not searched.
		doc.Title, doc.TitleShown = d.TitleCore, d.Title
	}
	count := make(map[string]int)
	for _, a := range d.Anchors {
		if a.Text == "" {
			continue
		}
		doc.Anchors = append(doc.Anchors, a.Text)
		count[a.Text]++
	}
	doc.Inbound = float64(d.CrossHostAnchors())
	doc.InboundHost = float64(d.AnchorCount()) - doc.Inbound
	texts := sortedKeys(count)
	slices.SortStableFunc(texts, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	doc.TopAnchors = texts[:min(len(texts), topAnchors)]
	return doc
}

// headings returns the headings of secs, the headings field: each its
// own value, so that a match can tell which heading holds a term.
func headings(secs []webtable.Section) []string {
	var out []string
	for _, s := range secs {
		if s.Heading != "" {
			out = append(out, s.Heading)
		}
	}
	return out
}

// primaryLang returns a language tag's primary subtag ("en" of "en-us"),
// what the lang field holds: lang:en finds every English page, whatever
// its region.
func primaryLang(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BuildIndex builds a new index in dir (which must not exist) holding
// exactly docs, the export set of a batch recomputation (keyed by
// canonical row), all at version 1. The batch mode of the freshness
// experiment swaps such an index in after each full run.
func BuildIndex(dir string, docs map[string]*webtable.Doc, opt Options) (*Index, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("serving: build index: %s exists", dir)
	}
	ix, err := OpenIndex(dir, opt)
	if err != nil {
		return nil, err
	}
	const batch = 1000
	var es []Update
	for _, row := range sortedKeys(docs) {
		es = append(es, Update{Export: webtable.Export{Op: webtable.OpUpsert, Version: 1, Row: row, URL: docs[row].URL, Doc: docs[row]}})
		if len(es) == batch {
			if _, err := ix.Apply(es); err != nil {
				ix.Close()
				return nil, err
			}
			es = es[:0]
		}
	}
	if _, err := ix.Apply(es); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// fileType is the filetype field of a document of kind k: "html" for the
// HTML pages, whose kind is "".
func fileType(k string) string {
	if k == "" {
		return "html"
	}
	return k
}

// Internal returns the value the index keeps under key beside its
// documents (nil if none): what a feeder records of who fed it.
func (ix *Index) Internal(key string) ([]byte, error) { return ix.bi.GetInternal([]byte(key)) }

// SetInternal keeps v under key beside the index's documents.
func (ix *Index) SetInternal(key string, v []byte) error { return ix.bi.SetInternal([]byte(key), v) }
