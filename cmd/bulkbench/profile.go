package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"time"
)

// A cpuProfile writes a run's CPU profile to path, or with every > 0 one
// profile a window of that length, to path with "-SSSSSs" (the window's
// start in seconds) before ".pprof": on a long run (the million-page
// fixture) the last windows show what grows, which a profile of the whole
// run averages away. `go tool pprof` merges the files given together.
type cpuProfile struct {
	path  string
	every time.Duration
	log   io.Writer // where a failed rotation is told

	f     *os.File // the current window's; only rotate touches it until it is done
	files []string // the windows' files, the current one included
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	err   error // Stop's
}

// startProfile starts writing the profile; the caller must call Stop.
func startProfile(path string, every time.Duration, log io.Writer) (*cpuProfile, error) {
	p := &cpuProfile{path: path, every: every, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if err := p.open(0); err != nil {
		return nil, err
	}
	go p.rotate()
	return p, nil
}

// windowPath is the file of the window that starts at start.
func (p *cpuProfile) windowPath(start time.Duration) string {
	if p.every <= 0 {
		return p.path
	}
	return fmt.Sprintf("%s-%05ds.pprof", strings.TrimSuffix(p.path, ".pprof"), int(start.Seconds()))
}

// open starts the window that begins at start.
func (p *cpuProfile) open(start time.Duration) error {
	f, err := os.Create(p.windowPath(start))
	if err != nil {
		return err
	}
	p.files = append(p.files, f.Name())
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

// close ends the current window.
func (p *cpuProfile) close() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}

func (p *cpuProfile) rotate() {
	defer close(p.done)
	if p.every <= 0 {
		return
	}
	t := time.NewTicker(p.every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		err := p.close()
		if err == nil {
			err = p.open(time.Duration(n) * p.every)
		}
		if err != nil {
			fmt.Fprintln(p.log, "bulkbench: cpu profile:", err)
			return
		}
	}
}

// Stop ends the profile and writes its last window; it returns the
// windows' files. Only the first call stops: later ones return what it
// did.
func (p *cpuProfile) Stop() ([]string, error) {
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		p.err = p.close()
	})
	return p.files, p.err
}
