package exposition

import (
	"io"
	"slices"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The writer: every kafka_replication_* family is written here, straight
// into a byte buffer in the text format (exposition.go), from tables
// (table.go); the registry keeps the standard collectors (Go, process, build
// info), and WriteText merges both in family-name order as Gather would. Why
// not the registry for everything: see docs/design.md ("Rendering").

// tableRenderer renders one table's columns; its label blocks and cells are
// built on the first column actually written, so a scrape that selects other
// families (name[]=…) does not pay for them. Its buffers are reused between
// scrapes (expositionScratch).
type tableRenderer struct {
	t        *Table
	prepared bool
	values   []string // label values, row by row (only of a table handed over out of order)
	order    []int32  // rows in series order
	labels   labelBlocks
	// cells holds the values of a table of several columns, column by
	// column, each in series order, read from the rows one row at a time:
	// the rows (a snapshot's partitions, say) are then walked once, and each
	// family's pass is sequential. Bit i of has is 0 where cells[i] has no
	// sample.
	cells []float64
	has   []uint64
}

func (r *tableRenderer) prepare() {
	r.prepared = true
	t := r.t
	if t.Prepare != nil {
		t.Prepare(t)
	}
	r.order = slices.Grow(r.order[:0], t.Rows)
	for i := range t.Rows {
		r.order = append(r.order, int32(i))
	}
	if !r.labelInOrder() {
		r.labelSorted()
	}
	if len(t.Columns) == 1 {
		return // one pass over the rows whatever
	}
	size := t.Rows * len(t.Columns)
	r.cells = slices.Grow(r.cells[:0], size)[:size]
	r.has = slices.Grow(r.has[:0], size/64+1)[:size/64+1]
	clear(r.has)
	for k, row := range r.order {
		for c := range t.Columns {
			i := c*t.Rows + k
			v, ok := t.Columns[c].Value(int(row))
			if ok && !(v == 0 && t.Columns[c].Family.Sparse) {
				r.cells[i] = v
				r.has[i/64] |= 1 << (i % 64)
			}
		}
	}
}

// labelInOrder renders the label blocks of rows handed over in series
// order, keeping only the last row's label values; false (blocks partly
// rendered) at the first row out of order.
func (r *tableRenderer) labelInOrder() bool {
	t := r.t
	names := t.Columns[0].Family.Labels
	n := len(names)
	r.labels.reset()
	r.labels.grow(t.Rows, 16*n+8)
	r.values = slices.Grow(r.values[:0], 2*n)[:2*n]
	prev, cur := r.values[:n], r.values[n:]
	for row := range t.Rows {
		if n > 0 {
			t.Labels(row, cur)
		}
		if row > 0 && slices.Compare(prev, cur) > 0 {
			return false
		}
		r.labels.addPairs(names, cur)
		prev, cur = cur, prev
	}
	return true
}

// labelSorted lays out every row's label values, sorts the rows by them and
// renders their label blocks in that order.
func (r *tableRenderer) labelSorted() {
	t := r.t
	names := t.Columns[0].Family.Labels
	n := len(names)
	r.values = slices.Grow(r.values[:0], t.Rows*n)[:t.Rows*n]
	values := r.values
	for row := range t.Rows {
		t.Labels(row, values[row*n:(row+1)*n])
	}
	slices.SortFunc(r.order, func(a, b int32) int {
		return slices.Compare(values[int(a)*n:int(a+1)*n], values[int(b)*n:int(b+1)*n])
	})
	r.labels.reset()
	for _, row := range r.order {
		r.labels.addPairs(names, values[int(row)*n:int(row+1)*n])
	}
}

// render writes column's samples as family f; cont continues the family
// block a table before it opened (no header). It reports whether it wrote
// a sample.
func (r *tableRenderer) render(w *textWriter, f *textFamily, column int, cont bool) bool {
	if !r.prepared {
		r.prepare()
	}
	if cont {
		w.samples = 0
	} else {
		w.begin(f)
	}
	if len(r.t.Columns) == 1 {
		value, sparse := r.t.Columns[0].Value, r.t.Columns[0].Family.Sparse
		for k, row := range r.order {
			if v, ok := value(int(row)); ok && !(v == 0 && sparse) {
				w.sampleFloat(f, r.labels.get(k), v)
			}
		}
	} else {
		start := column * r.t.Rows
		for k, v := range r.cells[start : start+r.t.Rows] {
			if i := start + k; r.has[i/64]&(1<<(i%64)) != 0 {
				w.sampleFloat(f, r.labels.get(k), v)
			}
		}
	}
	wrote := w.samples > 0
	if !cont {
		w.end()
	}
	return wrote
}

// directFamily is one column of a table, to be written as one family.
type directFamily struct {
	fam *textFamily
	r   *tableRenderer
	i   int // which column of r's table
}

// expositionScratch is one scrape's working memory, pooled between scrapes.
// The k-th table of a scrape gets renderers[k]: the sources return their
// tables in the same order every scrape, so each renderer's buffers stay
// sized for the same table.
type expositionScratch struct {
	w         textWriter
	fams      []directFamily
	rels      []func()
	renderers []*tableRenderer
	used      int // renderers in use by this scrape
}

var expositionPool = sync.Pool{New: func() any {
	return &expositionScratch{w: textWriter{buf: make([]byte, 0, flushAt+4096)}}
}}

// add snapshots src and lists the families of its tables.
func (sc *expositionScratch) add(src TableSource) {
	tables, release := src()
	for _, t := range tables {
		if sc.used == len(sc.renderers) {
			sc.renderers = append(sc.renderers, new(tableRenderer))
		}
		r := sc.renderers[sc.used]
		sc.used++
		r.t, r.prepared = t, false
		for i, c := range t.Columns {
			if !slices.Equal(c.Family.Labels, t.Columns[0].Family.Labels) {
				panic("exposition: columns of one table with different labels: " + c.Family.Name)
			}
			if !c.Family.Derived {
				sc.fams = append(sc.fams, directFamily{fam: c.Family.text, r: r, i: i})
			}
		}
	}
	if release != nil {
		sc.rels = append(sc.rels, release)
	}
}

// reset lets go of this scrape's snapshots, keeping the buffers.
func (sc *expositionScratch) reset() {
	for _, r := range sc.renderers[:sc.used] {
		r.t = nil
		clear(r.values[:cap(r.values)]) // drop the strings of this scrape's snapshot
	}
	sc.used = 0
	for _, rel := range sc.rels {
		rel()
	}
	clear(sc.fams)
	clear(sc.rels)
	sc.fams, sc.rels = sc.fams[:0], sc.rels[:0]
}

// WriteText writes the gathered registry families mfs (sorted by name, as
// Gather returns them) and the tables of srcs to out, merged in
// family-name order, as expfmt's text encoder would write a registry holding
// all of them. keep (nil = all) selects families by name. A
// family name must come from one source only (its tables may share it). It returns out's first error,
// else the first encoding error of a registry family (whose output is then
// partial, as with expfmt).
func WriteText(out io.Writer, mfs []*dto.MetricFamily, keep func(name string) bool, srcs ...TableSource) error {
	sc := expositionPool.Get().(*expositionScratch)
	w := &sc.w
	w.out, w.err = out, nil
	for _, s := range srcs {
		sc.add(s)
	}
	fams := sc.fams
	// Stable: the tables of one source that share a family name (per-partition
	// series beside per-topic ones, --collector.partition-series=unhealthy)
	// make one block, with the first table's HELP.
	slices.SortStableFunc(fams, func(a, b directFamily) int { return strings.Compare(a.fam.name, b.fam.name) })

	var encErr error
	i, j := 0, 0
	open := "" // the family whose block has samples so far
	for (i < len(mfs) || j < len(fams)) && w.err == nil {
		if j == len(fams) || (i < len(mfs) && mfs[i].GetName() <= fams[j].fam.name) {
			mf := mfs[i]
			i++
			if keep != nil && !keep(mf.GetName()) {
				continue
			}
			if _, err := expfmt.MetricFamilyToText(w, mf); err != nil && encErr == nil {
				encErr = err
			}
			w.maybeFlush()
			continue
		}
		f := fams[j]
		j++
		if keep != nil && !keep(f.fam.name) {
			continue
		}
		cont := open == f.fam.name
		if f.r.render(w, f.fam, f.i, cont) || cont {
			open = f.fam.name
		} else {
			open = ""
		}
	}
	w.flush()
	err := w.err
	if err == nil {
		err = encErr
	}

	sc.reset()
	w.out, w.err = nil, nil
	if cap(w.buf) <= 4*flushAt {
		expositionPool.Put(sc)
	}
	return err
}
