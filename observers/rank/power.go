package rank

import "math"

// Damping is PageRank's d, the probability of following a link: the
// default of Options.Damping, and the value every batch recomputation
// (Batch, observers.RunBatch) uses, so that Verify compares like with like.
const Damping = 0.85

// Power iteration stops when no value moves more than powerTol, or after
// powerIterations.
const (
	powerTol        = 1e-10
	powerIterations = 500
)

// PowerIteration computes PR(p) = (1 − d) + d · Σ_{q→p} PR(q)/outdeg(q)
// over a graph of n nodes, out[i] holding node i's distinct targets,
// starting from 1 − d, until no value moves more than 1e-10 (or 500
// iterations). A dangling node's rank is not redistributed. It is the one
// batch PageRank of the project.
func PowerIteration(out [][]int, d float64) []float64 {
	x := make([]float64, len(out))
	next := make([]float64, len(out))
	for i := range x {
		x[i] = 1 - d
	}
	for range powerIterations {
		for i := range next {
			next[i] = 1 - d
		}
		for i, ts := range out {
			if len(ts) == 0 {
				continue
			}
			share := d * x[i] / float64(len(ts))
			for _, j := range ts {
				next[j] += share
			}
		}
		change := 0.0
		for i := range x {
			change = max(change, math.Abs(next[i]-x[i]))
		}
		x, next = next, x
		if change < powerTol {
			break
		}
	}
	return x
}

// PowerIterationMap is PowerIteration over a graph of named nodes (node →
// distinct targets, every target a node).
func PowerIterationMap(graph map[string][]string, d float64) map[string]float64 {
	names := make([]string, 0, len(graph))
	for n := range graph {
		names = append(names, n)
	}
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	out := make([][]int, len(names))
	for i, n := range names {
		for _, t := range graph[n] {
			out[i] = append(out[i], index[t])
		}
	}
	x := PowerIteration(out, d)
	pr := make(map[string]float64, len(names))
	for i, n := range names {
		pr[n] = x[i]
	}
	return pr
}
