package metrics

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logstate"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/tail"
)

// LogMetricsOptions shape the log-derived series.
type LogMetricsOptions struct {
	// PartitionLabels false rolls partition series up per topic (sums), for
	// clusters with very many partitions.
	PartitionLabels bool
	// LeaderGauges exports the log's view of ISR size and leader epoch as
	// kafka_replication_partition_in_sync_replicas / _leader_epoch. Off when the
	// admin half runs: it exports those names, joined with this view.
	LeaderGauges bool
}

// LogMetrics renders the log half: a Store's partitions and event totals,
// and the stream's and its files' own metrics.
type LogMetrics struct {
	store  *logstate.Store
	stream *logstate.Stream
	opts   LogMetricsOptions
}

// NewLogMetrics renders store and stream (either may be nil).
func NewLogMetrics(store *logstate.Store, stream *logstate.Stream, opts LogMetricsOptions) *LogMetrics {
	return &LogMetrics{store: store, stream: stream, opts: opts}
}

// logScrape is one scrape's copy of the log state, pooled between scrapes.
type logScrape struct {
	snap   logstate.Snapshot
	topics []topicSum // the per-topic rollup
	index  map[string]int
	files  []logstate.FileStats
}

// topicSum is a topic's partitions summed: counters and HWs (the leader-only
// gauges have no meaningful sum).
type topicSum struct {
	topic    string
	counters logstate.Counters
	hw       int64
	hasHW    bool
}

var logScrapePool = sync.Pool{New: func() any { return &logScrape{index: make(map[string]int)} }}

// Tables snapshots the state and returns its tables (a TableSource).
func (m *LogMetrics) Tables() ([]*exposition.Table, func()) {
	sc := logScrapePool.Get().(*logScrape)
	if m.store != nil {
		m.store.Snapshot(&sc.snap)
	}
	sc.files = sc.files[:0]
	if m.stream != nil {
		for _, f := range m.stream.Files() {
			sc.files = append(sc.files, f.Stats())
		}
	}
	var tables []*exposition.Table
	if m.store != nil {
		if m.opts.PartitionLabels {
			tables = append(tables, m.partitionTable(sc.snap.Partitions))
		} else {
			tables = append(tables, sc.topicTable())
		}
		tables = append(tables, eventTable(&sc.snap), boundTable(&sc.snap), logDirStoppedTable(&sc.snap),
			quorumNodeTable(sc.snap.Quorum), quorumTransitionTable(sc.snap.Quorum))
	}
	if len(sc.files) > 0 {
		tables = append(tables, fileTable(sc.files), fileErrorTable(sc.files), streamTable(m.stream, time.Now()))
	}
	return tables, func() { logScrapePool.Put(sc) }
}

func (m *LogMetrics) partitionTable(parts []logstate.Partition) *exposition.Table {
	// In series order (label values: partition as a string, then topic), so
	// that each column is one pass through memory in order.
	slices.SortFunc(parts, func(a, b logstate.Partition) int {
		if c := strings.Compare(idLabel(a.Partition), idLabel(b.Partition)); c != 0 {
			return c
		}
		return strings.Compare(a.Topic, b.Topic)
	})
	t := &exposition.Table{
		Rows: len(parts),
		Labels: func(row int, values []string) {
			values[0], values[1] = idLabel(parts[row].Partition), parts[row].Topic
		},
	}
	for i, f := range logCounterFamilies {
		t.Columns = append(t.Columns, exposition.Column{Family: f, Value: func(row int) (float64, bool) { return float64(parts[row].Counters[i]), true }})
	}
	t.Columns = append(t.Columns, exposition.Column{Family: logHWFamily, Value: func(row int) (float64, bool) { return float64(parts[row].HW), parts[row].HasHW }})
	if m.opts.LeaderGauges {
		t.Columns = append(t.Columns,
			exposition.Column{Family: isrFamily, Value: func(row int) (float64, bool) { return float64(parts[row].ISRSize), parts[row].HasISR }},
			exposition.Column{Family: leaderEpochFamily, Value: func(row int) (float64, bool) { return float64(parts[row].LeaderEpoch), parts[row].HasLeaderEpoch }},
		)
	}
	return t
}

func (sc *logScrape) topicTable() *exposition.Table {
	clear(sc.index)
	sc.topics = sc.topics[:0]
	for i := range sc.snap.Partitions {
		p := &sc.snap.Partitions[i]
		k, ok := sc.index[p.Topic]
		if !ok {
			k = len(sc.topics)
			sc.index[p.Topic] = k
			sc.topics = append(sc.topics, topicSum{topic: p.Topic})
		}
		sum := &sc.topics[k]
		for j, n := range p.Counters {
			sum.counters[j] += n
		}
		if p.HasHW {
			sum.hw += p.HW
			sum.hasHW = true
		}
	}
	topics := sc.topics
	t := &exposition.Table{Rows: len(topics), Labels: func(row int, values []string) { values[0] = topics[row].topic }}
	for i, f := range logCounterFamilies {
		t.Columns = append(t.Columns, exposition.Column{
			Family: f.Rollup.Family,
			Value:  func(row int) (float64, bool) { return float64(topics[row].counters[i]), true },
		})
	}
	t.Columns = append(t.Columns, exposition.Column{
		Family: logHWFamily.Rollup.Family,
		Value:  func(row int) (float64, bool) { return float64(topics[row].hw), topics[row].hasHW },
	})
	return t
}

// eventTable has one row per event type: every type is listed, with zero
// before its first event, so that rate() sees the start.
func eventTable(snap *logstate.Snapshot) *exposition.Table {
	types := logparse.Types()
	return &exposition.Table{
		Rows:   len(types),
		Labels: func(row int, values []string) { values[0] = types[row].String() },
		Columns: []exposition.Column{
			{Family: logEventsFamily, Value: func(row int) (float64, bool) { return float64(snap.Events[types[row]]), true }},
			{Family: logLastEventFamily, Value: func(row int) (float64, bool) {
				at := snap.LastEvent[types[row]]
				return unixSeconds(at), !at.IsZero()
			}},
		},
	}
}

// fileTable has a row per log file followed, a column each of fileColumns.
func fileTable(files []logstate.FileStats) *exposition.Table {
	rows := make([]*logstate.FileStats, len(files))
	for i := range files {
		rows[i] = &files[i]
	}
	return exposition.RowTable(rows, func(st *logstate.FileStats, values []string) { values[0] = st.Path }, fileColumns)
}

// streamTable is the stream's progress: one row, no labels.
func streamTable(s *logstate.Stream, now time.Time) *exposition.Table {
	return &exposition.Table{Rows: 1, Columns: []exposition.Column{
		{Family: logCaughtUpFamily, Value: func(int) (float64, bool) { return b2f(s.CaughtUp()), true }},
		{Family: logBehindSecondsFamily, Value: func(int) (float64, bool) { return s.BehindSeconds(now), true }},
	}}
}

// boundTable is the store's size against its bound: one row, no labels.
func boundTable(snap *logstate.Snapshot) *exposition.Table {
	return &exposition.Table{Rows: 1, Columns: []exposition.Column{
		{Family: logPartitionsFamily, Value: func(int) (float64, bool) { return float64(len(snap.Partitions)), true }},
		{Family: logPartitionsRefusedFamily, Value: func(int) (float64, bool) { return float64(snap.Refused), true }},
	}}
}

// logDirStoppedTable has a row per log directory the broker's lines named as
// stopped: none on a healthy broker.
func logDirStoppedTable(snap *logstate.Snapshot) *exposition.Table {
	dirs := snap.LogDirs
	return &exposition.Table{
		Rows:   len(dirs),
		Labels: func(row int, values []string) { values[0], values[1] = idLabel(dirs[row].Broker), dirs[row].Path },
		Columns: []exposition.Column{
			{Family: logDirOfflineFamily, Value: func(row int) (float64, bool) { return b2f(dirs[row].Offline), true }},
		},
	}
}

// quorumNodeTable has a row per quorum node the lines named: one on a
// KRaft node's sidecar, none in ZooKeeper mode.
func quorumNodeTable(nodes []logstate.QuorumNode) *exposition.Table {
	counter := func(f *exposition.Family, v func(q *logstate.QuorumNode) uint64) exposition.Column {
		return exposition.Column{Family: f, Value: func(row int) (float64, bool) { return float64(v(&nodes[row])), true }}
	}
	return &exposition.Table{
		Rows:   len(nodes),
		Labels: func(row int, values []string) { values[0] = idLabel(nodes[row].Node) },
		Columns: []exposition.Column{
			counter(metadataLogElectionsFamily, func(q *logstate.QuorumNode) uint64 { return q.Elections }),
			counter(metadataLogFetchTimeoutsFamily, func(q *logstate.QuorumNode) uint64 { return q.FetchTimeouts }),
			counter(metadataLogResignationsFamily, func(q *logstate.QuorumNode) uint64 { return q.Resignations }),
			counter(metadataLogHWRegressionsFamily, func(q *logstate.QuorumNode) uint64 { return q.HWRegressions }),
			counter(metadataLogTruncationsFamily, func(q *logstate.QuorumNode) uint64 { return q.Truncations }),
		},
	}
}

// quorumTransitionTable has a row per quorum node and Raft state: every
// state is listed, so that a transition shows as a change from 0.
func quorumTransitionTable(nodes []logstate.QuorumNode) *exposition.Table {
	states := logparse.QuorumStates
	n := len(states)
	return &exposition.Table{
		Rows: len(nodes) * n,
		Labels: func(row int, values []string) {
			values[0], values[1] = idLabel(nodes[row/n].Node), states[row%n]
		},
		Columns: []exposition.Column{
			{Family: metadataLogTransitionsFamily, Value: func(row int) (float64, bool) { return float64(nodes[row/n].Transitions[row%n]), true }},
		},
	}
}

// fileErrorTable has a row per file and reason: every reason is listed, so
// that an error shows as a change from 0 rather than a new series.
func fileErrorTable(files []logstate.FileStats) *exposition.Table {
	reasons := tail.Reasons
	n := len(reasons)
	return &exposition.Table{
		Rows: len(files) * n,
		Labels: func(row int, values []string) {
			values[0], values[1] = files[row/n].Path, reasons[row%n]
		},
		Columns: []exposition.Column{
			{Family: fileErrorFamily, Value: func(row int) (float64, bool) { return b2f(files[row/n].Reason == reasons[row%n]), true }},
			{Family: fileErrorsFamily, Value: func(row int) (float64, bool) { return float64(files[row/n].Errors[reasons[row%n]]), true }},
		},
	}
}
