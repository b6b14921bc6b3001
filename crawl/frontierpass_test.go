package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/webtable"
)

func TestFrontierPassResumes(t *testing.T) {
	var p frontierPass
	t0 := time.Now()
	if !p.whole() {
		t.Fatal("the first pass is not whole")
	}
	p.scanned(t0)
	if got := p.next(t0, false); got != webtable.DuePrefix || !p.whole() {
		t.Fatalf("second pass begins at %q, want the start (no whole pass yet)", got)
	}
	// A pass that left rows for later: the next begins at the first.
	p.scanned(t0.Add(time.Second))
	p.skipped("!due/0000000000005/b")
	p.skipped("!due/0000000000009/c")
	if got := p.next(t0.Add(2*time.Second), false); got != "!due/0000000000005/b" || p.whole() {
		t.Fatalf("after a skip: begins at %q (whole %v), want the first skipped row", got, p.whole())
	}
	// One that left none: a second before where its last scan reached.
	at := t0.Add(3 * time.Second)
	p.scanned(at)
	if got, want := p.next(t0.Add(4*time.Second), false), webtable.DueFrom(at.Add(-time.Second).UnixMilli()); got != want {
		t.Fatalf("after a pass that left nothing: begins at %q, want %q", got, want)
	}
	// Nothing due, nothing in flight: whole, so Once ends on a whole pass.
	p.scanned(t0.Add(5 * time.Second))
	if got := p.next(t0.Add(5*time.Second), true); got != webtable.DuePrefix || !p.whole() {
		t.Fatalf("after an idle pass: begins at %q, want the start", got)
	}
	// And at least every wholeEvery.
	p.scanned(t0.Add(6 * time.Second))
	p.skipped("!due/0000000000005/b")
	if got := p.next(t0.Add(5*time.Second+wholeEvery), false); got != webtable.DuePrefix {
		t.Fatalf("%v after the last whole pass: begins at %q, want the start", wholeEvery, got)
	}
}

// An idle crawler that is not Once makes one whole pass when it goes
// idle, then resumes until wholeEvery, and makes a whole pass again once
// it has gone busy and idle again; a Once crawler's idle passes are all
// followed by whole ones.
func TestFrontierPassIdle(t *testing.T) {
	t0 := time.Now()
	var p frontierPass
	p.scanned(t0)
	p.next(t0, false) // the first whole pass begins
	// Busy, partial passes.
	p.scanned(t0.Add(time.Second))
	if p.next(t0.Add(time.Second), false); p.whole() {
		t.Fatal("a busy pass right after a whole one is whole")
	}
	// The partial pass found nothing: the next is whole.
	p.scanned(t0.Add(2 * time.Second))
	if got := p.next(t0.Add(2*time.Second), true); got != webtable.DuePrefix {
		t.Fatalf("going idle: begins at %q, want the start", got)
	}
	// The whole pass found nothing either: idle passes resume now.
	for i := 3; i < 8; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		p.scanned(at)
		if got, want := p.next(at, true), webtable.DueFrom(at.Add(-time.Second).UnixMilli()); got != want {
			t.Fatalf("idle at %ds: begins at %q, want %q", i, got, want)
		}
	}
	// Until wholeEvery since the last whole pass.
	at := t0.Add(2*time.Second + wholeEvery)
	p.scanned(at)
	if got := p.next(at, true); got != webtable.DuePrefix {
		t.Fatalf("idle %v after the last whole pass: begins at %q, want the start", wholeEvery, got)
	}
	// A pass finds work, then none: whole again.
	at = at.Add(time.Second)
	p.scanned(at)
	if p.next(at, false); p.whole() {
		t.Fatal("busy: whole pass")
	}
	at = at.Add(time.Second)
	p.scanned(at)
	if got := p.next(at, true); got != webtable.DuePrefix {
		t.Fatalf("idle again: begins at %q, want the start", got)
	}

	// Once: every idle pass is followed by a whole one.
	q := frontierPass{once: true}
	for i := range 4 {
		at := t0.Add(time.Duration(i) * time.Second)
		q.scanned(at)
		if got := q.next(at, true); got != webtable.DuePrefix {
			t.Fatalf("once, idle at %ds: begins at %q, want the start", i, got)
		}
	}
}

// A page made due in the past while a crawl runs sits before where the
// dispatcher's passes begin; a Once crawl still fetches it before it ends.
func TestDueBehindThePass(t *testing.T) {
	s := newSite(t)
	var links []string
	for i := range 30 {
		path := fmt.Sprintf("/p%d", i)
		links = append(links, fmt.Sprintf(`<a href="%s">%d</a>`, path, i))
		s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(20 * time.Millisecond)
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("page"))
		})
	}
	s.page("/", strings.Join(links, " "))
	tb := openTable(t, "")
	opt := slowOptions(s.URL + "/")
	opt.Parallel = 2
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s.count("/p8") == 0 {
			time.Sleep(time.Millisecond)
		}
		for {
			n, err := Recrawl(t.Context(), tb.db, []string{s.URL + "/"}, time.UnixMilli(1000))
			if err != nil {
				t.Errorf("Recrawl: %v", err)
				return
			}
			if n == 1 {
				return
			}
			time.Sleep(time.Millisecond) // leased: its load is under way
		}
	}()
	tb.crawl(opt)
	<-done
	if n := s.count("/"); n != 2 {
		t.Errorf("/ fetched %d times, want 2: the page made due behind the pass was left", n)
	}
	if n := s.count("/p29"); n != 1 {
		t.Errorf("/p29 fetched %d times, want 1", n)
	}
}

func TestHeldRows(t *testing.T) {
	h := newHeldRows(3)
	row := func(r string) heldRow { return heldRow{cd: candidate{key: "!due/1/" + r, row: r}, url: "http://" + r} }
	for _, r := range []string{"a1", "a2"} {
		if !h.add("a", row(r)) {
			t.Fatalf("add %s refused", r)
		}
	}
	if h.add("a", row("a1")) {
		t.Error("a row was held twice")
	}
	if !h.add("b", row("b1")) || h.add("b", row("b2")) {
		t.Error("max 3: want b1 held and b2 refused")
	}
	if !h.busy("a") || h.busy("c") || !h.has("a2") || h.len() != 3 {
		t.Fatalf("busy(a) %v busy(c) %v has(a2) %v len %d", h.busy("a"), h.busy("c"), h.has("a2"), h.len())
	}
	// A host whose first row is not taken keeps all its rows; one that
	// takes them is offered them oldest first.
	var offered []string
	h.each(func(host string, r heldRow) (bool, bool) {
		offered = append(offered, r.cd.row)
		return host == "a", true
	})
	slices.Sort(offered)
	if want := []string{"a1", "a2", "b1"}; !slices.Equal(offered, want) {
		t.Errorf("offered %v, want %v", offered, want)
	}
	if h.busy("a") || h.has("a1") || !h.has("b1") || h.len() != 1 {
		t.Errorf("after taking a's rows: busy(a) %v has(a1) %v has(b1) %v len %d", h.busy("a"), h.has("a1"), h.has("b1"), h.len())
	}
	// Stopping leaves the rest held.
	h.add("b", row("b2"))
	h.each(func(string, heldRow) (bool, bool) { return true, false })
	if h.len() != 1 || !h.has("b2") {
		t.Errorf("took one and stopped: %d held, b2 held %v", h.len(), h.has("b2"))
	}
}

// A pass that could neither dispatch nor hold a row it read delays the
// next one; a pass that dispatched one, or few held rows, does not.
func TestFrontierPassWaitsAfterSkips(t *testing.T) {
	var p frontierPass
	t0 := time.Now()
	p.scanned(t0)
	p.readFor(300 * time.Millisecond)
	p.skipped("!due/0000000000005/b")
	p.next(t0, false)
	if got, want := p.wait(t0, 100, 100), skipIdle*300*time.Millisecond; got != want {
		t.Errorf("after a pass that only skipped: wait %v, want %v", got, want)
	}
	if got := p.wait(t0, 49, 100); got != 0 {
		t.Errorf("with fewer than half the rows held: wait %v, want none", got)
	}
	if got := p.wait(t0.Add(time.Hour), 100, 100); got != 0 {
		t.Errorf("an hour later: wait %v, want none", got)
	}
	// A short pass waits skipMinWait.
	p.skipped("!due/0000000000005/b")
	p.next(t0, false)
	if got := p.wait(t0, 100, 100); got != skipMinWait {
		t.Errorf("after a short pass that only skipped: wait %v, want %v", got, skipMinWait)
	}
	// One that dispatched a row it read does not wait.
	p.readFor(time.Second)
	p.skipped("!due/0000000000005/b")
	p.sentRow()
	p.next(t0, false)
	if got := p.wait(t0, 100, 100); got != 0 {
		t.Errorf("after a pass that dispatched a row: wait %v, want none", got)
	}
}

// A whole pass that read long makes the next whole one wait wholeIdle
// times its reading (up to wholeMaxEvery), not wholeEvery: the index's
// deleted rows are read at a share of a core.
func TestFrontierPassLongWholePass(t *testing.T) {
	var p frontierPass
	t0 := time.Now()
	p.scanned(t0)
	p.next(t0, false) // the first whole pass begins at t0
	p.readFor(3 * time.Second)
	p.scanned(t0.Add(4 * time.Second))
	p.skipped("!due/0000000000005/b")
	p.next(t0.Add(4*time.Second), false) // it ends; a partial one begins
	gap := wholeIdle * 3 * time.Second
	for _, at := range []time.Duration{wholeEvery, gap - time.Second} {
		p.scanned(t0.Add(at))
		p.skipped("!due/0000000000005/b")
		if got := p.next(t0.Add(at), false); got == webtable.DuePrefix {
			t.Fatalf("a whole pass %v after one that read 3 s, want none before %v", at, gap)
		}
	}
	p.scanned(t0.Add(gap))
	p.skipped("!due/0000000000005/b")
	if got := p.next(t0.Add(gap), false); got != webtable.DuePrefix {
		t.Fatalf("%v after a whole pass that read 3 s: begins at %q, want the start", gap, got)
	}
	// However long a whole pass reads, the next comes by wholeMaxEvery.
	p.readFor(time.Hour)
	p.next(t0.Add(gap+time.Hour), false)
	p.scanned(t0.Add(gap + time.Hour + wholeMaxEvery))
	p.skipped("!due/0000000000005/b")
	if got := p.next(t0.Add(gap+time.Hour+wholeMaxEvery), false); got != webtable.DuePrefix {
		t.Fatalf("%v after a whole pass that read an hour: begins at %q, want the start", wholeMaxEvery, got)
	}
}
