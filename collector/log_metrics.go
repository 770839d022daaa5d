package collector

import (
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

const namespace = "kafka_replication"

// counterDescs follow the c* indexes in store.go. Each HELP names the log line
// the counter comes from.
var counterHelp = [numCounters]struct{ name, help string }{
	cHWUpdates:              {"partition_high_watermark_updates_total", "Leader high-watermark advances, from 'High watermark updated from … to …' (kafka.cluster.Partition, DEBUG)."},
	cHWViolations:           {"partition_high_watermark_violations_total", "High-watermark decreases within one leadership (hw_monotonic invariant), from consecutive 'High watermark updated' lines (DEBUG)."},
	cHWBlocked:              {"partition_high_watermark_blocked_total", "HW increments refused while under min ISR, from 'Not increasing HWM because partition is under min ISR' (KAFKA-15583; TRACE, Kafka >= 3.7)."},
	cISRShrinks:             {"partition_isr_shrinks_total", "ISR shrinks: the leader's 'Shrinking ISR from … to …' line, or an 'ISR updated to …' line with fewer members than the ISR known before (kafka.cluster.Partition, INFO)."},
	cISRExpands:             {"partition_isr_expands_total", "Committed ISR expansions: an 'ISR updated to …' line with more members than the previous one (INFO), or 'Ignoring failed ISR update to PendingExpandIsr … since we have already updated state to …' for an expansion that reached the leader through metadata first (DEBUG; Kafka <= 2.7: 'Expanding ISR')."},
	cEpochRegressions:       {"partition_epoch_regressions_total", "ISR updates whose version / partition epoch did not increase (partition_epoch_monotonic invariant; INFO)."},
	cNotEnoughReplicas:      {"partition_produce_not_enough_replicas_total", "Produce requests rejected with NotEnoughReplicas: 'Error processing append operation' + NotEnoughReplicasException (kafka.server.ReplicaManager, ERROR)."},
	cTruncations:            {"partition_truncations_total", "Log truncations that removed data: 'Truncating to offset N' (UnifiedLog, INFO)."},
	cTruncationsBelowHW:     {"partition_truncations_below_high_watermark_total", "Truncations below this replica's last known high watermark, i.e. committed data lost (fetcher/UnifiedLog truncation lines checked against 'Log loaded … initial high watermark', leader/follower lines and HW updates)."},
	cUnclean:                {"partition_unclean_leader_elections_total", "Unclean leader elections, from controller.log 'UNCLEAN partition change' / 'Setting new leader … using an unclean election' (deduplicated across replays)."},
	cLeaderTransitions:      {"partition_leader_transitions_total", "This broker became leader: state-change.log 'Leader … starts at leader epoch' (INFO)."},
	cFollowerTransitions:    {"partition_follower_transitions_total", "This broker became follower: state-change.log 'Follower … starts at leader epoch' (INFO)."},
	cAlterPartitionFailures: {"partition_alter_partition_failures_total", "Failed ISR changes: 'Failed to alter partition' / 'Failed to update ISR' (kafka.cluster.Partition)."},
}

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

// LogCollector renders a Store.
type LogCollector struct {
	store *Store
	opts  LogMetricsOptions

	counters     [numCounters]*prometheus.Desc
	logHW        *prometheus.Desc
	isr          *prometheus.Desc
	epoch        *prometheus.Desc
	events       *prometheus.Desc
	lastEventTS  *prometheus.Desc
	partitionLbl []string

	// The headers of the per-partition (or per-topic) families for the
	// direct text path, indexed like logRenderer's families.
	text [numLogFamilies]*textFamily
}

// NewLogCollector builds the descriptors once.
func NewLogCollector(store *Store, opts LogMetricsOptions) *LogCollector {
	lbl := []string{"topic", "partition"}
	if !opts.PartitionLabels {
		lbl = []string{"topic"}
	}
	c := &LogCollector{store: store, opts: opts, partitionLbl: lbl}
	desc := func(i int, name, help string, counter bool) *prometheus.Desc {
		fq := prometheus.BuildFQName(namespace, "", name)
		c.text[i] = newTextFamily(fq, help, counter)
		return prometheus.NewDesc(fq, help, lbl, nil)
	}
	for i, h := range counterHelp {
		c.counters[i] = desc(i, h.name, h.help, true)
	}
	c.logHW = desc(lfLogHW, "partition_log_high_watermark",
		"Last high watermark this broker's log showed for the partition ('High watermark updated', 'Log loaded … initial high watermark', leader/follower lines).", false)
	c.isr = desc(lfISR, "partition_in_sync_replicas",
		"ISR size of a partition this broker leads, from its last 'ISR updated to …' or 'Leader … starts at leader epoch' line (log-only mode).", false)
	c.epoch = desc(lfEpoch, "partition_leader_epoch",
		"Leader epoch of a partition this broker leads, from state-change.log 'Leader … starts at leader epoch' (log-only mode).", false)
	c.events = prometheus.NewDesc(prometheus.BuildFQName(namespace, "log", "events_total"),
		"Log records that parsed to a replication event, by logparse event type.", []string{"type"}, nil)
	c.lastEventTS = prometheus.NewDesc(prometheus.BuildFQName(namespace, "log", "last_event_timestamp_seconds"),
		"Time of the last event of the type: the record's own timestamp, or the time it was read when the layout has none.", []string{"type"}, nil)
	return c
}

// Describe implements prometheus.Collector.
func (c *LogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.counters {
		ch <- d
	}
	ch <- c.logHW
	if c.opts.LeaderGauges {
		ch <- c.isr
		ch <- c.epoch
	}
	ch <- c.events
	ch <- c.lastEventTS
}

type partitionSnapshot struct {
	key PartitionKey
	p   logPartition
}

// Collect implements prometheus.Collector. It copies the state under the lock
// and renders outside it, so a scrape holds up event processing only for the copy.
func (c *LogCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.store
	s.mu.Lock()
	snap := make([]partitionSnapshot, 0, len(s.parts))
	for k, p := range s.parts {
		snap = append(snap, partitionSnapshot{k, *p})
	}
	events, lastEvent := s.events, s.lastEvent
	s.mu.Unlock()

	c.collectEvents(ch, &events, &lastEvent)
	if c.opts.PartitionLabels {
		c.collectPartitions(ch, snap)
	} else {
		c.collectTopics(ch, snap)
	}
}

func (c *LogCollector) collectEvents(ch chan<- prometheus.Metric, events *[256]uint64, lastEvent *[256]time.Time) {
	for _, t := range logparse.Types() {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(events[t]), t.String())
		if !lastEvent[t].IsZero() {
			ch <- prometheus.MustNewConstMetric(c.lastEventTS, prometheus.GaugeValue, unixSeconds(lastEvent[t]), t.String())
		}
	}
}

// SmallFamilies returns a prometheus.Collector of only the families the
// direct text path (WriteText with c as a TextSource) leaves out: the event
// totals and last-event times. Register it instead of c when c is written by
// WriteText, so that no family comes from both.
func (c *LogCollector) SmallFamilies() prometheus.Collector { return logEventsCollector{c} }

type logEventsCollector struct{ c *LogCollector }

func (e logEventsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- e.c.events
	ch <- e.c.lastEventTS
}

func (e logEventsCollector) Collect(ch chan<- prometheus.Metric) {
	s := e.c.store
	s.mu.Lock()
	events, lastEvent := s.events, s.lastEvent
	s.mu.Unlock()
	e.c.collectEvents(ch, &events, &lastEvent)
}

func (c *LogCollector) collectPartitions(ch chan<- prometheus.Metric, snap []partitionSnapshot) {
	// Emit in the order the registry sorts series in (label values by label
	// name: partition as a string, then topic), so its sort finds a sorted
	// family: that sort was the largest cost of a 10k-partition scrape.
	parts := make([]string, len(snap))
	for i := range snap {
		parts[i] = snap[i].p.labels[0].GetValue() // the "partition" label, formatted once per partition
	}
	order := make([]int, len(snap))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		pa, pb := parts[order[a]], parts[order[b]]
		if pa != pb {
			return pa < pb
		}
		return snap[order[a]].key.Topic < snap[order[b]].key.Topic
	})
	var arena metricArena
	for _, i := range order {
		p := &snap[i].p
		for j, d := range c.counters {
			ch <- arena.next(d, p.labels, float64(p.counters[j]), prometheus.CounterValue)
		}
		if p.hasHW {
			ch <- arena.next(c.logHW, p.labels, float64(p.hw), prometheus.GaugeValue)
		}
		if c.opts.LeaderGauges && p.leader {
			if !p.isrAt.IsZero() {
				ch <- arena.next(c.isr, p.labels, float64(p.isrSize), prometheus.GaugeValue)
			}
			if p.leaderEpoch >= 0 {
				ch <- arena.next(c.epoch, p.labels, float64(p.leaderEpoch), prometheus.GaugeValue)
			}
		}
	}
}

// collectTopics is the per-topic rollup: counters and HWs are summed over the
// topic's partitions; the leader-only gauges have no meaningful sum and are left out.
func (c *LogCollector) collectTopics(ch chan<- prometheus.Metric, snap []partitionSnapshot) {
	sums := make(map[string]*logRow)
	for i := range snap {
		k := snap[i].key
		t := sums[k.Topic]
		if t == nil {
			t = &logRow{topic: k.Topic}
			sums[k.Topic] = t
		}
		t.add(&snap[i].p)
	}
	topics := make([]string, 0, len(sums))
	for t := range sums {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		t := sums[topic]
		for j, d := range c.counters {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(t.counters[j]), topic)
		}
		if t.hasHW {
			ch <- prometheus.MustNewConstMetric(c.logHW, prometheus.GaugeValue, float64(t.hw), topic)
		}
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// appendInt formats a partition number without fmt's allocations.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
