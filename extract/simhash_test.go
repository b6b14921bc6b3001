package extract

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestSimHashNearCopies: pages that differ by a date or a counter are a
// few bits apart; different texts are far apart.
func TestSimHashNearCopies(t *testing.T) {
	base := strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 3) +
		"PostgreSQL supports several index types: B-tree, hash, GiST, SP-GiST, GIN and BRIN. " +
		"Each index type uses a different algorithm that is best suited to different types of queries."
	dated := base + " Last updated 2026-11-28."
	dated2 := base + " Last updated 2026-11-29."
	counter := base + " You are visitor 1234."
	counter2 := base + " You are visitor 1235."
	other := "Debian is a free operating system developed by volunteers; the installer supports many architectures and its package manager resolves dependencies."
	if d := simDistance(simHash(dated), simHash(dated2)); d > 3 {
		t.Errorf("date: %d bits", d)
	}
	if d := simDistance(simHash(counter), simHash(counter2)); d > 3 {
		t.Errorf("counter: %d bits", d)
	}
	if d := simDistance(simHash(base), simHash(other)); d <= 10 {
		t.Errorf("different texts: %d bits", d)
	}
	if simHash("") != 0 || simHash("Hello, WORLD") != simHash("hello world") {
		t.Error("empty or case")
	}
}

// TestSimHashCorpus measures, on directories of HTML pages (the Debian
// handbook, every language, and the PostgreSQL manual), how many pairs of
// pages with different texts fall within each distance, how many of those
// have titles that differ beyond their digits, and how many are different
// files (not one file in two language directories). Set
// CAFFEINE_SIMHASH_CORPUS to the directories, as PATH, to run it.
func TestSimHashCorpus(t *testing.T) {
	if os.Getenv("CAFFEINE_SIMHASH_CORPUS") == "" {
		t.Skip("CAFFEINE_SIMHASH_CORPUS unset")
	}
	for _, dir := range filepath.SplitList(os.Getenv("CAFFEINE_SIMHASH_CORPUS")) {
		type doc struct {
			name, title, hash string
			sim               uint64
		}
		var docs []doc
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(path, ".html") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			p, err := HTML("https://example.com/"+strings.TrimPrefix(path, dir), b, "text/html", Options{})
			if err != nil || len(p.Text) < 200 {
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			docs = append(docs, doc{rel, strings.Map(noDigits, p.Title), p.Hash, simHash(p.Text)})
			return nil
		})
		var within [8]int
		var cross [8]int
		var files [8]int
		var examples []string
		for i := range docs {
			for j := i + 1; j < len(docs); j++ {
				if docs[i].hash == docs[j].hash {
					continue // exact copies: the exact clusters
				}
				d := simDistance(docs[i].sim, docs[j].sim)
				if d < len(within) {
					within[d]++
					if docs[i].title != docs[j].title {
						cross[d]++
					}
					if filepath.Base(docs[i].name) != filepath.Base(docs[j].name) {
						files[d]++
					}
					if d <= 3 && len(examples) < 6 && docs[i].title == docs[j].title {
						examples = append(examples, fmt.Sprintf("%s ~ %s (%d)", docs[i].name, docs[j].name, d))
					}
				}
			}
		}
		n := len(docs)
		t.Logf("%s: %d pages, %d pairs of different texts", dir, n, n*(n-1)/2)
		cum, ccum, fcum := 0, 0, 0
		for d := range within {
			cum += within[d]
			ccum += cross[d]
			fcum += files[d]
			t.Logf("  within %d bits: %d pairs, %d of them with titles that differ (digits aside), %d of different files", d, cum, ccum, fcum)
		}
		for _, e := range examples {
			t.Logf("  e.g. %s", e)
		}
	}
}

// noDigits drops digits from a title (a counter or a date in it).
func noDigits(r rune) rune {
	if unicode.IsDigit(r) {
		return -1
	}
	return r
}
