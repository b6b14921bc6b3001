package badger

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
)

// famPlan is the part of a read concerning one family.
type famPlan struct {
	f  *family
	fs []percolator.Filter // the filters of f, none of them empty
	// cols lists the distinct columns, sorted, when every filter of fs
	// names one; it is nil when some filter selects every column.
	cols []string
}

// plan groups filters by family, sorted by family name. Filters that can
// match nothing (MinTs above MaxTs) are dropped.
func plan(fams *famSet, filters []percolator.Filter) ([]famPlan, error) {
	var ps []famPlan
	for _, fl := range filters {
		f, ok := fams.get(fl.Family)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownFamily, fl.Family)
		}
		if fl.MinTs > fl.Max() {
			continue
		}
		i := slices.IndexFunc(ps, func(p famPlan) bool { return p.f == f })
		if i < 0 {
			ps = append(ps, famPlan{f: f})
			i = len(ps) - 1
		}
		ps[i].fs = append(ps[i].fs, fl)
	}
	for i := range ps {
		p := &ps[i]
		for _, fl := range p.fs {
			if fl.Column == "" {
				p.cols = nil
				break
			}
			p.cols = append(p.cols, fl.Column)
		}
		slices.Sort(p.cols)
		p.cols = slices.Compact(p.cols)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].f.name < ps[j].f.name })
	return ps, nil
}

// forColumn returns the filters of fs that select column col.
func forColumn(fs []percolator.Filter, col string) []percolator.Filter {
	all := true
	for _, f := range fs {
		if !selects(f, col) {
			all = false
			break
		}
	}
	if all {
		return fs
	}
	var out []percolator.Filter
	for _, f := range fs {
		if selects(f, col) {
			out = append(out, f)
		}
	}
	return out
}

// selects reports whether filter f applies to column col.
func selects(f percolator.Filter, col string) bool {
	if f.Column != "" {
		return f.Column == col
	}
	return strings.HasPrefix(col, f.ColumnPrefix)
}

// commonPrefix returns the column prefix every filter of fs is limited to,
// or "" when some filter selects every column.
func commonPrefix(fs []percolator.Filter) string {
	if len(fs) == 0 || fs[0].ColumnPrefix == "" {
		return ""
	}
	p := fs[0].ColumnPrefix
	for _, f := range fs[1:] {
		if f.ColumnPrefix != p {
			return ""
		}
	}
	return p
}

// upper is fl.Max() without a copy of *fl, which calling the method on a
// pointer makes even when inlined (it showed in the profiles of point
// reads).
func upper(fl *percolator.Filter) uint64 {
	if fl.MaxTs == 0 {
		return percolator.MaxTs
	}
	return fl.MaxTs
}

// maxOf returns the largest upper bound of fs.
func maxOf(fs []percolator.Filter) uint64 {
	var m uint64
	for _, f := range fs {
		m = max(m, f.Max())
	}
	return m
}

// minOf returns the smallest lower bound of fs.
func minOf(fs []percolator.Filter) uint64 {
	m := uint64(math.MaxUint64)
	for _, f := range fs {
		m = min(m, f.MinTs)
	}
	return m
}

// A picker selects, among the live versions of one column visited newest
// first, those that some filter selects: every version in range for a plain
// filter, the first one in range for a Latest filter.
type picker struct {
	fs []percolator.Filter
	// done marks the filters that can select no older version: bit i of
	// small, or big[i] when there are more than 64 filters. (A picker must
	// not point into itself, or it could not live on the stack.)
	small uint64
	big   []bool
	left  int  // filters that may still select an older version
	vals  bool // some filter wants values
}

// newPicker returns a picker for the filters fs. (It returns a value, not
// a pointer, so that a picker and its filters can stay on the stack.)
func newPicker(fs []percolator.Filter) picker {
	p := picker{fs: fs, left: len(fs)}
	if len(fs) > 64 {
		p.big = make([]bool, len(fs))
	}
	for _, f := range fs {
		p.vals = p.vals || !f.KeysOnly
	}
	return p
}

func (p *picker) done(i int) bool {
	if p.big != nil {
		return p.big[i]
	}
	return p.small&(1<<i) != 0
}

func (p *picker) finish(i int) {
	if p.big != nil {
		p.big[i] = true
	} else {
		p.small |= 1 << i
	}
	p.left--
}

// take reports whether the live version ts is selected. Versions must come
// newest first; once left is 0 no older version can be.
func (p *picker) take(ts uint64) bool {
	took := false
	for i := range p.fs {
		if p.done(i) {
			continue
		}
		f := &p.fs[i]
		switch {
		case ts > f.Max():
		case ts < f.MinTs:
			p.finish(i)
		default:
			took = true
			if f.Latest {
				p.finish(i)
			}
		}
	}
	return took
}
