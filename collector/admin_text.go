package collector

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// The direct text path of AdminCollector (see exposition.go): its per-partition (or
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
	afStallCause
	afLastAdvance
	afRegressions
	afELR
	afLastKnownELR
	afReassigning
	afReassignAdding
	afReassignRemoving
	afURPByMove
	numAdminFamilies
)

func (d *adminDescs) family(i int) *prometheus.Desc {
	return [numAdminFamilies]*prometheus.Desc{
		afReplicas: d.replicas, afISR: d.isr, afMinISR: d.minISR,
		afUnderReplicated: d.underReplicated, afUnderMinISR: d.underMinISR, afAtMinISR: d.atMinISR,
		afHeadroom: d.headroom, afLeader: d.leader, afLeaderEpoch: d.leaderEpoch,
		afHW: d.hw, afLEO: d.leo, afLag: d.lag, afStalled: d.stalled, afStallCause: d.stallCause,
		afLastAdvance: d.lastAdvance, afRegressions: d.regressions,
		afELR: d.elr, afLastKnownELR: d.lastKnownELR, afReassigning: d.reassigning,
		afReassignAdding: d.reassignAdding, afReassignRemoving: d.reassignRemoving, afURPByMove: d.urpByMove,
	}[i]
}

// lagRef is one replica lag series: the partition is ordered[at].
type lagRef struct {
	lag         int64
	replica, at int32
}

// topicRollup is a topic's sums (rollupOf), rendered by both the direct text
// path and collectRollup.
type topicRollup struct {
	replicas, isr, under, underMin, atMin, stalled int
	hw, leo                                        int64
	regressions                                    uint64
	headroom                                       int
	haveHeadroom, minISRKnown                      bool

	elr, lastKnownELR                        int
	reassigning, adding, removing, urpByMove int
	elrKnown, reassignKnown                  bool
}

// partitionRow is what the families read of one partition, copied in series
// order, because each family is a pass over all partitions.
type partitionRow struct {
	hw, leo, leaderEpoch            int64
	lastAdvance                     float64
	regressions                     uint64
	replicas, isr, minISR, leader   int32
	under, underMin, atMin, stalled bool
	hwKnown, leoKnown               bool

	elr, lastKnownELR, adding, removing int32
	elrKnown, reassignKnown             bool
	reassigning, urpByMove              bool
}

// stallRef is one stall cause series: the partition is ordered[at].
type stallRef struct {
	cause string
	at    int32
}

// adminText is one scrape's view of a snapshot, pooled between scrapes.
type adminText struct {
	s         *admin.Snapshot
	rolled    bool // per-topic rollup (no partition labels)
	ids       idStrings
	ordered   []orderedPartition
	rows      []partitionRow
	labels    labelBlocks // in series order, or by topic when rolled up
	lags      []lagRef    // in series order: partition, replica, topic
	lagLabels labelBlocks
	stalls    []stallRef // in series order: cause, partition, topic
	stallLbls labelBlocks
	rollup    []topicRollup
	prepared  bool // rows, labels, lags and rollup built for s
}

var adminTextPool = sync.Pool{New: func() any { return new(adminText) }}

// textFamilies implements TextSource: the same families and series Collect
// sends, other than those of SmallFamilies.
func (a *AdminCollector) textFamilies(fams []directFamily) ([]directFamily, func()) {
	t := adminTextPool.Get().(*adminText)
	t.s = a.src.Snapshot()
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
		clear(t.ordered) // drop the pointers into the snapshot
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
	t.stallLbls.reset()
	t.lags, t.stalls, t.rollup, t.rows = t.lags[:0], t.stalls[:0], t.rollup[:0], t.rows[:0]
	if !t.rolled {
		t.ordered = seriesOrder(t.ordered, s, &t.ids)
		ordered := t.ordered
		t.rows = slices.Grow(t.rows, len(ordered))
		t.labels.grow(len(ordered), 32)
		for k := range ordered {
			p := &ordered[k]
			t.labels.add("partition", p.id, "topic", p.Topic)
			r := partitionRow{
				hw: p.HW, leo: p.LEO, leaderEpoch: p.LeaderEpoch, regressions: p.Regressions,
				replicas: int32(p.Replicas), isr: int32(p.ISR), minISR: int32(p.MinISR), leader: p.Leader,
				under: p.UnderReplicated(), underMin: p.UnderMinISR(), atMin: p.AtMinISR(), stalled: p.Stalled,
				hwKnown: p.HWKnown, leoKnown: p.LEOKnown,
				elr: p.ELR, lastKnownELR: p.LastKnownELR, elrKnown: p.ELRKnown,
				adding: p.AddingReplicas, removing: p.RemovingReplicas, reassignKnown: p.ReassignmentKnown,
				reassigning: p.Reassigning, urpByMove: p.UnderReplicatedByReassignment,
			}
			if p.Stalled {
				t.stalls = append(t.stalls, stallRef{cause: p.StallCause.String(), at: int32(k)})
			}
			if p.HWKnown {
				r.lastAdvance = float64(p.LastAdvance.UnixNano()) / 1e9
			}
			t.rows = append(t.rows, r)
		}
		// ordered is sorted by partition, then topic; the lag series sort
		// by partition, replica, topic: reorder each run of one partition id.
		for start := 0; start < len(ordered); {
			end := start + 1
			for end < len(ordered) && ordered[end].id == ordered[start].id {
				end++
			}
			from := len(t.lags)
			for at := start; at < end; at++ {
				for _, l := range ordered[at].Lags {
					t.lags = append(t.lags, lagRef{lag: l.Lag, replica: l.Replica, at: int32(at)})
				}
			}
			slices.SortStableFunc(t.lags[from:], func(x, y lagRef) int {
				return strings.Compare(t.ids.get(x.replica), t.ids.get(y.replica))
			})
			start = end
		}
		t.lagLabels.grow(len(t.lags), 44)
		for _, l := range t.lags {
			p := &ordered[l.at]
			t.lagLabels.add("partition", p.id, "replica", t.ids.get(l.replica), "topic", p.Topic)
		}
		// ordered is sorted by partition, then topic: a stable sort by cause
		// gives the series order.
		slices.SortStableFunc(t.stalls, func(x, y stallRef) int { return strings.Compare(x.cause, y.cause) })
		for _, st := range t.stalls {
			p := &ordered[st.at]
			t.stallLbls.add("cause", st.cause, "partition", p.id, "topic", p.Topic)
		}
	} else {
		for i := range s.Topics {
			t.labels.add("topic", s.Topics[i].Name)
			t.rollup = append(t.rollup, rollupOf(&s.Topics[i]))
		}
	}
}

func rollupOf(t *admin.Topic) topicRollup {
	r := topicRollup{minISRKnown: t.MinISRConfig > 0}
	for i := range t.Partitions {
		p := &t.Partitions[i]
		r.replicas += p.Replicas
		r.isr += p.ISR
		r.under += b2i(p.UnderReplicated())
		r.underMin += b2i(p.UnderMinISR())
		r.atMin += b2i(p.AtMinISR())
		r.stalled += b2i(p.Stalled)
		if p.HWKnown {
			r.hw += p.HW
		}
		if p.LEOKnown {
			r.leo += p.LEO
		}
		r.regressions += p.Regressions
		if p.MinISR > 0 && (!r.haveHeadroom || p.ISR-p.MinISR < r.headroom) {
			r.headroom, r.haveHeadroom = p.ISR-p.MinISR, true
		}
		if p.ELRKnown {
			r.elrKnown = true
			r.elr += int(p.ELR)
			r.lastKnownELR += int(p.LastKnownELR)
		}
		if p.ReassignmentKnown {
			r.reassignKnown = true
			r.reassigning += b2i(p.Reassigning)
			r.adding += int(p.AddingReplicas)
			r.removing += int(p.RemovingReplicas)
			r.urpByMove += b2i(p.UnderReplicatedByReassignment)
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
	switch fi {
	case afLag:
		for k := range t.lags {
			w.sampleInt(f, t.lagLabels.get(k), t.lags[k].lag)
		}
		return
	case afStallCause:
		for k := range t.stalls {
			w.sampleInt(f, t.stallLbls.get(k), 1)
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
			if p.hwKnown && p.leoKnown {
				w.sampleBool(f, lbl, p.stalled)
			}
		case afRegressions:
			w.sampleUint(f, lbl, p.regressions)
		case afELR:
			if p.elrKnown {
				w.sampleInt(f, lbl, int64(p.elr))
			}
		case afLastKnownELR:
			if p.elrKnown {
				w.sampleInt(f, lbl, int64(p.lastKnownELR))
			}
		case afReassigning:
			if p.reassignKnown {
				w.sampleBool(f, lbl, p.reassigning)
			}
		case afReassignAdding:
			if p.reassigning {
				w.sampleInt(f, lbl, int64(p.adding))
			}
		case afReassignRemoving:
			if p.reassigning {
				w.sampleInt(f, lbl, int64(p.removing))
			}
		case afURPByMove:
			if p.reassignKnown {
				w.sampleBool(f, lbl, p.urpByMove)
			}
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
		case afELR:
			if r.elrKnown {
				w.sampleInt(f, lbl, int64(r.elr))
			}
		case afLastKnownELR:
			if r.elrKnown {
				w.sampleInt(f, lbl, int64(r.lastKnownELR))
			}
		case afReassigning:
			if r.reassignKnown {
				w.sampleInt(f, lbl, int64(r.reassigning))
			}
		case afReassignAdding:
			if r.reassignKnown {
				w.sampleInt(f, lbl, int64(r.adding))
			}
		case afReassignRemoving:
			if r.reassignKnown {
				w.sampleInt(f, lbl, int64(r.removing))
			}
		case afURPByMove:
			if r.reassignKnown {
				w.sampleInt(f, lbl, int64(r.urpByMove))
			}
		}
	}
}

// idStrings formats partition and broker ids as label values once rather
// than per series; ids are small and dense (below a topic's partition
// count), so a slice indexed by id holds them.
type idStrings []string

// maxCachedID bounds the slice; a larger id is formatted on each call.
const maxCachedID = 1 << 16

func (c *idStrings) get(id int32) string {
	if id >= 0 && int(id) < len(*c) {
		return (*c)[id]
	}
	if id < 0 || id >= maxCachedID {
		return strconv.FormatInt(int64(id), 10)
	}
	for n := len(*c); n <= int(id); n++ {
		*c = append(*c, strconv.Itoa(n))
	}
	return (*c)[id]
}
