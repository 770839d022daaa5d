package collector

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// The direct text path of Admin (see exposition.go): its per-partition (or
// per-topic) families, read from the immutable snapshot of the last refresh.

// Families of adminText.render.
const (
	afReplicas = iota
	afISR
	afMinISR
	afUnderReplicated
	afUnderMinISR
	afAtMinISR
	afHeadroom
	afLeader
	afLeaderEpoch
	afHW
	afLEO
	afLag
	afStalled
	afLastAdvance
	afRegressions
	numAdminFamilies
)

func (d *adminDescs) family(i int) *prometheus.Desc {
	return [numAdminFamilies]*prometheus.Desc{
		afReplicas: d.replicas, afISR: d.isr, afMinISR: d.minISR,
		afUnderReplicated: d.underReplicated, afUnderMinISR: d.underMinISR, afAtMinISR: d.atMinISR,
		afHeadroom: d.headroom, afLeader: d.leader, afLeaderEpoch: d.leaderEpoch,
		afHW: d.hw, afLEO: d.leo, afLag: d.lag, afStalled: d.stalled,
		afLastAdvance: d.lastAdvance, afRegressions: d.regressions,
	}[i]
}

type lagRef struct {
	lag     int64
	replica string
	p       *partitionSample
}

// topicRollup is a topic's sums (rollupOf), rendered by both the direct text
// path and collectRollup.
type topicRollup struct {
	replicas, isr, under, underMin, atMin, stalled int
	hw, leo                                        int64
	regressions                                    uint64
	headroom                                       int
	haveHeadroom, minISRKnown                      bool
}

// partitionRow is what the families read of one partition, copied in series
// order: each family is a pass over all partitions, and over this compact,
// sequential copy the passes cost a third of what they did over s.ordered
// (pointers into per-topic slices: a cache miss per series).
type partitionRow struct {
	hw, leo, leaderEpoch            int64
	lastAdvance                     float64
	regressions                     uint64
	replicas, isr, minISR, leader   int32
	under, underMin, atMin, stalled bool
	hwKnown, leoKnown               bool
}

// adminText is one scrape's view of a snapshot, pooled between scrapes.
type adminText struct {
	s         *adminSnapshot
	rolled    bool // per-topic rollup (no partition labels)
	rows      []partitionRow
	labels    labelBlocks // by s.ordered index, or by topic when rolled up
	lags      []lagRef    // in series order: partition, replica, topic
	lagLabels labelBlocks
	rollup    []topicRollup
	prepared  bool // rows, labels, lags and rollup built for s
}

var adminTextPool = sync.Pool{New: func() any { return new(adminText) }}

// textFamilies implements TextSource: the same families and series Collect
// sends, other than those of SmallFamilies.
func (a *Admin) textFamilies(fams []directFamily) ([]directFamily, func()) {
	t := adminTextPool.Get().(*adminText)
	t.s = a.snap.Load()
	t.rolled = !a.descs.partitionLabels
	t.prepared = false
	d := &a.descs
	for i := range numAdminFamilies {
		if desc := d.family(i); desc != nil {
			fams = append(fams, directFamily{fam: d.text[desc], r: t, i: i})
		}
	}
	return fams, func() {
		t.s = nil
		clear(t.lags) // drop the pointers into the snapshot
		adminTextPool.Put(t)
	}
}

// prepare builds the rows and label blocks the families render, on the first
// family actually written: a scrape that selects other families (name[]=…)
// does not pay for 100k partitions.
func (t *adminText) prepare() {
	t.prepared = true
	s := t.s
	t.labels.reset()
	t.lagLabels.reset()
	t.lags, t.rollup, t.rows = t.lags[:0], t.rollup[:0], t.rows[:0]
	if !t.rolled {
		t.rows = slices.Grow(t.rows, len(s.ordered))
		t.labels.grow(len(s.ordered), 32)
		for _, p := range s.ordered {
			t.labels.add("partition", p.partitionID, "topic", p.topic)
			r := partitionRow{
				hw: p.hw, leo: p.leo, leaderEpoch: p.leaderEpoch, regressions: p.regressions,
				replicas: int32(p.replicas), isr: int32(p.isr), minISR: int32(p.minISR), leader: p.leader,
				under: p.underReplicated(), underMin: p.underMinISR(), atMin: p.atMinISR(), stalled: p.stalled,
				hwKnown: p.hwKnown, leoKnown: p.leoKnown,
			}
			if p.hwKnown {
				r.lastAdvance = float64(p.lastAdvance.UnixNano()) / 1e9
			}
			t.rows = append(t.rows, r)
		}
		// s.ordered is sorted by partition, then topic; the lag series sort
		// by partition, replica, topic: reorder each run of one partition id.
		for start := 0; start < len(s.ordered); {
			end := start + 1
			for end < len(s.ordered) && s.ordered[end].partitionID == s.ordered[start].partitionID {
				end++
			}
			from := len(t.lags)
			for _, p := range s.ordered[start:end] {
				for i := range p.lags {
					l := &p.lags[i]
					t.lags = append(t.lags, lagRef{lag: l.lag, replica: l.replica, p: p})
				}
			}
			slices.SortStableFunc(t.lags[from:], func(x, y lagRef) int { return strings.Compare(x.replica, y.replica) })
			start = end
		}
		t.lagLabels.grow(len(t.lags), 44)
		for _, l := range t.lags {
			t.lagLabels.add("partition", l.p.partitionID, "replica", l.replica, "topic", l.p.topic)
		}
	} else {
		for i := range s.topics {
			t.labels.add("topic", s.topics[i].name)
			t.rollup = append(t.rollup, rollupOf(&s.topics[i]))
		}
	}
}

func rollupOf(t *topicSample) topicRollup {
	r := topicRollup{minISRKnown: t.minISRConfig > 0}
	for i := range t.partitions {
		p := &t.partitions[i]
		r.replicas += p.replicas
		r.isr += p.isr
		r.under += b2i(p.underReplicated())
		r.underMin += b2i(p.underMinISR())
		r.atMin += b2i(p.atMinISR())
		r.stalled += b2i(p.stalled)
		if p.hwKnown {
			r.hw += p.hw
		}
		if p.leoKnown {
			r.leo += p.leo
		}
		r.regressions += p.regressions
		if p.minISR > 0 && (!r.haveHeadroom || p.isr-p.minISR < r.headroom) {
			r.headroom, r.haveHeadroom = p.isr-p.minISR, true
		}
	}
	return r
}

func (t *adminText) render(w *textWriter, f *textFamily, fi int) {
	if !t.prepared {
		t.prepare()
	}
	w.begin(f)
	if t.rolled {
		t.renderRollup(w, f, fi)
	} else {
		t.renderPartitions(w, f, fi)
	}
	w.end()
}

func (t *adminText) renderPartitions(w *textWriter, f *textFamily, fi int) {
	if fi == afLag {
		for k := range t.lags {
			w.sampleInt(f, t.lagLabels.get(k), t.lags[k].lag)
		}
		return
	}
	for k := range t.rows {
		p, lbl := &t.rows[k], t.labels.get(k)
		switch fi {
		case afReplicas:
			w.sampleInt(f, lbl, int64(p.replicas))
		case afISR:
			w.sampleInt(f, lbl, int64(p.isr))
		case afUnderReplicated:
			w.sampleBool(f, lbl, p.under)
		case afMinISR:
			if p.minISR > 0 {
				w.sampleInt(f, lbl, int64(p.minISR))
			}
		case afUnderMinISR:
			if p.minISR > 0 {
				w.sampleBool(f, lbl, p.underMin)
			}
		case afAtMinISR:
			if p.minISR > 0 {
				w.sampleBool(f, lbl, p.atMin)
			}
		case afHeadroom:
			if p.minISR > 0 {
				w.sampleInt(f, lbl, int64(p.isr-p.minISR))
			}
		case afLeader:
			w.sampleInt(f, lbl, int64(p.leader))
		case afLeaderEpoch:
			w.sampleInt(f, lbl, p.leaderEpoch)
		case afHW:
			if p.hwKnown {
				w.sampleInt(f, lbl, p.hw)
			}
		case afLastAdvance:
			if p.hwKnown {
				w.sampleFloat(f, lbl, p.lastAdvance)
			}
		case afLEO:
			if p.leoKnown {
				w.sampleInt(f, lbl, p.leo)
			}
		case afStalled:
			w.sampleBool(f, lbl, p.stalled)
		case afRegressions:
			w.sampleUint(f, lbl, p.regressions)
		}
	}
}

func (t *adminText) renderRollup(w *textWriter, f *textFamily, fi int) {
	for k := range t.rollup {
		r, lbl := &t.rollup[k], t.labels.get(k)
		switch fi {
		case afReplicas:
			w.sampleInt(f, lbl, int64(r.replicas))
		case afISR:
			w.sampleInt(f, lbl, int64(r.isr))
		case afUnderReplicated:
			w.sampleInt(f, lbl, int64(r.under))
		case afUnderMinISR:
			if r.minISRKnown {
				w.sampleInt(f, lbl, int64(r.underMin))
			}
		case afAtMinISR:
			if r.minISRKnown {
				w.sampleInt(f, lbl, int64(r.atMin))
			}
		case afHeadroom:
			if r.haveHeadroom {
				w.sampleInt(f, lbl, int64(r.headroom))
			}
		case afHW:
			w.sampleInt(f, lbl, r.hw)
		case afLEO:
			w.sampleInt(f, lbl, r.leo)
		case afStalled:
			w.sampleInt(f, lbl, int64(r.stalled))
		case afRegressions:
			w.sampleUint(f, lbl, r.regressions)
		}
	}
}
