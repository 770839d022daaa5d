package exposition

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

// RowColumn is a column over rows of type R: its family and a value read
// from the row itself, ok false where the row has no sample.
type RowColumn[R any] struct {
	Family *Family
	Value  func(row R) (float64, bool)
}

// RowTable is a table of rows, labeled by labels, with a column each of cols.
func RowTable[R any](rows []R, labels func(row R, values []string), cols []RowColumn[R]) *Table {
	t := &Table{
		Rows:    len(rows),
		Labels:  func(row int, values []string) { labels(rows[row], values) },
		Columns: make([]Column, len(cols)),
	}
	for i, c := range cols {
		value := c.Value
		t.Columns[i] = Column{c.Family, func(row int) (float64, bool) { return value(rows[row]) }}
	}
	return t
}

// RollupTable folds rows into one row per topic, for
// --no-collector.partition-labels: a column for each of cols whose family
// declares a Rollup. The rows of topic k are rows[ends[k-1]:ends[k]]
// (from 0 for the first); topics are their names, in sorted order. It folds
// at once, each row read once, all its columns together, and the table
// keeps no row.
func RollupTable[R any](rows []R, ends []int, topics []string, cols []RowColumn[R]) *Table {
	var (
		values []func(R) (float64, bool)
		isMin  []bool
		folded []*Rollup
	)
	for _, c := range cols {
		if rollup := c.Family.Rollup; rollup != nil {
			values = append(values, c.Value)
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
