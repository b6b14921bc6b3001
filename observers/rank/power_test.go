package rank

import (
	"math"
	"testing"
)

// Known fixed points: a cycle keeps every node at 1; a node linked by n
// dangling nodes gets (1 − d) + d·n·(1 − d); the map form agrees.
func TestPowerIteration(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, v := range PowerIteration([][]int{{1}, {2}, {0}}, Damping) {
		if !near(v, 1) {
			t.Errorf("cycle node %d: %g, want 1", i, v)
		}
	}
	star := PowerIterationMap(map[string][]string{"hub": nil, "a": {"hub"}, "b": {"hub"}, "c": {"hub"}}, Damping)
	if want := (1 - Damping) + Damping*3*(1-Damping); !near(star["hub"], want) {
		t.Errorf("hub %g, want %g", star["hub"], want)
	}
	if !near(star["a"], 1-Damping) {
		t.Errorf("leaf %g, want %g", star["a"], 1-Damping)
	}
}
