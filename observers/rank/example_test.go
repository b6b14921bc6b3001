package rank_test

import (
	"fmt"

	"github.com/caffeine-go/caffeine/observers/rank"
)

func ExampleCompare() {
	incremental := map[string]float64{"test.a:http/": 1.004, "test.b:http/": 0.5, "test.c:http/": 0.15}
	batch := map[string]float64{"test.a:http/": 1.0, "test.b:http/": 0.6, "test.d:http/": 0.15}
	for _, d := range rank.Compare(incremental, batch, 0.01) {
		fmt.Println(d)
	}
	// Output:
	// test.b:http/: incremental 0.5, batch 0.6
	// test.c:http/: incremental 0.15, batch NaN
	// test.d:http/: incremental NaN, batch 0.15
}
