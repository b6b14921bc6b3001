package storetest

import (
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

func TestModel(t *testing.T) {
	Run(t, func(t *testing.T) percolator.Store { return NewModel() })
}

// TestModelPlain runs the suite on a store without the optional
// interfaces, whose tests must skip.
func TestModelPlain(t *testing.T) {
	Run(t, func(t *testing.T) percolator.Store {
		return struct{ percolator.Store }{NewModel()}
	})
}
