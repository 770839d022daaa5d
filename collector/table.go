package collector

import (
	"strconv"
	"time"
)

// A Table is how state becomes metrics (see the package doc): rows that
// share a label block and columns that are one family each. The writer
// (write.go) renders each row's label block once per scrape and each column
// as one family, its rows in the order client_golang writes series (label
// values compared in label-name order); rows handed over in that order are
// not sorted again.
//
// Labels fills the row's label values in the order of the families' Labels
// (every column of a table has the same label names; families without
// labels need no Labels, and have one row). A column's Value returns ok
// false for a row without a sample in that family.
//
// Prepare, if set, is called before the first column of the table is
// written, and may set Rows and Labels and the Columns' values (not their
// families): a scrape that selects none of the table's families (name[]=…)
// then skips laying out its rows.
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

// b2f is a column value of a condition: 1 or 0.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is a column value of a time.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// rowColumn is a column over rows of type R: its family and a value read
// from the row itself, ok false where the row has no sample.
type rowColumn[R any] struct {
	family *Family
	value  func(row R) (float64, bool)
}

// rowTable is a table of rows, labeled by labels, with a column each of cols.
func rowTable[R any](rows []R, labels func(row R, values []string), cols []rowColumn[R]) *Table {
	t := &Table{
		Rows:    len(rows),
		Labels:  func(row int, values []string) { labels(rows[row], values) },
		Columns: make([]Column, len(cols)),
	}
	for i, c := range cols {
		value := c.value
		t.Columns[i] = Column{c.family, func(row int) (float64, bool) { return value(rows[row]) }}
	}
	return t
}

// rollupTable folds rows into one row per topic, for
// --no-collector.partition-labels: a column for each of cols whose family
// declares a Rollup. The rows of topic k are rows[ends[k-1]:ends[k]]
// (from 0 for the first); topics are their names, in sorted order. It folds
// at once, each row read once, all its columns together, and the table
// keeps no row.
func rollupTable[R any](rows []R, ends []int, topics []string, cols []rowColumn[R]) *Table {
	var (
		values []func(R) (float64, bool)
		isMin  []bool
		folded []*Rollup
	)
	for _, c := range cols {
		if rollup := c.family.Rollup; rollup != nil {
			values = append(values, c.value)
			isMin = append(isMin, rollup.Fold == Min)
			folded = append(folded, rollup)
		}
	}
	n := len(values)
	acc, some := make([]float64, len(ends)*n), make([]bool, len(ends)*n) // [k*n+c]: column c of topic k
	r := &Table{Rows: len(ends), Labels: func(k int, values []string) { values[0] = topics[k] }}
	for c, rollup := range folded {
		r.Columns = append(r.Columns, Column{rollup.Family, func(k int) (float64, bool) {
			return acc[k*n+c], some[k*n+c] || rollup.Always
		}})
	}
	start := 0
	for k, end := range ends {
		a, s := acc[k*n:(k+1)*n], some[k*n:(k+1)*n]
		for _, row := range rows[start:end] {
			for c, value := range values {
				v, ok := value(row)
				switch {
				case !ok:
				case !s[c]:
					a[c], s[c] = v, true
				case isMin[c]:
					a[c] = min(a[c], v)
				default:
					a[c] += v
				}
			}
		}
		start = end
	}
	return r
}
