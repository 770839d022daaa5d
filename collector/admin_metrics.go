package collector

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// AdminSnapshots is where the admin families come from: *admin.Poller, whose
// last refresh they render.
type AdminSnapshots interface {
	Snapshot() *admin.Snapshot
}

// AdminMetrics renders the admin poller's last snapshot. It never waits on
// Kafka: the poller refreshes in the background.
type AdminMetrics struct {
	src             AdminSnapshots
	partitionLabels bool
}

// NewAdminMetrics renders src per partition, or without partitionLabels
// (--no-collector.partition-labels) as per-topic rollups.
func NewAdminMetrics(src AdminSnapshots, partitionLabels bool) *AdminMetrics {
	return &AdminMetrics{src: src, partitionLabels: partitionLabels}
}

// adminScrape is one scrape's view of a snapshot, pooled between scrapes.
type adminScrape struct {
	s       *admin.Snapshot
	ordered bool // the fields below are laid out for s
	parts   []orderedPartition
	rows    []partitionRow
	lags    []lagRef
	stalls  []stallRef
	rollup  []topicRollup
}

var adminScrapePool = sync.Pool{New: func() any { return new(adminScrape) }}

// Tables snapshots the poller and returns its tables (a TableSource).
func (m *AdminMetrics) Tables() ([]*Table, func()) {
	s := m.src.Snapshot()
	sc := adminScrapePool.Get().(*adminScrape)
	tables := []*Table{refreshTable(s), requestErrorTable(s), disagreementTable(s), topicMinISRTable(s), brokerTable(s)}
	if m.partitionLabels {
		sc.s, sc.ordered = s, false
		tables = append(tables, sc.partitionTable(), sc.lagTable(), sc.stallTable())
	} else {
		tables = append(tables, sc.rollupTable(s))
	}
	return tables, func() {
		sc.s = nil
		clear(sc.parts) // drop the pointers into the snapshot
		adminScrapePool.Put(sc)
	}
}

// refreshTable is the refresh itself: one row, no labels.
func refreshTable(s *admin.Snapshot) *Table {
	return &Table{Rows: 1, Columns: []Column{
		{upFamily, func(int) (float64, bool) { return b2f(s.Up), true }},
		{lastRefreshFamily, func(int) (float64, bool) { return unixSeconds(s.LastSuccess), !s.LastSuccess.IsZero() }},
		{refreshDurationFamily, func(int) (float64, bool) { return s.Duration.Seconds(), true }},
	}}
}

// requestErrorTable lists every request, with zero before its first error.
func requestErrorTable(s *admin.Snapshot) *Table {
	return &Table{
		Rows:   int(admin.NumRequests),
		Labels: func(row int, values []string) { values[0] = admin.Request(row).String() },
		Columns: []Column{
			{requestErrorsFamily, func(row int) (float64, bool) { return float64(s.RequestErrors[row]), true }},
		},
	}
}

// disagreementTable lists every field, with zero before its first disagreement.
func disagreementTable(s *admin.Snapshot) *Table {
	return &Table{
		Rows:   int(admin.NumFields),
		Labels: func(row int, values []string) { values[0] = admin.Field(row).String() },
		Columns: []Column{
			{disagreementsFamily, func(row int) (float64, bool) { return float64(s.Disagreements[row]), true }},
		},
	}
}

// topicMinISRTable has a series for each topic whose configuration was read.
func topicMinISRTable(s *admin.Snapshot) *Table {
	topics := s.Topics
	return &Table{
		Rows:   len(topics),
		Labels: func(row int, values []string) { values[0] = topics[row].Name },
		Columns: []Column{
			{topicMinISRFamily, func(row int) (float64, bool) {
				return float64(topics[row].MinISRConfig), topics[row].MinISRConfig > 0
			}},
		},
	}
}

func brokerTable(s *admin.Snapshot) *Table {
	brokers := s.Brokers
	return &Table{
		Rows:   len(brokers),
		Labels: func(row int, values []string) { values[0] = idLabel(brokers[row].ID) },
		Columns: []Column{
			{brokerResponsiveFamily, func(row int) (float64, bool) { return b2f(brokers[row].Responsive), true }},
		},
	}
}

// orderedPartition is a partition with its id formatted as a label value.
type orderedPartition struct {
	*admin.Partition
	id string
}

// partitionRow is what the families read of one partition, copied in series
// order so that each column is a pass through memory in order.
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

// lagRef is one replica lag series: the partition is parts[at].
type lagRef struct {
	lag         int64
	replica, at int32
}

// stallRef is one stall cause series: the partition is parts[at].
type stallRef struct {
	cause string
	at    int32
}

// orderPartitions lays out the snapshot's partitions, replica lags and
// stalls in the order Prometheus sorts their series, so that the table
// writer finds them sorted and does not sort them again. It runs once per
// scrape, for the first of the three tables written.
func (sc *adminScrape) orderPartitions() {
	if sc.ordered {
		return
	}
	sc.ordered = true
	sc.parts = seriesOrder(sc.parts, sc.s)
	ordered := sc.parts
	sc.rows = slices.Grow(sc.rows[:0], len(ordered))
	sc.stalls = sc.stalls[:0]
	for k := range ordered {
		p := &ordered[k]
		r := partitionRow{
			hw: p.HW, leo: p.LEO, leaderEpoch: p.LeaderEpoch, regressions: p.Regressions,
			replicas: int32(p.Replicas), isr: int32(p.ISR), minISR: int32(p.MinISR), leader: p.Leader,
			under: p.UnderReplicated(), underMin: p.UnderMinISR(), atMin: p.AtMinISR(), stalled: p.Stalled,
			hwKnown: p.HWKnown, leoKnown: p.LEOKnown,
			elr: p.ELR, lastKnownELR: p.LastKnownELR, elrKnown: p.ELRKnown,
			adding: p.AddingReplicas, removing: p.RemovingReplicas, reassignKnown: p.ReassignmentKnown,
			reassigning: p.Reassigning, urpByMove: p.UnderReplicatedByReassignment,
		}
		if p.HWKnown {
			r.lastAdvance = unixSeconds(p.LastAdvance)
		}
		if p.Stalled {
			sc.stalls = append(sc.stalls, stallRef{cause: p.StallCause.String(), at: int32(k)})
		}
		sc.rows = append(sc.rows, r)
	}
	// ordered is sorted by partition, then topic; the lag series sort by
	// partition, replica, topic: reorder each run of one partition id.
	sc.lags = sc.lags[:0]
	for start := 0; start < len(ordered); {
		end := start + 1
		for end < len(ordered) && ordered[end].id == ordered[start].id {
			end++
		}
		from := len(sc.lags)
		for at := start; at < end; at++ {
			for _, l := range ordered[at].Lags {
				sc.lags = append(sc.lags, lagRef{lag: l.Lag, replica: l.Replica, at: int32(at)})
			}
		}
		slices.SortStableFunc(sc.lags[from:], func(x, y lagRef) int {
			return strings.Compare(idLabel(x.replica), idLabel(y.replica))
		})
		start = end
	}
	// The stall series sort by cause, partition, topic: ordered is sorted by
	// the last two already.
	slices.SortStableFunc(sc.stalls, func(x, y stallRef) int { return strings.Compare(x.cause, y.cause) })
}

func (sc *adminScrape) partitionTable() *Table {
	gauge := func(f *Family, v func(r *partitionRow) (float64, bool)) Column {
		return Column{f, func(row int) (float64, bool) { return v(&sc.rows[row]) }}
	}
	return &Table{
		Prepare: func(t *Table) { sc.orderPartitions(); t.Rows = len(sc.rows) },
		Labels: func(row int, values []string) {
			values[0], values[1] = sc.parts[row].id, sc.parts[row].Topic
		},
		Columns: []Column{
			gauge(replicasFamily, func(r *partitionRow) (float64, bool) { return float64(r.replicas), true }),
			gauge(isrFamily, func(r *partitionRow) (float64, bool) { return float64(r.isr), true }),
			gauge(underReplicatedFamily, func(r *partitionRow) (float64, bool) { return b2f(r.under), true }),
			gauge(minISRFamily, func(r *partitionRow) (float64, bool) { return float64(r.minISR), r.minISR > 0 }),
			gauge(underMinISRFamily, func(r *partitionRow) (float64, bool) { return b2f(r.underMin), r.minISR > 0 }),
			gauge(atMinISRFamily, func(r *partitionRow) (float64, bool) { return b2f(r.atMin), r.minISR > 0 }),
			gauge(headroomFamily, func(r *partitionRow) (float64, bool) { return float64(r.isr - r.minISR), r.minISR > 0 }),
			gauge(leaderFamily, func(r *partitionRow) (float64, bool) { return float64(r.leader), true }),
			gauge(leaderEpochFamily, func(r *partitionRow) (float64, bool) { return float64(r.leaderEpoch), true }),
			gauge(hwFamily, func(r *partitionRow) (float64, bool) { return float64(r.hw), r.hwKnown }),
			gauge(lastAdvanceFamily, func(r *partitionRow) (float64, bool) { return r.lastAdvance, r.hwKnown }),
			gauge(leoFamily, func(r *partitionRow) (float64, bool) { return float64(r.leo), r.leoKnown }),
			gauge(stalledFamily, func(r *partitionRow) (float64, bool) { return b2f(r.stalled), r.hwKnown && r.leoKnown }),
			gauge(regressionsFamily, func(r *partitionRow) (float64, bool) { return float64(r.regressions), true }),
			gauge(elrFamily, func(r *partitionRow) (float64, bool) { return float64(r.elr), r.elrKnown }),
			gauge(lastKnownELRFamily, func(r *partitionRow) (float64, bool) { return float64(r.lastKnownELR), r.elrKnown }),
			gauge(reassigningFamily, func(r *partitionRow) (float64, bool) { return b2f(r.reassigning), r.reassignKnown }),
			gauge(urpByMoveFamily, func(r *partitionRow) (float64, bool) { return b2f(r.urpByMove), r.reassignKnown }),
			// Only while a reassignment runs: zero on almost every partition
			// almost always, they would double the series for nothing.
			gauge(reassignAddingFamily, func(r *partitionRow) (float64, bool) { return float64(r.adding), r.reassigning }),
			gauge(reassignRemovingFamily, func(r *partitionRow) (float64, bool) { return float64(r.removing), r.reassigning }),
		},
	}
}

func (sc *adminScrape) lagTable() *Table {
	return &Table{
		Prepare: func(t *Table) { sc.orderPartitions(); t.Rows = len(sc.lags) },
		Labels: func(row int, values []string) {
			l := &sc.lags[row]
			p := &sc.parts[l.at]
			values[0], values[1], values[2] = p.id, idLabel(l.replica), p.Topic
		},
		Columns: []Column{
			{replicaLagFamily, func(row int) (float64, bool) { return float64(sc.lags[row].lag), true }},
		},
	}
}

func (sc *adminScrape) stallTable() *Table {
	return &Table{
		Prepare: func(t *Table) { sc.orderPartitions(); t.Rows = len(sc.stalls) },
		Labels: func(row int, values []string) {
			st := &sc.stalls[row]
			p := &sc.parts[st.at]
			values[0], values[1], values[2] = st.cause, p.id, p.Topic
		},
		Columns: []Column{
			{stallCauseFamily, func(int) (float64, bool) { return 1, true }},
		},
	}
}

// seriesOrder appends the snapshot's partitions to dst in the order
// Prometheus sorts their series: label values compared as strings,
// partition, then topic.
func seriesOrder(dst []orderedPartition, s *admin.Snapshot) []orderedPartition {
	n, lo, hi := 0, int32(math.MaxInt32), int32(math.MinInt32)
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			id := s.Topics[i].Partitions[j].Partition
			lo, hi = min(lo, id), max(hi, id)
			n++
		}
	}
	out := slices.Grow(dst[:0], n)
	if n == 0 {
		return out
	}
	if int64(hi)-int64(lo) > int64(4*n) {
		// Sparse ids, which Kafka does not hand out: sort by comparison.
		for i := range s.Topics {
			for j := range s.Topics[i].Partitions {
				p := &s.Topics[i].Partitions[j]
				out = append(out, orderedPartition{p, idLabel(p.Partition)})
			}
		}
		slices.SortStableFunc(out, func(x, y orderedPartition) int { return strings.Compare(x.id, y.id) })
		return out
	}
	// A counting sort by partition id, the ids taken in the order of their
	// strings; Topics is sorted by name, so each id's topics come in order.
	next := make([]int, hi-lo+1) // count of each id, then where its next partition goes
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			next[s.Topics[i].Partitions[j].Partition-lo]++
		}
	}
	var present []int32
	for k, c := range next {
		if c > 0 {
			present = append(present, lo+int32(k))
		}
	}
	slices.SortFunc(present, func(x, y int32) int { return strings.Compare(idLabel(x), idLabel(y)) })
	at := 0
	for _, id := range present {
		c := next[id-lo]
		next[id-lo] = at
		at += c
	}
	out = out[:n]
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			p := &s.Topics[i].Partitions[j]
			k := &next[p.Partition-lo]
			out[*k] = orderedPartition{p, idLabel(p.Partition)}
			*k++
		}
	}
	return out
}

// topicRollup is a topic's partitions summed, counted or (headroom) the
// smallest, for --no-collector.partition-labels.
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

// rollupTable has a row per topic; Topics is sorted by name, the series order.
func (sc *adminScrape) rollupTable(s *admin.Snapshot) *Table {
	sc.rollup = sc.rollup[:0]
	for i := range s.Topics {
		sc.rollup = append(sc.rollup, rollupOf(&s.Topics[i]))
	}
	topics, sums := s.Topics, sc.rollup
	sum := func(f *Family, v func(r *topicRollup) (float64, bool)) Column {
		return Column{f, func(row int) (float64, bool) { return v(&sums[row]) }}
	}
	return &Table{
		Rows:   len(sums),
		Labels: func(row int, values []string) { values[0] = topics[row].Name },
		Columns: []Column{
			sum(rollupReplicasFamily, func(r *topicRollup) (float64, bool) { return float64(r.replicas), true }),
			sum(rollupISRFamily, func(r *topicRollup) (float64, bool) { return float64(r.isr), true }),
			sum(rollupUnderReplicatedFamily, func(r *topicRollup) (float64, bool) { return float64(r.under), true }),
			sum(rollupUnderMinISRFamily, func(r *topicRollup) (float64, bool) { return float64(r.underMin), r.minISRKnown }),
			sum(rollupAtMinISRFamily, func(r *topicRollup) (float64, bool) { return float64(r.atMin), r.minISRKnown }),
			sum(rollupHeadroomFamily, func(r *topicRollup) (float64, bool) { return float64(r.headroom), r.haveHeadroom }),
			sum(rollupHWFamily, func(r *topicRollup) (float64, bool) { return float64(r.hw), true }),
			sum(rollupLEOFamily, func(r *topicRollup) (float64, bool) { return float64(r.leo), true }),
			sum(rollupStalledFamily, func(r *topicRollup) (float64, bool) { return float64(r.stalled), true }),
			sum(rollupRegressionsFamily, func(r *topicRollup) (float64, bool) { return float64(r.regressions), true }),
			sum(rollupELRFamily, func(r *topicRollup) (float64, bool) { return float64(r.elr), r.elrKnown }),
			sum(rollupLastKnownELRFamily, func(r *topicRollup) (float64, bool) { return float64(r.lastKnownELR), r.elrKnown }),
			sum(rollupReassigningFamily, func(r *topicRollup) (float64, bool) { return float64(r.reassigning), r.reassignKnown }),
			sum(rollupReassignAddingFamily, func(r *topicRollup) (float64, bool) { return float64(r.adding), r.reassignKnown }),
			sum(rollupReassignRemovingFamily, func(r *topicRollup) (float64, bool) { return float64(r.removing), r.reassignKnown }),
			sum(rollupURPByMoveFamily, func(r *topicRollup) (float64, bool) { return float64(r.urpByMove), r.reassignKnown }),
		},
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
