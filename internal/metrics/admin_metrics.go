package metrics

import (
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// AdminSnapshots is where the admin families come from: *poller.Poller, whose
// last refresh they render.
type AdminSnapshots interface {
	Snapshot() *poller.Snapshot
}

// PartitionSeries is which exported partitions have series of their own;
// the others are folded into per-topic series of the same names.
type PartitionSeries uint8

const (
	// TopicSeries: none, every family per topic (--no-collector.partition-labels).
	TopicSeries PartitionSeries = iota
	// AllPartitionSeries: every exported partition (the default).
	AllPartitionSeries
	// UnhealthyPartitionSeries: the partitions in a bad state
	// (poller.Partition.Unhealthy) and the group positions on them or behind;
	// the healthy partitions folded per topic, so that `sum by (topic)` over
	// both is the topic's total (--collector.partition-series=unhealthy).
	UnhealthyPartitionSeries
)

// AdminMetrics renders the admin poller's last snapshot. It never waits on
// Kafka: the poller refreshes in the background.
type AdminMetrics struct {
	src    AdminSnapshots
	series PartitionSeries

	// The per-topic rollup folds every partition, so the scrapes between
	// two refreshes share it; the weak pointer names its snapshot without
	// keeping it alive.
	mu         sync.Mutex
	rolled     *exposition.Table
	rolledFrom weak.Pointer[poller.Snapshot]
}

// NewAdminMetrics renders src with the partition series chosen.
func NewAdminMetrics(src AdminSnapshots, series PartitionSeries) *AdminMetrics {
	return &AdminMetrics{src: src, series: series}
}

// adminScrape is one scrape's view of a snapshot's partitions, pooled
// between scrapes. Its tables lay it out (list) only when one of their
// families is written.
type adminScrape struct {
	s             *poller.Snapshot
	unhealthyOnly bool                // parts lists only the unhealthy ones
	listed        bool                // parts lists s's partitions
	ranked        bool                // rank is set for parts
	parts         []*poller.Partition // by topic, then partition number (snapshot order)
	lags          []lagRow            // in series order
	stalls        []int32             // indexes into parts
	tieringStalls []int32             // indexes into parts (admin_tiering.go)
	offline       []lagRow            // replicas offline in a failed log directory

	// Scratch of the series order (below).
	ordered []*poller.Partition
	rank    []int32
	order   []int32
	byRank  []int32
	ids     []int32
	keys    []int32
	lagRefs []lagRef
}

// lagRow is one replica lag series, a row of the lag table.
type lagRow struct {
	p *poller.Partition
	poller.ReplicaLag
}

// lagRef is a lag of parts[at], as read in snapshot order.
type lagRef struct {
	at, replica int32
	lag         int64 // -1: offline (a bool would grow the ref by half)
}

var adminScrapePool = sync.Pool{New: func() any { return new(adminScrape) }}

// Tables snapshots the poller and returns its tables (a TableSource).
func (m *AdminMetrics) Tables() ([]*exposition.Table, func()) {
	s := m.src.Snapshot()
	tables := []*exposition.Table{
		refreshTable(s), requestErrorTable(s), disagreementTable(s),
		topicMinISRTable(s), topicInfoTable(s), brokerTable(s), logDirTable(s),
	}
	tables = append(tables, unusableTables(s)...)
	tables = append(tables, quorumTables(s)...)
	tables = append(tables, tieringUnknownTable(s))
	if s.Groups != nil {
		tables = append(tables, groupTables(s)...)
	}
	if s.ShareGroups != nil {
		tables = append(tables, shareGroupTables(s)...)
	}
	if m.series == TopicSeries {
		if s.StableOffsets != nil {
			tables = append(tables, stableOffsetRollup(s, nil))
		}
		return append(tables, m.rollup(s)), nil
	}
	unhealthyOnly := m.series == UnhealthyPartitionSeries
	sc := adminScrapePool.Get().(*adminScrape)
	sc.s, sc.listed, sc.ranked, sc.unhealthyOnly = s, false, false, unhealthyOnly
	tables = append(tables, sc.orderedPartitionTable(), sc.lagTable(), sc.offlineTable(), sc.stallTable(), sc.tieringStallTable())
	if unhealthyOnly {
		tables = append(tables, m.rollup(s)) // after the partition tables: their HELP heads each family
	}
	// The set of unhealthy partitions the group and LSO tables keep, found
	// once per scrape and only if one of them needs it; nil: every partition.
	var unhealthy func() map[partitionKey]bool
	if unhealthyOnly {
		unhealthy = sync.OnceValue(func() map[partitionKey]bool { return unhealthyPartitions(s) })
	}
	if s.Groups != nil {
		tables = append(tables, groupPartitionTable(s.Groups, groupPartitionColumns, unhealthy))
	}
	if s.ShareGroups != nil {
		tables = append(tables, groupPartitionTable(s.ShareGroups, shareGroupPartitionColumns, unhealthy))
	}
	if s.StableOffsets != nil {
		tables = append(tables, stableOffsetTables(s, unhealthy)...)
	}
	return tables, func() {
		sc.s = nil
		clear(sc.parts) // drop the pointers into the snapshot
		clear(sc.ordered)
		clear(sc.lags)
		clear(sc.offline)
		adminScrapePool.Put(sc)
	}
}

// list lays out the partitions of the scrape's snapshot that have series of
// their own, once.
func (sc *adminScrape) list() {
	if !sc.listed {
		sc.listed = true
		sc.parts, _ = partitionsOf(sc.s, sc.parts[:0], nil, sc.unhealthyOnly, true)
	}
}

// partitionsOf appends s's partitions to parts, by topic then number, and
// where each topic's end to ends; with filter, only those whose
// Unhealthy() is unhealthy.
func partitionsOf(s *poller.Snapshot, parts []*poller.Partition, ends []int, filter, unhealthy bool) ([]*poller.Partition, []int) {
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			if p := &s.Topics[i].Partitions[j]; !filter || p.Unhealthy() == unhealthy {
				parts = append(parts, p)
			}
		}
		ends = append(ends, len(parts))
	}
	return parts, ends
}

// rollup returns the per-topic table of s, folded once per snapshot: every
// partition, or in UnhealthyPartitionSeries those without series of their
// own.
func (m *AdminMetrics) rollup(s *poller.Snapshot) *exposition.Table {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rolled == nil || m.rolledFrom.Value() != s {
		parts, ends := partitionsOf(s, nil, nil, m.series == UnhealthyPartitionSeries, false)
		topics := make([]string, len(s.Topics))
		for k := range s.Topics {
			topics[k] = s.Topics[k].Name
		}
		m.rolled, m.rolledFrom = exposition.RollupTable(parts, ends, topics, rollupColumns), weak.Make(s)
	}
	return m.rolled
}

// refreshTable is the refresh itself: one row, no labels.
func refreshTable(s *poller.Snapshot) *exposition.Table {
	return exposition.RowTable([]*poller.Snapshot{s}, func(*poller.Snapshot, []string) {}, refreshColumns)
}

// requestErrorTable lists every request the poller sends, with zero before
// its first error.
func requestErrorTable(s *poller.Snapshot) *exposition.Table {
	requests := requestsSent(s)
	return &exposition.Table{
		Rows:   len(requests),
		Labels: func(row int, values []string) { values[0] = requests[row].String() },
		Columns: []exposition.Column{
			{Family: requestErrorsFamily, Value: func(row int) (float64, bool) { return float64(s.RequestErrors[requests[row]]), true }},
		},
	}
}

// requestsSent are the requests s's poller sends: every one but the opt-in
// reads that are off.
func requestsSent(s *poller.Snapshot) []poller.Request {
	if s.Sent == defaultRequestsSent {
		return defaultRequests // the usual case, without an allocation
	}
	var out []poller.Request
	for r := range poller.NumRequests {
		if s.Sent[r] || !r.OptIn() {
			out = append(out, r)
		}
	}
	return out
}

// defaultRequests are the requests sent with every opt-in read off.
var defaultRequests, defaultRequestsSent = func() (out []poller.Request, sent [poller.NumRequests]bool) {
	for r := range poller.NumRequests {
		if !r.OptIn() {
			out = append(out, r)
			sent[r] = true
		}
	}
	return out, sent
}()

// disagreementTable lists every field, with zero before its first disagreement.
func disagreementTable(s *poller.Snapshot) *exposition.Table {
	return &exposition.Table{
		Rows:   int(poller.NumFields),
		Labels: func(row int, values []string) { values[0] = poller.Field(row).String() },
		Columns: []exposition.Column{
			{Family: disagreementsFamily, Value: func(row int) (float64, bool) { return float64(s.Disagreements[row]), true }},
		},
	}
}

// topicMinISRTable has a series for each topic whose configuration was read.
func topicMinISRTable(s *poller.Snapshot) *exposition.Table {
	topics := s.Topics
	return &exposition.Table{
		Rows:   len(topics),
		Labels: func(row int, values []string) { values[0] = topics[row].Name },
		Columns: []exposition.Column{
			{Family: topicMinISRFamily, Value: func(row int) (float64, bool) {
				return float64(topics[row].MinISRConfig), topics[row].MinISRConfig > 0
			}},
		},
	}
}

// topicInfoTable has a series for each topic whose id Metadata gave.
func topicInfoTable(s *poller.Snapshot) *exposition.Table {
	topics := s.Topics
	return &exposition.Table{
		Rows:   len(topics),
		Labels: func(row int, values []string) { values[0], values[1] = topics[row].Name, topics[row].ID },
		Columns: []exposition.Column{
			{Family: topicInfoFamily, Value: func(row int) (float64, bool) { return 1, topics[row].ID != "" }},
		},
	}
}

func brokerTable(s *poller.Snapshot) *exposition.Table {
	brokers := s.Brokers
	return &exposition.Table{
		Rows:   len(brokers),
		Labels: func(row int, values []string) { values[0] = idLabel(brokers[row].ID) },
		Columns: []exposition.Column{
			{Family: brokerResponsiveFamily, Value: func(row int) (float64, bool) { return b2f(brokers[row].Responsive), true }},
		},
	}
}

// adminPartitionTable is a table of partitionColumns over rows.
func adminPartitionTable(rows []*poller.Partition) *exposition.Table {
	return exposition.RowTable(rows, func(p *poller.Partition, values []string) {
		values[0], values[1] = idLabel(p.Partition), p.Topic
	}, partitionColumns)
}

// orderedPartitionTable has a row per exported partition, in series order:
// its Prepare lays the rows out and makes it the table over them.
func (sc *adminScrape) orderedPartitionTable() *exposition.Table {
	t := adminPartitionTable(nil)
	t.Prepare = func(t *exposition.Table) {
		sc.list()
		sc.rankPartitions()
		sc.order = countingSort(sc.order, sc.rank)
		sc.ordered = sc.ordered[:0]
		for _, at := range sc.order {
			sc.ordered = append(sc.ordered, sc.parts[at])
		}
		*t = *adminPartitionTable(sc.ordered)
	}
	return t
}

// lagTable has a row per follower whose lag the refresh read, in series
// order: partition, replica, topic; a replica offline in a failed log
// directory has a row without a value (offlineTable has it).
func (sc *adminScrape) lagTable() *exposition.Table {
	return &exposition.Table{
		Prepare: func(t *exposition.Table) {
			sc.list()
			sc.rankPartitions()
			// Sorted by replica, then (stably) by partition.
			n := 0
			for _, p := range sc.parts {
				n += len(p.Lags)
			}
			refs, replicas, parts := slices.Grow(sc.lagRefs[:0], n), slices.Grow(sc.keys[:0], n), slices.Grow(sc.ids[:0], n)
			for at, p := range sc.parts {
				for _, l := range p.Lags {
					lag := l.Lag
					if l.Offline {
						lag = -1
					}
					refs = append(refs, lagRef{int32(at), l.Replica, lag})
					replicas = append(replicas, l.Replica)
					parts = append(parts, sc.rank[at])
				}
			}
			ranks := newStringRanks(replicas)
			for i, id := range replicas {
				replicas[i] = ranks.of(id)
			}
			byReplica := countingSort(sc.byRank, replicas)
			keys := replicas // reused: the partition ranks in replica order
			for i, k := range byReplica {
				keys[i] = parts[k]
			}
			sc.order = countingSort(sc.order, keys)
			sc.lagRefs, sc.keys, sc.ids, sc.byRank = refs, keys, parts, byReplica
			sc.lags = slices.Grow(sc.lags[:0], n)
			for _, k := range sc.order {
				r := refs[byReplica[k]]
				sc.lags = append(sc.lags, lagRow{sc.parts[r.at], poller.ReplicaLag{Replica: r.replica, Lag: max(r.lag, 0), Offline: r.lag < 0}})
			}
			t.Rows = len(sc.lags)
		},
		Labels: func(row int, values []string) {
			l := &sc.lags[row]
			values[0], values[1], values[2] = idLabel(l.p.Partition), idLabel(l.Replica), l.p.Topic
		},
		Columns: []exposition.Column{
			{Family: replicaLagFamily, Value: func(row int) (float64, bool) { return float64(sc.lags[row].Lag), !sc.lags[row].Offline }},
		},
	}
}

// offlineTable has a row per replica offline in a failed log directory: a
// table of its own, almost always empty, rather than a second column of the
// lag table's 200k rows.
func (sc *adminScrape) offlineTable() *exposition.Table {
	return &exposition.Table{
		Prepare: func(t *exposition.Table) {
			sc.list()
			sc.offline = sc.offline[:0]
			for _, p := range sc.parts {
				for _, l := range p.Lags {
					if l.Offline {
						sc.offline = append(sc.offline, lagRow{p, l})
					}
				}
			}
			t.Rows = len(sc.offline)
		},
		Labels: func(row int, values []string) {
			l := &sc.offline[row]
			values[0], values[1], values[2] = idLabel(l.p.Partition), idLabel(l.Replica), l.p.Topic
		},
		Columns: []exposition.Column{
			{Family: replicaOfflineFamily, Value: func(int) (float64, bool) { return 1, true }},
		},
	}
}

// stallTable has a row per stalled partition, labeled with its cause.
func (sc *adminScrape) stallTable() *exposition.Table {
	return &exposition.Table{
		Prepare: func(t *exposition.Table) {
			sc.list()
			sc.stalls = sc.stalls[:0]
			for at, p := range sc.parts {
				if p.Stalled {
					sc.stalls = append(sc.stalls, int32(at))
				}
			}
			t.Rows = len(sc.stalls)
		},
		Labels: func(row int, values []string) {
			p := sc.parts[sc.stalls[row]]
			values[0], values[1], values[2] = p.StallCause.String(), idLabel(p.Partition), p.Topic
		},
		Columns: []exposition.Column{
			{Family: stallCauseFamily, Value: func(int) (float64, bool) { return 1, true }},
		},
	}
}

// Series order. The writer wants a table's rows sorted by their label
// values, as client_golang writes them; partition and replica ids sort as
// strings ("10" before "9"). Sorting 100k rows by comparison costs more than
// the rest of the scrape (docs/benchmarks.md), so the partition tables are
// put in that order by counting sorts on the ids' string ranks: the snapshot
// lists partitions by topic, then number, and a stable sort keeps the
// topics of one id in order.

// rankPartitions sets rank[i] to the string rank of parts[i]'s id, once.
func (sc *adminScrape) rankPartitions() {
	if sc.ranked {
		return
	}
	sc.ranked = true
	sc.ids = sc.ids[:0]
	for _, p := range sc.parts {
		sc.ids = append(sc.ids, p.Partition)
	}
	ranks := newStringRanks(sc.ids)
	sc.rank = sc.rank[:0]
	for _, p := range sc.parts {
		sc.rank = append(sc.rank, ranks.of(p.Partition))
	}
}

// countingSort returns the positions of rank in the order of their values,
// stably, in dst.
func countingSort(dst, rank []int32) []int32 {
	n := 0
	for _, r := range rank {
		n = max(n, int(r)+1)
	}
	count := make([]int32, n+1)
	for _, r := range rank {
		count[r+1]++
	}
	for r := range n {
		count[r+1] += count[r]
	}
	dst = slices.Grow(dst[:0], len(rank))[:len(rank)]
	for i, r := range rank {
		dst[count[r]] = int32(i)
		count[r]++
	}
	return dst
}

// stringRanks are some ids in numeric order, each with its rank among them
// in string order; with no ids, every id is below len(idLabels), ranked by
// smallIDRanks.
type stringRanks struct{ ids, rank []int32 }

// smallIDRanks are the ranks of the ids of idLabels in string order, made
// once: partition and broker ids are almost always below 4096.
var smallIDRanks = func() []int32 {
	byString := make([]int32, len(idLabels))
	for i := range byString {
		byString[i] = int32(i)
	}
	slices.SortFunc(byString, func(a, b int32) int { return strings.Compare(idLabels[a], idLabels[b]) })
	ranks := make([]int32, len(idLabels))
	for r, id := range byString {
		ranks[id] = int32(r)
	}
	return ranks
}()

// newStringRanks ranks the distinct ids of ids.
func newStringRanks(ids []int32) stringRanks {
	if !slices.ContainsFunc(ids, func(id int32) bool { return id < 0 || int(id) >= len(idLabels) }) {
		return stringRanks{}
	}
	seen := make(map[int32]struct{})
	var distinct []int32
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			distinct = append(distinct, id)
		}
	}
	slices.Sort(distinct)
	byString := slices.Clone(distinct)
	slices.SortFunc(byString, func(a, b int32) int { return strings.Compare(idLabel(a), idLabel(b)) })
	r := stringRanks{ids: distinct, rank: make([]int32, len(distinct))}
	for i, id := range byString {
		j, _ := slices.BinarySearch(distinct, id)
		r.rank[j] = int32(i)
	}
	return r
}

func (r stringRanks) of(id int32) int32 {
	if r.ids == nil {
		return smallIDRanks[id]
	}
	j, _ := slices.BinarySearch(r.ids, id)
	return r.rank[j]
}
