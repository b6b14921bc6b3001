package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/caffeine-go/caffeine/web"
)

// HistoryFile is where, inside the table directory, the status page's
// samples are kept, one JSON object (web.Sample) a line, so that its
// charts survive a restart. A small file rather than table rows: samples
// are the process's own measurements, not crawl data, and writing them
// must not notify observers or show up in the table's statistics.
const HistoryFile = "status-history.jsonl"

// keepSamples is how many samples the status page keeps: an hour at the
// default interval of 5 s.
const keepSamples = 720

// history is the file of samples. Its methods are called by one goroutine
// at a time (Open, then the sampler).
type history struct {
	path  string
	lines int // samples in the file, kept and not
}

// load reads the kept samples, oldest first. Lines that do not parse (a
// write cut short by a crash) are skipped; a missing file is no history.
func (h *history) load() ([]web.Sample, error) {
	b, err := os.ReadFile(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("engine: read history: %w", err)
	}
	var out []web.Sample
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		h.lines++
		var s web.Sample
		if json.Unmarshal(sc.Bytes(), &s) == nil && !s.Time.IsZero() {
			out = append(out, s)
		}
	}
	if len(out) > keepSamples {
		out = out[len(out)-keepSamples:]
	}
	return out, nil
}

// add appends s to the file. When the file has twice keepSamples lines, it
// is rewritten with kept (the samples in memory, s included) through a
// temporary file and a rename, so a crash leaves the old or the new file.
func (h *history) add(s web.Sample, kept []web.Sample) error {
	if h.lines+1 >= 2*keepSamples {
		return h.rewrite(kept)
	}
	line, err := json.Marshal(s)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("engine: history: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("engine: history: %w", err)
	}
	h.lines++
	return nil
}

func (h *history) rewrite(kept []web.Sample) error {
	var buf bytes.Buffer
	for _, s := range kept {
		line, err := json.Marshal(s)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.path), HistoryFile+".*")
	if err != nil {
		return fmt.Errorf("engine: history: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("engine: history: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("engine: history: %w", err)
	}
	if err := os.Rename(tmp.Name(), h.path); err != nil {
		return fmt.Errorf("engine: history: %w", err)
	}
	h.lines = len(kept)
	return nil
}
