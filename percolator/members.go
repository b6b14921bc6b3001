package percolator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Partitioned scanning. On a table other processes reach (a Store that is
// not an ExclusiveStore: Cloud Bigtable), every worker running observers
// registers as a member in the row memberRow(id) with a wall-clock beat,
// rewritten every LockTTL/4 and deleted by Close. Each worker reads the
// member rows every memberRefresh (LockTTL/4 if shorter: 2.5 s at the
// default LockTTL), and its passes dispatch only the rows it owns. Rows
// are owned by bucket (Bucket: a hash of the row, one of Buckets): a
// bucket belongs, for each observer, to the live member running that
// observer whose rendezvous (highest-random-weight) hash with the bucket
// is highest. So without a lock service the workers do not all compete
// for every row, and a join or a death moves only that member's share. On
// a BucketStore (Bigtable's notify index is kept by bucket) a pass reads
// only the buckets its worker owns, so its cost is the worker's share of
// the notifications; on another store it reads them all and keeps its
// own.
//
// A member is live while its beat is younger than its LockTTL plus
// Options.ClockSkew (the members' wall clocks may disagree by that much);
// a dead one's rows go to the others once its beat is that stale, and
// scanners asleep then are woken: a notification waits at most LockTTL +
// ClockSkew + memberRefresh + one pass for a dead owner. A larger skew
// would only delay that; a smaller one lets a live member whose clock lags
// look dead, and its rows then run twice. While the members disagree (a
// join, a death, clocks that differ), two workers may own a row for a
// moment and both run it: harmless, as their transactions conflict and
// the observer's ack column stops the loser's retry.
//
// On an ExclusiveStore there is one process: nothing is registered, and
// the scanners run every row as before.

// memberPrefix begins the rows of the scanning members.
const memberPrefix = "\x00meta/scanner/"

func memberRow(id string) string { return memberPrefix + id }

// Columns of a member row, in famMeta.
const (
	memberBeat      = "beat"      // wall time of the last beat, Unix ms
	memberTTL       = "ttl"       // the member's LockTTL in ms: how stale its beat may get
	memberObservers = "observers" // JSON list of the names of the observers it runs
	memberWriter    = "writer"    // its DB's id, for Dump
)

// memberRefresh is how often a worker reads the member rows (or
// LockTTL/4 if that is shorter): a read of every member row, so with many
// workers on a table it is kept to every few seconds. A join or a death
// is seen that much later; meanwhile two workers may run a row, which is
// harmless (see above).
const memberRefresh = 3 * time.Second

// memberReap is how stale a member's beat gets before a reader deletes its
// row: the row of a process that died without Close. A member back from
// further away than that simply registers again with its next beat.
const memberReap = 10 * time.Minute

// partition is a worker's membership: its registration and its view of
// the other members.
type partition struct {
	st        Store
	id        string   // random member id
	writer    string   // the DB's id
	observers []string // names of the worker's observers, sorted
	ttl       time.Duration
	skew      time.Duration // how much staler than its ttl a live member's beat may look
	every     time.Duration // how often the member rows are read

	view   atomic.Pointer[members] // the latest view, never nil
	readMu sync.Mutex              // serializes reads of the member rows

	sleepMu  sync.Mutex                       // guards sleepers
	sleepers map[*context.CancelFunc]struct{} // idle scanners' waits, cut short by a change

	// keep leaves the member row in place at Close, as a crash would (a
	// test hook).
	keep atomic.Bool
}

// members is a view of the live members, read at read.
type members struct {
	read   time.Time
	ids    []string                // live member ids, sorted; this worker's among them
	groups map[string]*memberGroup // by observer name: the live members running it
	ranges []KeyRange              // the BucketKey ranges of the buckets this worker owns for any observer
}

// memberGroup is the members running one observer: the rendezvous hashes
// of their ids, in id order, which one is this worker, and the buckets it
// owns.
type memberGroup struct {
	hashes []uint64
	self   int
	mine   [Buckets]bool
}

func newPartition(db *DB, obs map[string]*observerState) *partition {
	var id [8]byte
	rand.Read(id[:])
	p := &partition{
		st:       db.st,
		id:       hex.EncodeToString(id[:]),
		writer:   db.id,
		ttl:      db.opt.LockTTL,
		skew:     db.opt.ClockSkew,
		every:    max(min(memberRefresh, db.opt.LockTTL/4), time.Millisecond),
		sleepers: make(map[*context.CancelFunc]struct{}),
	}
	for _, o := range obs {
		p.observers = append(p.observers, o.Name)
	}
	slices.Sort(p.observers)
	// Until the first read, this worker owns every row.
	p.view.Store(p.build(time.Now(), nil))
	return p
}

// beat writes the member row with a fresh beat.
func (p *partition) beat(ctx context.Context) error {
	names, err := json.Marshal(p.observers)
	if err != nil {
		return err
	}
	err = p.st.MutateRows(ctx, []RowMutation{{Row: memberRow(p.id), Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: memberBeat, Ts: 1, Value: encodeInt64(time.Now().UnixMilli())},
		{Op: SetCell, Family: famMeta, Column: memberTTL, Ts: 1, Value: encodeInt64(p.ttl.Milliseconds())},
		{Op: SetCell, Family: famMeta, Column: memberObservers, Ts: 1, Value: names},
		{Op: SetCell, Family: famMeta, Column: memberWriter, Ts: 1, Value: []byte(p.writer)},
	}}})
	if err != nil {
		return fmt.Errorf("percolator: write scanner beat: %w", err)
	}
	return nil
}

// leave deletes the member row, so the others take its rows at once.
func (p *partition) leave() {
	if p.keep.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.st.MutateRows(ctx, []RowMutation{{Row: memberRow(p.id), Mutations: deleteMember()}})
}

func deleteMember() []Mutation {
	var del []Mutation
	for _, c := range []string{memberBeat, memberTTL, memberObservers, memberWriter} {
		del = append(del, Mutation{Op: DeleteCell, Family: famMeta, Column: c, Ts: 1})
	}
	return del
}

// a member as read from its row.
type member struct {
	id        string
	observers []string
}

// refresh reads the member rows and publishes the new view. Scanners
// asleep are woken if the live members changed, as rows may have moved to
// this worker. Rows of members dead for memberReap are deleted.
func (p *partition) refresh(ctx context.Context) (*members, error) {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	now := time.Now()
	var live []member
	var reap []RowMutation
	err := p.st.ReadRows(ctx, memberPrefix, memberPrefix[:len(memberPrefix)-1]+"0", func(row string, cells []Cell) bool {
		m := member{id: row[len(memberPrefix):]}
		var beat, ttl int64
		for _, c := range cells {
			switch c.Column {
			case memberBeat:
				beat = decodeInt64(c.Value)
			case memberTTL:
				ttl = decodeInt64(c.Value)
			case memberObservers:
				json.Unmarshal(c.Value, &m.observers) // a corrupt list runs nothing here
			}
		}
		if ttl <= 0 {
			ttl = p.ttl.Milliseconds()
		}
		switch age := now.Sub(time.UnixMilli(beat)); {
		case m.id == p.id:
			// Always live in its own view, below.
		case age < time.Duration(ttl)*time.Millisecond+p.skew:
			live = append(live, m)
		case age > memberReap:
			reap = append(reap, RowMutation{Row: row, Mutations: deleteMember()})
		}
		return true
	}, Filter{Family: famMeta, Latest: true})
	if err != nil {
		return nil, fmt.Errorf("percolator: read scanner members: %w", err)
	}
	if len(reap) > 0 {
		p.st.MutateRows(ctx, reap) // best effort: the next reader tries again
	}
	v := p.build(now, live)
	old := p.view.Swap(v)
	if !slices.Equal(old.ids, v.ids) {
		p.wake()
	}
	return v, nil
}

// current returns the view for a pass to begin with. The worker's beats
// goroutine reads the members every p.every; a view twice that old means
// that its last read failed or is slow, and the pass reads them itself.
func (p *partition) current(ctx context.Context) *members {
	v := p.view.Load()
	if time.Since(v.read) < 2*p.every {
		return v
	}
	p.readMu.Lock()
	fresh := time.Since(p.view.Load().read) < 2*p.every // another scanner just read it
	p.readMu.Unlock()
	if !fresh {
		if _, err := p.refresh(ctx); err != nil {
			return v // the last view is the best guess
		}
	}
	return p.view.Load()
}

// build makes the view of the live members others and this worker.
func (p *partition) build(read time.Time, others []member) *members {
	all := append(others, member{id: p.id, observers: p.observers})
	slices.SortFunc(all, func(a, b member) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	v := &members{read: read, groups: make(map[string]*memberGroup)}
	hashes := make([]uint64, len(all))
	for i, m := range all {
		v.ids = append(v.ids, m.id)
		hashes[i] = mix64(fnv64(m.id))
	}
	// Observers with the same members share a group, so a row's notes
	// for them are judged once.
	byKey := make(map[string]*memberGroup)
	for _, name := range p.observers {
		g := &memberGroup{}
		key := make([]byte, 0, len(all))
		for i, m := range all {
			if m.id == p.id {
				g.self = len(g.hashes)
			} else if !slices.Contains(m.observers, name) {
				continue
			}
			g.hashes = append(g.hashes, hashes[i])
			key = append(key, byte(i), byte(i>>8), byte(i>>16))
		}
		if same, ok := byKey[string(key)]; ok {
			g = same
		} else {
			byKey[string(key)] = g
			for b := range Buckets {
				g.mine[b] = g.owns(uint64(b))
			}
		}
		v.groups[name] = g
	}
	var mine [Buckets]bool
	for _, g := range byKey {
		for b, ok := range g.mine {
			mine[b] = mine[b] || ok
		}
	}
	v.ranges = bucketRanges(mine)
	return v
}

// bucketRanges returns the BucketKey ranges of the buckets set in mine,
// adjacent buckets merged.
func bucketRanges(mine [Buckets]bool) []KeyRange {
	var out []KeyRange
	for b := 0; b < Buckets; b++ {
		if !mine[b] {
			continue
		}
		e := b + 1
		for e < Buckets && mine[e] {
			e++
		}
		out = append(out, KeyRange{BucketStart(b), BucketStart(e)})
		b = e
	}
	return out
}

// clip returns the parts of ranges (sorted, disjoint) within [from, to)
// (an empty to has no bound).
func clip(ranges []KeyRange, from, to string) []KeyRange {
	var out []KeyRange
	for _, r := range ranges {
		start, end := max(r.Start, from), r.End
		if to != "" && (end == "" || to < end) {
			end = to
		}
		if end == "" || start < end {
			out = append(out, KeyRange{start, end})
		}
	}
	return out
}

// single reports whether this worker is the only live member.
func (v *members) single() bool { return len(v.ids) == 1 }

// owned filters a row's notify cells down to those of observers whose
// notifications in the row this worker owns, in place.
func (v *members) owned(row string, cells []Cell, obs map[string]*observerState) []Cell {
	b := Bucket(row)
	out := cells[:0]
	var last *memberGroup
	own := false
	for _, c := range cells {
		o := obs[c.Column]
		if o == nil {
			continue
		}
		if g := v.groups[o.Name]; g != last {
			last, own = g, g.mine[b]
		}
		if own {
			out = append(out, c)
		}
	}
	return out
}

// owns reports whether this worker has the highest rendezvous weight for
// bucket b.
func (g *memberGroup) owns(b uint64) bool {
	h := mix64(b + 1)
	best, top := 0, uint64(0)
	for i, m := range g.hashes {
		if w := mix64(h ^ m); i == 0 || w > top {
			best, top = i, w
		}
	}
	return best == g.self
}

// fnv64 is FNV-1a (hash/fnv's, without its allocation).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is SplitMix64's finalizer: every input bit moves every output bit,
// which FNV alone does not do for the high bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// wake cuts the waits of idle scanners short.
func (p *partition) wake() {
	p.sleepMu.Lock()
	for cancel := range p.sleepers {
		(*cancel)()
	}
	p.sleepMu.Unlock()
}

// sleep is wait(ctx, d), cut short (with an error) when the live members
// change.
func (p *partition) sleep(ctx context.Context, d time.Duration, wait func(context.Context, time.Duration) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.sleepMu.Lock()
	p.sleepers[&cancel] = struct{}{}
	p.sleepMu.Unlock()
	err := wait(ctx, d)
	p.sleepMu.Lock()
	delete(p.sleepers, &cancel)
	p.sleepMu.Unlock()
	return err
}

// beats keeps the worker's member row fresh and its view of the members
// current, until the worker closes.
func (w *Worker) beats() {
	defer w.wg.Done()
	p := w.part
	t := time.NewTicker(p.every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(last) >= w.db.opt.LockTTL/4-p.every/2 {
			if err := p.beat(w.ctx); err != nil {
				if w.ctx.Err() == nil {
					w.opt.Logger.Warn("scanner beat failed", "err", err)
				}
			} else {
				last = time.Now()
			}
		}
		if _, err := p.refresh(w.ctx); err != nil && w.ctx.Err() == nil {
			w.opt.Logger.Warn("reading scanner members failed", "err", err)
		}
	}
}

// join registers the worker and reads the members, before its scanners
// start, so that its first passes already share the table.
func (w *Worker) join() {
	if err := w.part.beat(w.ctx); err != nil {
		w.opt.Logger.Warn("scanner beat failed", "err", err)
	}
	if _, err := w.part.refresh(w.ctx); err != nil {
		w.opt.Logger.Warn("reading scanner members failed", "err", err)
	}
	w.wg.Add(1)
	go w.beats()
}

// Members returns the number of live workers that share the table's
// notifications with w, w included, as w last read them: 1 on an
// ExclusiveStore, where w runs every row.
func (w *Worker) Members() int {
	if w.part == nil {
		return 1
	}
	return len(w.part.view.Load().ids)
}
