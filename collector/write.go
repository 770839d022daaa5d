package collector

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
	values   []string // label values, row by row
	order    []int32  // rows in series order
	labels   labelBlocks
	// cells holds every column's values, column by column, each in series
	// order, read from the rows one row at a time: the rows (a snapshot's
	// partitions, say) are then walked once, and each family's pass is
	// sequential. has[i] is false where cells[i] has no sample.
	cells []float64
	has   []bool
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
	size := t.Rows * len(t.Columns)
	r.cells = slices.Grow(r.cells[:0], size)[:size]
	r.has = slices.Grow(r.has[:0], size)[:size]
	for k, row := range r.order {
		for c := range t.Columns {
			r.cells[c*t.Rows+k], r.has[c*t.Rows+k] = t.Columns[c].Value(int(row))
		}
	}
}

func (r *tableRenderer) render(w *textWriter, f *textFamily, column int) {
	if !r.prepared {
		r.prepare()
	}
	rows := r.t.Rows
	cells, has := r.cells[column*rows:(column+1)*rows], r.has[column*rows:(column+1)*rows]
	w.begin(f)
	for k, v := range cells {
		if has[k] {
			w.sampleFloat(f, r.labels.get(k), v)
		}
	}
	w.end()
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
				panic("collector: columns of one table with different labels: " + c.Family.Name)
			}
			sc.fams = append(sc.fams, directFamily{fam: c.Family.text, r: r, i: i})
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
		clear(r.values) // drop the strings of this scrape's snapshot
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
// family name must come from one source only. It returns out's first error,
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
	slices.SortFunc(fams, func(a, b directFamily) int { return strings.Compare(a.fam.name, b.fam.name) })

	var encErr error
	i, j := 0, 0
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
		f.r.render(w, f.fam, f.i)
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
