package freshness

import (
	"slices"
	"time"
)

// Distribution summarizes durations, in seconds.
type Distribution struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_s"`
	P50   float64 `json:"p50_s"`
	P90   float64 `json:"p90_s"`
	P99   float64 `json:"p99_s"`
	Max   float64 `json:"max_s"`
}

// Summarize returns the distribution of ds, which it sorts in place.
// Percentiles interpolate linearly between the closest ranks (Hyndman and
// Fan's type 7, numpy's default). An empty ds gives the zero Distribution.
func Summarize(ds []time.Duration) Distribution {
	if len(ds) == 0 {
		return Distribution{}
	}
	slices.Sort(ds)
	var sum float64
	for _, d := range ds {
		sum += d.Seconds()
	}
	return Distribution{
		Count: len(ds),
		Mean:  sum / float64(len(ds)),
		P50:   Percentile(ds, 0.50).Seconds(),
		P90:   Percentile(ds, 0.90).Seconds(),
		P99:   Percentile(ds, 0.99).Seconds(),
		Max:   ds[len(ds)-1].Seconds(),
	}
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1) of sorted, interpolating
// linearly between the closest ranks; 0 for an empty slice.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + time.Duration(frac*float64(sorted[i+1]-sorted[i]))
}
