package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/serving"
)

func TestStatusPage(t *testing.T) {
	s, _ := newTestServer(t, canned(), Options{})
	res, body := get(t, s, "/status")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	nb := "\u202f"
	wantContains(t, "status", body,
		`<meta http-equiv="refresh" content="5">`,
		`<span class="badge busy">working</span>`, "a crawler runs in this process", "this process feeds index main",
		`<div class="v">1`+nb+`169</div><div class="k">pages crawled</div>`,
		`<div class="v">42</div><div class="k">in the frontier, 7 due</div>`,
		`<div class="v">1`+nb+`100</div><div class="k">documents indexed</div>`,
		`<div class="v">5</div><div class="k">in the export queue</div>`,
		`<div class="v">12</div><div class="k">pending notifications</div>`,
		`<div class="card bad"><div class="v">1</div><div class="k">failed notifications</div>`,
		"p50 <b>1.2 s</b> · p90 <b>2.5 s</b> · p99 <b>4.75 s</b>",
		`<div class="scroll">`,
		"<td>parse</td><td><code>fetch:body</code></td><td class=\"num\">10</td>",
		`<td class="num bad">1</td>`,
		"Fetched per second", "Indexed per second", "fetched/s", "indexed/s", "Crawl → searchable latency", "p99",
		"60 samples of history.",
	)
	// Five charts with 1 + 1 + 3 + 2 + 1 lines, drawn on the server: fetch
	// and index rates each on their own scale, and pending notifications
	// on theirs, not the pages'.
	if n := strings.Count(body, `<svg viewBox="0 0 640 220" role="img"`); n != 5 {
		t.Errorf("%d charts", n)
	}
	if n := strings.Count(body, "<polyline "); n != 8 {
		t.Errorf("%d lines", n)
	}
	figs := strings.Split(body, `<figure class="chart">`)
	if len(figs) == 6 {
		if pages := figs[4]; !strings.Contains(pages, "Pages and documents") || strings.Contains(pages, "pending") {
			t.Errorf("pages chart:\n%s", pages)
		}
		// Pending (at most 60 in the history) is drawn on its own axis,
		// up to 60, not on the pages' axis up to 1,200.
		if pending := figs[5]; !strings.Contains(pending, "Pending notifications") ||
			!strings.Contains(pending, `dominant-baseline="middle">60</text>`) || strings.Contains(pending, "200</text>") {
			t.Errorf("pending chart:\n%s", pending)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("the status page has a script")
	}

	_, body = get(t, s, "/status?refresh=0")
	if strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "resume auto-refresh") {
		t.Error("?refresh=0 does not pause")
	}
}

func TestStatusPageNoHistory(t *testing.T) {
	f := canned()
	f.history = nil
	f.stats.Idle, f.stats.Crawling, f.stats.Observers = true, false, nil
	f.stats.Latency = serving.Latency{}
	s, _ := newTestServer(t, f, Options{})
	res, body := get(t, s, "/status")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	wantContains(t, "status", body, `<span class="badge ok">idle</span>`, "Not enough history yet",
		"No page has become searchable in the recent window.", "No observers run in this process.")
	if strings.Contains(body, "<polyline") {
		t.Error("lines without history")
	}
}

// TestStatusPageStandby: a process whose feeder stands by says so, and
// who feeds the index.
func TestStatusPageStandby(t *testing.T) {
	f := canned()
	f.stats.Feeder, f.stats.FeederHolder = "standby", "host-a 4242"
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/status")
	wantContains(t, "status", body, `<span class="badge busy">standby</span> index main is fed by host-a 4242`)
	m := getJSON(t, s, "/api/stats", http.StatusOK)
	if m["feeder"] != "standby" || m["feeder_holder"] != "host-a 4242" || m["index_name"] != "main" {
		t.Errorf("stats %v", m)
	}
}

func TestAPIStats(t *testing.T) {
	f := canned()
	s, _ := newTestServer(t, f, Options{})
	m := getJSON(t, s, "/api/stats", http.StatusOK)
	wantKeys(t, "stats", m,
		[]string{"pages", "indexed", "frontier", "pending_notifications", "failed_notifications", "idle", "observers", "latency"},
		"due", "export_queue", "crawling", "time", "index_name", "feeder", "feeder_holder")
	if m["pages"] != 1169.0 || m["indexed"] != 1100.0 || m["frontier"] != 42.0 || m["idle"] != false ||
		m["pending_notifications"] != 12.0 || m["failed_notifications"] != 1.0 {
		t.Errorf("stats %v", m)
	}
	obs := wantArray(t, "stats", m, "observers", 3)
	wantKeys(t, "observer", obs[0].(map[string]any), []string{"name", "column", "pending", "failed", "runs", "commits", "conflicts", "run_time_s"})
	lat := m["latency"].(map[string]any)
	wantKeys(t, "latency", lat, []string{"count", "p50_s", "p90_s", "p99_s"})

	f.stats.Observers = nil
	m = getJSON(t, s, "/api/stats", http.StatusOK)
	wantArray(t, "no observers", m, "observers", 0)
}

// TestStatusPageBulkCrawl: during a bulk crawl the page says that
// indexing waits for it, not that the process feeds its index.
func TestStatusPageBulkCrawl(t *testing.T) {
	f := canned()
	f.stats.BulkCrawl = true
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/status")
	wantContains(t, "status", body, `<span class="badge busy">bulk crawl</span> indexing starts once the crawl is over`)
	if strings.Contains(body, "this process feeds index") {
		t.Error("a bulk crawl's status says its index is fed")
	}
	if m := getJSON(t, s, "/api/stats", http.StatusOK); m["bulk_crawl"] != true {
		t.Errorf("stats %v, want bulk_crawl true", m)
	}
}

// TestStatusPageBulkStage: once a bulk crawl is over, the page says which
// stage of its indexing runs.
func TestStatusPageBulkStage(t *testing.T) {
	f := canned()
	f.stats.BulkStage = "2/4: rank, <rank-outside>"
	s, _ := newTestServer(t, f, Options{})
	_, body := get(t, s, "/status")
	wantContains(t, "status", body, `<span class="badge busy">bulk indexing</span> stage 2/4: rank, &lt;rank-outside&gt;`)
	if m := getJSON(t, s, "/api/stats", http.StatusOK); m["bulk_stage"] != "2/4: rank, <rank-outside>" {
		t.Errorf("stats %v, want bulk_stage", m["bulk_stage"])
	}
}
