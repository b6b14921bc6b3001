package observers_test

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/extract"
	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestNearCopiesCorpus runs the chain over each directory of HTML pages in
// CAFFEINE_NEAR_CORPUS (a list, as PATH: for example the Debian handbook's
// html directory, all 26 languages, and the PostgreSQL manual), checks it
// against the batch recomputation (Verify), and reports the near-copies
// folded: every (shown page, folded page) pair, classed as
//
//   - copy: the same file in two language directories, the texts detected
//     as one language (an untranslated page under another language's
//     navigation);
//   - translation: the same file, texts detected as different languages;
//   - different: different files.
//
// Translations and different files are the false merges. With
// CAFFEINE_NEAR_PAIRS=FILE every pair is written to FILE. With
// CAFFEINE_NEAR_OFF=1 it runs the chain without the near observers and
// only reports its time (the cost of near-copies, side by side).
func TestNearCopiesCorpus(t *testing.T) {
	dirs := filepath.SplitList(os.Getenv("CAFFEINE_NEAR_CORPUS"))
	if len(dirs) == 0 {
		t.Skip("CAFFEINE_NEAR_CORPUS unset")
	}
	off := os.Getenv("CAFFEINE_NEAR_OFF") != ""
	var out strings.Builder
	for _, dir := range dirs {
		pages := make(map[string][]byte)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			pages[filepath.ToSlash(rel)], err = os.ReadFile(p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		db, _ := percolatortest.Open(t, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
		obs := chain()
		if off {
			obs = slices.DeleteFunc(obs, func(o percolator.Observer) bool { return strings.HasPrefix(o.Name, "near") })
		}
		w, err := percolator.NewWorker(db, percolator.WorkerOptions{Workers: 8, IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, obs...)
		if err != nil {
			t.Fatal(err)
		}
		n := loadCorpus(t, db, pages, []string{"corpus.test"})
		began, cpu0 := time.Now(), cpuTime()
		w.Start()
		ctx, cancel := context.WithTimeout(bg, 20*time.Minute)
		if err := w.WaitIdle(ctx); err != nil {
			t.Fatal(err)
		}
		took, cpu := time.Since(began), cpuTime()-cpu0
		if off {
			cancel()
			w.Close()
			t.Logf("%s: %d pages, chain without near observers to idle %s, %.2f cpu-ms/page", dir, n, took.Round(time.Second), cpu.Seconds()/float64(n)*1e3)
			continue
		}
		diffs, b, err := observers.Verify(ctx, db, 0.01, 20)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
		w.Close()
		for _, s := range w.Stats() {
			if strings.HasPrefix(s.Name, "near") || s.Name == "export" {
				t.Logf("  %s: %d runs, %d commits, %.3f ms/page", s.Name, s.Runs, s.Commits, s.RunTime.Seconds()/float64(n)*1e3)
			}
		}
		text := func(u string) string {
			p := strings.TrimPrefix(u, "http://corpus.test/docs/")
			doc, _, _ := extract.Document(u, pages[p], "text/html", extract.Options{})
			return doc.Text
		}
		classes := map[string]int{}
		folded := 0
		for _, r := range slices.Sorted(maps.Keys(b.Docs)) {
			d := b.Docs[r]
			for _, s := range d.Similar {
				folded++
				a, c := strings.TrimPrefix(d.URL, "http://corpus.test/docs/"), strings.TrimPrefix(s, "http://corpus.test/docs/")
				class := "different"
				if path.Base(a) == path.Base(c) {
					la, _ := extract.DetectLang(text(d.URL))
					lc, _ := extract.DetectLang(text(s))
					class = "copy"
					if la != lc {
						class = "translation"
					}
				}
				classes[class]++
				fmt.Fprintf(&out, "%s\t%s\t%s\t%d bits\n", class, a, c, extract.SimDistance(extract.SimHash(text(d.URL)), extract.SimHash(text(s))))
			}
		}
		t.Logf("%s: %d pages, %d documents, %d folded near-copies (%v), chain to idle %s, %.2f cpu-ms/page", dir, n, len(b.Docs), folded, classes, took.Round(time.Second), cpu.Seconds()/float64(n)*1e3)
	}
	if f := os.Getenv("CAFFEINE_NEAR_PAIRS"); f != "" {
		if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
