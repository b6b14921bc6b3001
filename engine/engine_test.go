package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/crawl"
	"github.com/caffeine-go/caffeine/observers"
)

// A crawler that fails stops the engine, and Run says why, instead of
// serving on with nothing crawling.
func TestRunReturnsCrawlerFailure(t *testing.T) {
	e, err := Open(context.Background(), Config{
		Dir:       t.TempDir(),
		Crawl:     &crawl.Options{Once: true, Seeds: []string{"mailto:nobody@example.com"}},
		Observers: observers.Chain(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = e.Run(ctx)
	if !errors.Is(err, crawl.ErrInvalidOptions) {
		t.Fatalf("Run = %v, want crawl.ErrInvalidOptions", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run returned only when its context ended")
	}
}

// Run returns nil when its context ends it.
func TestRunStopsWithContext(t *testing.T) {
	e, err := Open(context.Background(), Config{Dir: t.TempDir(), Observers: observers.Chain()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v after cancel, want nil", err)
	}
}

// A crawler with nothing to crawl stops alone: the engine serves on.
func TestRunWithoutSeeds(t *testing.T) {
	e, err := Open(context.Background(), Config{Dir: t.TempDir(), Crawl: &crawl.Options{}, Observers: observers.Chain()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	select {
	case <-e.crawlDone:
	case err := <-done:
		t.Fatalf("Run = %v before its context ended", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Run = %v after the crawler stopped", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
