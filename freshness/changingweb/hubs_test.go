package changingweb_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/freshness/changingweb"
)

// TestHubsLinkDensity checks the link-dense profile: every original page
// has LinksPerPage links besides the next page, none to itself, none
// twice; about HubShare of them go to the hubs, skewed to the first; a
// hub outranks every ordinary page in links in.
func TestHubsLinkDensity(t *testing.T) {
	for _, seed := range []int64{1, 2, time.Now().UnixNano()} {
		const pages, links, hubs = 3000, 80, 15
		w, err := changingweb.New(changingweb.Options{Pages: pages, Duplicates: pages / 50, LinksPerPage: links,
			Hubs: hubs, Section: pages, Seed: seed, HotFraction: -1})
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, pages)
		toHubs, total := 0, 0
		for p := range pages {
			out := w.Links(p)
			if len(out) != links+1 {
				t.Fatalf("seed %d: page %d has %d links, want %d", seed, p, len(out), links+1)
			}
			if w.Original(p) != p {
				continue
			}
			seen := map[int]bool{}
			for _, q := range out {
				if q == p || seen[q] || q < 0 || q >= pages {
					t.Fatalf("seed %d: page %d links %d (self, repeat or out of range): %v", seed, p, q, out)
				}
				seen[q] = true
				in[q]++
				total++
				if q >= 1 && q <= hubs {
					toHubs++
				}
			}
		}
		// A page links a hub once: of its HubShare draws, the repeats of
		// the hubs it already links are drawn again elsewhere.
		share := float64(toHubs) / float64(total)
		perPage := float64(toHubs) / float64(pages-pages/50)
		if share > changingweb.DefaultHubShare || perPage < hubs/3 {
			t.Errorf("seed %d: %.2f of the links (%.1f a page) go to hubs, want at most %.2f and at least %d a page", seed, share, perPage, changingweb.DefaultHubShare, hubs/3)
		}
		ordinary := slices.Max(in[hubs+1:])
		if in[1] <= ordinary || in[hubs] <= ordinary/2 {
			t.Errorf("seed %d: links in: first hub %d, last hub %d, most of an ordinary page %d; want hubs above", seed, in[1], in[hubs], ordinary)
		}
		if in[1] < 2*in[hubs] {
			t.Errorf("seed %d: links in: first hub %d, last hub %d; want a skew to the first", seed, in[1], in[hubs])
		}
	}
}

// TestHubsSameSeed checks that the seed makes the links.
func TestHubsSameSeed(t *testing.T) {
	opt := changingweb.Options{Pages: 500, LinksPerPage: 40, Hubs: 5, Section: 500, Seed: 7}
	a, err := changingweb.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := changingweb.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	for p := range 500 {
		if !slices.Equal(a.Links(p), b.Links(p)) {
			t.Fatalf("page %d: links %v and %v from one seed", p, a.Links(p), b.Links(p))
		}
	}
}

func TestHubsInvalid(t *testing.T) {
	for name, opt := range map[string]changingweb.Options{
		"negative hubs": {Pages: 10, Hubs: -1},
		"all hubs":      {Pages: 10, Hubs: 10},
		"share above 1": {Pages: 10, Hubs: 2, HubShare: 1.5},
	} {
		if _, err := changingweb.New(opt); !errors.Is(err, changingweb.ErrInvalidOptions) {
			t.Errorf("%s: err %v, want ErrInvalidOptions", name, err)
		}
	}
}
