package collector

import (
	"slices"
	"strconv"
)

// A Table is how state becomes metrics (see the package doc): rows that
// share a label block and columns that are one family each. The writer
// renders each row's label block once per scrape and each column as one
// pass over the rows, in the series order Prometheus' own encoder uses
// (label values compared in label-name order).
//
// Labels fills the row's label values in the order of the families' Labels
// (every column of a table has the same label names; families without
// labels need no Labels, and have one row). A column's Value returns ok
// false for a row without a sample in that family.
//
// Prepare, if set, is called before the first column of the table is
// written, and may set Rows: a scrape that selects none of the table's
// families (name[]=…) then skips laying out its rows.
type Table struct {
	Rows    int
	Labels  func(row int, values []string)
	Columns []Column
	Prepare func(t *Table)
}

// Column is one family of a Table.
type Column struct {
	Family *Family
	Value  func(row int) (v float64, ok bool)
}

// TableSource is what WriteText renders: a function that snapshots some
// state (a copy under the lock, or an immutable snapshot: no I/O) into
// tables. release (may be nil) is called once the scrape is written, so
// that the snapshot can be reused.
type TableSource func() (tables []*Table, release func())

// tableRenderer renders one table's columns; its label blocks are built on
// the first column actually written, so a scrape that selects other families
// (name[]=…) does not pay for them. Its buffers are reused between scrapes
// (expositionScratch).
type tableRenderer struct {
	t        *Table
	prepared bool
	values   []string // label values, row by row
	order    []int32  // rows in series order
	labels   labelBlocks
}

func (r *tableRenderer) prepare() {
	r.prepared = true
	t := r.t
	if t.Prepare != nil {
		t.Prepare(t)
	}
	names := t.Columns[0].Family.Labels
	n := len(names)
	r.values = slices.Grow(r.values[:0], t.Rows*n)[:t.Rows*n]
	values := r.values
	if n > 0 {
		for row := range t.Rows {
			t.Labels(row, values[row*n:(row+1)*n])
		}
	}
	r.order = slices.Grow(r.order[:0], t.Rows)
	for i := range t.Rows {
		r.order = append(r.order, int32(i))
	}
	cmp := func(a, b int32) int {
		return slices.Compare(values[int(a)*n:int(a+1)*n], values[int(b)*n:int(b+1)*n])
	}
	if !slices.IsSortedFunc(r.order, cmp) {
		slices.SortFunc(r.order, cmp)
	}
	r.labels.reset()
	r.labels.grow(t.Rows, 16*n+8)
	for _, row := range r.order {
		r.labels.addPairs(names, values[int(row)*n:int(row+1)*n])
	}
}

func (r *tableRenderer) render(w *textWriter, f *textFamily, column int) {
	if !r.prepared {
		r.prepare()
	}
	value := r.t.Columns[column].Value
	w.begin(f)
	for k, row := range r.order {
		if v, ok := value(int(row)); ok {
			w.sampleFloat(f, r.labels.get(k), v)
		}
	}
	w.end()
}

// idLabels are the label values of the usual partition and broker ids,
// formatted once rather than on every scrape.
var idLabels = func() []string {
	names := make([]string, 4096)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	return names
}()

// idLabel is the label value of a partition or broker id.
func idLabel(id int32) string {
	if id >= 0 && int(id) < len(idLabels) {
		return idLabels[id]
	}
	return strconv.FormatInt(int64(id), 10)
}
