package webtable

import (
	"math"
	"strconv"
	"testing"
)

// TestRoundRank checks RoundRank's buckets: a value and every value whose
// ln(1+x) is within a fraction of RankStep of it share a bucket or a
// neighbour; two values in one bucket give scores within 0.45 × RankStep;
// rounding is monotone and stable (rounding the bucket's value gives the
// bucket).
func TestRoundRank(t *testing.T) {
	prev := 0.0
	for x := 0.001; x < 1000; x *= 1.003 {
		r := RoundRank(x)
		v, err := strconv.ParseFloat(r, 64)
		if err != nil {
			t.Fatalf("RoundRank(%g) = %q: %v", x, r, err)
		}
		if v < prev {
			t.Fatalf("RoundRank(%g) = %g, below %g for a smaller value", x, v, prev)
		}
		prev = v
		if RoundRank(v) != r {
			t.Fatalf("RoundRank(%g) = %q, but RoundRank(%q) = %q", x, r, r, RoundRank(v))
		}
		if d := math.Abs(math.Log1p(x) - math.Log1p(v)); d > RankStep/2+1e-3 {
			t.Fatalf("RoundRank(%g) = %q: %g apart in ln(1+x), want at most half a step (and 4 digits)", x, r, d)
		}
	}
	for _, x := range []float64{0, -1, math.NaN()} {
		if r := RoundRank(x); r != "0" {
			t.Errorf("RoundRank(%g) = %q, want 0", x, r)
		}
	}
}
