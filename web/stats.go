package web

import (
	"time"

	"github.com/caffeine-go/caffeine/serving"
)

// The status of a deployment, as GET /api/stats and the status page
// show it; the engine fills it in.

// ObserverCount is one observer's progress.
type ObserverCount struct {
	Name      string  `json:"name"`
	Column    string  `json:"column"`
	Pending   int     `json:"pending"`
	Failed    int     `json:"failed"`
	Runs      int64   `json:"runs"`
	Commits   int64   `json:"commits"`
	Conflicts int64   `json:"conflicts"`
	RunTimeS  float64 `json:"run_time_s"`
}

// Stats is the status of a deployment (GET /api/stats).
type Stats struct {
	Pages                int  `json:"pages"`    // page rows fetched at least once
	Indexed              int  `json:"indexed"`  // documents in the serving index
	Frontier             int  `json:"frontier"` // URLs waiting in the frontier (due now or later)
	Due                  int  `json:"due"`      // of them, due now
	PendingNotifications int  `json:"pending_notifications"`
	FailedNotifications  int  `json:"failed_notifications"`
	ExportQueue          int  `json:"export_queue"` // export entries not yet applied
	Idle                 bool `json:"idle"`         // nothing due, nothing pending, export queue drained
	Crawling             bool `json:"crawling"`     // a crawler runs in this process
	// BulkCrawl: this process crawls before it indexes (search -bulk) and
	// its first crawl goes on; its chain and feeder start once it is over.
	BulkCrawl bool `json:"bulk_crawl,omitempty"`
	// BulkStage: the first crawl is over and its pages go through the
	// chain in stages (percolator.WorkerOptions.Stages); this is the
	// stage being drained, "N/M: observer, observer".
	BulkStage string          `json:"bulk_stage,omitempty"`
	Observers []ObserverCount `json:"observers"`
	Latency   serving.Latency `json:"latency"` // crawl→searchable over the recent window
	Time      time.Time       `json:"time"`

	// IndexName is the serving index's name (search -index-name). Feeder
	// says whether this process applies the export queue to it:
	// "feeding", "standby" (another process holds the index's feeder
	// lease; FeederHolder says who: "HOST PID"), "stopped", or "none" (no
	// feeder). IndexState is the index's registry state as the feeder
	// last saw it: "live", "backfilling" (registered lately: exports from
	// before may be missing until the feeder backfills them from the
	// table), or "" (not known yet, or no feeder).
	IndexName    string `json:"index_name"`
	Feeder       string `json:"feeder"`
	FeederHolder string `json:"feeder_holder,omitempty"`
	IndexState   string `json:"index_state,omitempty"`
}

// Sample is one point of the status page's time series.
type Sample struct {
	Time       time.Time `json:"time"`
	Pages      int       `json:"pages"`
	Indexed    int       `json:"indexed"`
	Fetched    float64   `json:"fetched_per_s"` // fetch rate over the last interval
	Exported   float64   `json:"indexed_per_s"` // index updates applied per second
	LatencyP50 float64   `json:"latency_p50_s"`
	LatencyP90 float64   `json:"latency_p90_s"`
	LatencyP99 float64   `json:"latency_p99_s"`
	Pending    int       `json:"pending_notifications"`
}
