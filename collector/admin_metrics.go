package collector

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// adminPrefix is the metric namespace, shared with the log metrics.
const adminPrefix = "kafka_replication_"

// AdminSnapshots is where the admin families come from: *admin.Poller, whose
// last refresh they render.
type AdminSnapshots interface {
	Snapshot() *admin.Snapshot
}

// AdminCollector renders the admin poller's last snapshot. It never waits
// on Kafka: the poller refreshes in the background.
type AdminCollector struct {
	src   AdminSnapshots
	descs adminDescs
}

var _ prometheus.Collector = (*AdminCollector)(nil)

// NewAdminCollector renders src per partition, or without partitionLabels
// as per-topic rollups.
func NewAdminCollector(src AdminSnapshots, partitionLabels bool) *AdminCollector {
	return &AdminCollector{src: src, descs: newAdminDescs(partitionLabels)}
}

// adminDescs are the admin-derived metric descriptors. Without partition
// labels (--no-collector.partition-labels) the partition series become
// per-topic rollups with the same names, the `partition` label dropped and
// a HELP that says how they were aggregated; leader, leader epoch, replica
// lag, effective min ISR, last-advance and stall cause have no meaningful
// rollup and are left out.
type adminDescs struct {
	partitionLabels bool

	up, lastRefresh, duration, requestErrors, disagreements, topicMinISR, brokerResponsive *prometheus.Desc

	replicas, isr, minISR, underReplicated, underMinISR, atMinISR, headroom          *prometheus.Desc
	leader, leaderEpoch, hw, leo, lag, stalled, stallCause, lastAdvance, regressions *prometheus.Desc

	elr, lastKnownELR                                        *prometheus.Desc
	reassigning, reassignAdding, reassignRemoving, urpByMove *prometheus.Desc

	// text holds the headers of the per-partition (or per-topic) families
	// for the direct text path (admin_text.go).
	text map[*prometheus.Desc]*textFamily
}

func newAdminDescs(partitionLabels bool) adminDescs {
	d := adminDescs{partitionLabels: partitionLabels, text: make(map[*prometheus.Desc]*textFamily)}
	plain := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(adminPrefix+name, help, labels, nil)
	}
	// big is a per-partition or per-topic family: the direct text path
	// writes it. Of those, only the _total one is a counter.
	big := func(name, help string, labels ...string) *prometheus.Desc {
		desc := plain(name, help, labels...)
		d.text[desc] = newTextFamily(adminPrefix+name, help, strings.HasSuffix(name, "_total"))
		return desc
	}
	d.up = plain("up", "1 if the last Metadata request to Kafka succeeded, 0 if no broker answered.")
	d.lastRefresh = plain("last_refresh_timestamp_seconds", "Unix time of the last successful admin API refresh (Metadata answered).")
	d.duration = plain("refresh_duration_seconds", "Wall time the last admin API refresh took (Metadata, DescribeConfigs, ListOffsets).")
	d.requestErrors = plain("admin_request_errors_total", "Kafka admin requests that failed, by request.", "request")
	d.disagreements = plain("partition_source_disagreements_total",
		"Times the admin API (Metadata) and this broker's logs reported different values for a partition field; the fresher reading is exported.", "field")
	d.topicMinISR = plain("topic_min_insync_replicas_config", "min.insync.replicas of the topic from DescribeConfigs (topic override, else the broker default).", "topic")
	d.brokerResponsive = plain("broker_responsive",
		"1 if the broker answered every admin request the last refresh sent it within the refresh's time (min of --kafka.request-timeout and --kafka.refresh-interval), 0 if one failed or went unanswered.", "broker")

	if !partitionLabels {
		rollup := func(name, help string) *prometheus.Desc {
			return big(name, help+" Per-topic rollup over the exported partitions (partition labels disabled).", "topic")
		}
		d.replicas = rollup("partition_replicas", "Sum of assigned replicas (Metadata).")
		d.isr = rollup("partition_in_sync_replicas", "Sum of in-sync replicas (Metadata joined with this broker's logs: the fresher wins).")
		d.underReplicated = rollup("partition_under_replicated", "Number of partitions with ISR smaller than the replica set.")
		d.underMinISR = rollup("partition_under_min_isr", "Number of partitions with ISR below the effective min.insync.replicas (min(config, RF)).")
		d.atMinISR = rollup("partition_at_min_isr", "Number of partitions with ISR exactly at the effective min.insync.replicas while RF is larger.")
		d.headroom = rollup("partition_isr_headroom", "Smallest ISR minus effective min.insync.replicas among partitions.")
		d.hw = rollup("partition_high_watermark", "Sum of high watermarks (ListOffsets LATEST, read_uncommitted, sent to the leader) of the partitions whose leader answered.")
		d.leo = rollup("partition_log_end_offset", "Sum of leader log end offsets (ListOffsets LATEST with replica id -2, sent to the leader) of the partitions whose leader answered.")
		d.stalled = rollup("partition_high_watermark_stalled", "Number of partitions whose HW stayed behind the LEO without advancing for at least --stall.threshold (the stall cause is per partition only).")
		d.regressions = rollup("partition_high_watermark_regressions_total", "Sum over partitions of high watermark decreases seen between polls for the same topic id.")
		d.elr = rollup("partition_eligible_leader_replicas", "Sum of eligible leader replicas (KIP-966, DescribeTopicPartitions).")
		d.lastKnownELR = rollup("partition_last_known_eligible_leader_replicas", "Sum of last-known eligible leader replicas (KIP-966, DescribeTopicPartitions).")
		d.reassigning = rollup("partition_reassigning", "Number of partitions with a reassignment in progress (ListPartitionReassignments).")
		d.reassignAdding = rollup("partition_reassignment_adding_replicas", "Sum of replicas that reassignments in progress are adding.")
		d.reassignRemoving = rollup("partition_reassignment_removing_replicas", "Sum of replicas that reassignments in progress are removing.")
		d.urpByMove = rollup("partition_under_replicated_by_reassignment", "Number of partitions whose only replicas missing from the ISR are being added by a reassignment.")
		return d
	}

	part := func(name, help string, extra ...string) *prometheus.Desc {
		return big(name, help, append([]string{"topic", "partition"}, extra...)...)
	}
	d.replicas = part("partition_replicas", "Assigned replicas of the partition (Metadata).")
	d.isr = part("partition_in_sync_replicas", "In-sync replicas of the partition (Metadata joined with this broker's logs: the fresher wins).")
	d.minISR = part("partition_min_insync_replicas", "Effective min.insync.replicas of the partition: min(topic config from DescribeConfigs, replication factor).")
	d.underReplicated = part("partition_under_replicated", "1 if the ISR is smaller than the replica set (Metadata).")
	d.underMinISR = part("partition_under_min_isr", "1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.")
	d.atMinISR = part("partition_at_min_isr", "1 if the ISR is exactly the effective min.insync.replicas while RF is larger: one more loss blocks acks=all.")
	d.headroom = part("partition_isr_headroom", "ISR size minus effective min.insync.replicas (negative = under min ISR).")
	d.leader = part("partition_leader", "Broker id of the partition leader from Metadata; -1 = offline (no leader).")
	d.leaderEpoch = part("partition_leader_epoch", "Leader epoch of the partition (Metadata joined with this broker's logs: the fresher wins).")
	d.hw = part("partition_high_watermark", "High watermark: ListOffsets LATEST (read_uncommitted) sent to the leader; absent when the leader did not answer the last refresh.")
	d.leo = part("partition_log_end_offset", "Leader log end offset: ListOffsets LATEST with replica id -2 (debug) sent to the leader; absent when the leader did not answer the last refresh.")
	d.lag = part("partition_replica_lag", "Leader LEO minus the follower's own LEO (ListOffsets with replica id -2 sent to each replica's broker), in offsets; absent when either did not answer the last refresh.", "replica")
	d.stalled = part("partition_high_watermark_stalled",
		"1 if the LEO is ahead of the HW and no refresh for --stall.threshold saw the HW advance or catch up, whatever the ISR (KAFKA-15583); absent when the leader did not answer the last refresh.")
	d.stallCause = part("partition_high_watermark_stall_cause",
		"1 for the likely cause of a stalled HW (under_min_isr, isr_shrink_pending: the leader logged a shrink the metadata does not show, unknown), only for stalled partitions and never without partition labels.", "cause")
	d.lastAdvance = part("partition_high_watermark_last_advance_timestamp_seconds", "Unix time the poller last saw the high watermark change (ListOffsets LATEST); absent when the leader did not answer the last refresh.")
	d.regressions = part("partition_high_watermark_regressions_total", "High watermark decreases seen between polls for the same topic id (a re-created topic does not count).")
	d.elr = part("partition_eligible_leader_replicas", "Eligible leader replicas (KIP-966): replicas outside the ISR that the controller can still elect without losing committed records; absent where the cluster has no ELR.")
	d.lastKnownELR = part("partition_last_known_eligible_leader_replicas", "Last-known eligible leader replicas (KIP-966): replicas that were eligible until they stopped uncleanly, a recovery's last resort; absent where the cluster has no ELR.")
	d.reassigning = part("partition_reassigning", "1 while a reassignment of the partition is in progress (ListPartitionReassignments).")
	d.reassignAdding = part("partition_reassignment_adding_replicas", "Replicas the partition's reassignment is adding, exported only while one is in progress.")
	d.reassignRemoving = part("partition_reassignment_removing_replicas", "Replicas the partition's reassignment is removing, exported only while one is in progress.")
	d.urpByMove = part("partition_under_replicated_by_reassignment", "1 if the partition is under-replicated only because a reassignment is adding replicas: every replica missing from the ISR is being added.")
	return d
}

// Describe implements prometheus.Collector.
func (a *AdminCollector) Describe(ch chan<- *prometheus.Desc) {
	a.describeSmall(ch)
	d := &a.descs
	for _, desc := range []*prometheus.Desc{
		d.replicas, d.isr, d.minISR, d.underReplicated, d.underMinISR, d.atMinISR, d.headroom,
		d.leader, d.leaderEpoch, d.hw, d.leo, d.lag, d.stalled, d.stallCause, d.lastAdvance, d.regressions,
		d.elr, d.lastKnownELR, d.reassigning, d.reassignAdding, d.reassignRemoving, d.urpByMove,
	} {
		if desc != nil {
			ch <- desc
		}
	}
}

func (a *AdminCollector) describeSmall(ch chan<- *prometheus.Desc) {
	d := &a.descs
	for _, desc := range []*prometheus.Desc{d.up, d.lastRefresh, d.duration, d.requestErrors, d.disagreements, d.topicMinISR, d.brokerResponsive} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector. It renders the last snapshot only.
func (a *AdminCollector) Collect(ch chan<- prometheus.Metric) {
	s := a.src.Snapshot()
	a.collectSmall(ch, s)
	if a.descs.partitionLabels {
		var ids idStrings
		a.collectPartitions(ch, seriesOrder(nil, s, &ids))
		return
	}
	for i := range s.Topics {
		a.collectRollup(ch, &s.Topics[i])
	}
}

// orderedPartition is a partition with its id formatted as a label value.
type orderedPartition struct {
	*admin.Partition
	id string
}

// seriesOrder appends the snapshot's partitions to dst in the order
// Prometheus sorts their series: label values compared as strings,
// partition, then topic. Written in that order, the registry's sort is
// linear and the direct text path needs none.
func seriesOrder(dst []orderedPartition, s *admin.Snapshot, ids *idStrings) []orderedPartition {
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
				out = append(out, orderedPartition{p, ids.get(p.Partition)})
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
	slices.SortFunc(present, func(x, y int32) int { return strings.Compare(ids.get(x), ids.get(y)) })
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
			out[*k] = orderedPartition{p, ids.get(p.Partition)}
			*k++
		}
	}
	return out
}

// SmallFamilies returns a prometheus.Collector of only the families the
// direct text path (WriteText with a as a TextSource) leaves out: up, the
// refresh time and duration, the request error and disagreement counters,
// the topics' min.insync.replicas and the brokers' responsiveness. Register it instead of a when a is written
// by WriteText, so that no family comes from both.
func (a *AdminCollector) SmallFamilies() prometheus.Collector { return adminSmall{a} }

type adminSmall struct{ a *AdminCollector }

func (s adminSmall) Describe(ch chan<- *prometheus.Desc) { s.a.describeSmall(ch) }
func (s adminSmall) Collect(ch chan<- prometheus.Metric) { s.a.collectSmall(ch, s.a.src.Snapshot()) }

func (a *AdminCollector) collectSmall(ch chan<- prometheus.Metric, s *admin.Snapshot) {
	d := &a.descs
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	counter := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}

	gauge(d.up, b2f(s.Up))
	if !s.LastSuccess.IsZero() {
		gauge(d.lastRefresh, float64(s.LastSuccess.UnixNano())/1e9)
	}
	gauge(d.duration, s.Duration.Seconds())
	for r, n := range s.RequestErrors {
		counter(d.requestErrors, float64(n), admin.Request(r).String())
	}
	for f, n := range s.Disagreements {
		counter(d.disagreements, float64(n), admin.Field(f).String())
	}
	for i := range s.Topics {
		if t := &s.Topics[i]; t.MinISRConfig > 0 {
			gauge(d.topicMinISR, float64(t.MinISRConfig), t.Name)
		}
	}
	for _, b := range s.Brokers {
		gauge(d.brokerResponsive, b2f(b.Responsive), strconv.FormatInt(int64(b.ID), 10))
	}
}

// collectPartitions sends the per-partition series. The label pairs of a
// partition are built once, from chunks, and shared by its series, and the
// metrics come from a per-scrape arena, because prometheus.MustNewConstMetric
// rebuilds the pairs of every series.
func (a *AdminCollector) collectPartitions(ch chan<- prometheus.Metric, ordered []orderedPartition) {
	d := &a.descs
	var (
		arena metricArena
		pairs pairArena
		ids   idStrings
	)
	for k := range ordered {
		p := &ordered[k]
		labels := pairs.next(&labelPartition, &p.id, &labelTopic, &p.Topic)
		gauge := func(desc *prometheus.Desc, v float64) {
			ch <- arena.next(desc, labels, v, prometheus.GaugeValue)
		}
		gauge(d.replicas, float64(p.Replicas))
		gauge(d.isr, float64(p.ISR))
		gauge(d.underReplicated, b2f(p.UnderReplicated()))
		if p.MinISR > 0 {
			gauge(d.minISR, float64(p.MinISR))
			gauge(d.underMinISR, b2f(p.UnderMinISR()))
			gauge(d.atMinISR, b2f(p.AtMinISR()))
			gauge(d.headroom, float64(p.ISR-p.MinISR))
		}
		gauge(d.leader, float64(p.Leader))
		gauge(d.leaderEpoch, float64(p.LeaderEpoch))
		if p.HWKnown {
			gauge(d.hw, float64(p.HW))
			gauge(d.lastAdvance, float64(p.LastAdvance.UnixNano())/1e9)
		}
		if p.LEOKnown {
			gauge(d.leo, float64(p.LEO))
		}
		for i := range p.Lags {
			l := &p.Lags[i]
			replica := ids.get(l.Replica)
			lagLabels := pairs.next(&labelPartition, &p.id, &labelReplica, &replica, &labelTopic, &p.Topic)
			ch <- arena.next(d.lag, lagLabels, float64(l.Lag), prometheus.GaugeValue)
		}
		if p.StallKnown() {
			gauge(d.stalled, b2f(p.Stalled))
		}
		if p.Stalled {
			cause := p.StallCause.String()
			ch <- arena.next(d.stallCause, pairs.next(&labelCause, &cause, &labelPartition, &p.id, &labelTopic, &p.Topic), 1, prometheus.GaugeValue)
		}
		ch <- arena.next(d.regressions, labels, float64(p.Regressions), prometheus.CounterValue)
		if p.ELRKnown {
			gauge(d.elr, float64(p.ELR))
			gauge(d.lastKnownELR, float64(p.LastKnownELR))
		}
		if p.ReassignmentKnown {
			gauge(d.reassigning, b2f(p.Reassigning))
			gauge(d.urpByMove, b2f(p.UnderReplicatedByReassignment))
		}
		// Zero on almost every partition almost always: at 100k partitions,
		// two families of zeros would be 200k series.
		if p.Reassigning {
			gauge(d.reassignAdding, float64(p.AddingReplicas))
			gauge(d.reassignRemoving, float64(p.RemovingReplicas))
		}
	}
}

// Label names of the Collect path's pairs (pointed to, never modified).
var labelCause, labelPartition, labelReplica, labelTopic = "cause", "partition", "replica", "topic"

// pairArena hands out label pairs from chunks that are never reallocated.
// The pairs point at strings that are never modified.
type pairArena struct {
	pairs []dto.LabelPair
	ptrs  []*dto.LabelPair
}

// next returns the pairs of nameValues (name, value, name, value, …), which
// callers pass sorted by name.
func (a *pairArena) next(nameValues ...*string) []*dto.LabelPair {
	n := len(nameValues) / 2
	if len(a.pairs)+n > cap(a.pairs) {
		a.pairs = make([]dto.LabelPair, 0, 4096)
	}
	if len(a.ptrs)+n > cap(a.ptrs) {
		a.ptrs = make([]*dto.LabelPair, 0, 4096)
	}
	start := len(a.ptrs)
	for i := 0; i < n; i++ {
		a.pairs = append(a.pairs, dto.LabelPair{Name: nameValues[2*i], Value: nameValues[2*i+1]})
		a.ptrs = append(a.ptrs, &a.pairs[len(a.pairs)-1])
	}
	return a.ptrs[start:len(a.ptrs):len(a.ptrs)]
}

// snapshotMetric is a prometheus.Metric over label pairs built once per
// Collect. The pairs are shared and never modified (they are sorted by name
// already, so the registry does not copy them).
type snapshotMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	kind   prometheus.ValueType
}

func (m *snapshotMetric) Desc() *prometheus.Desc { return m.desc }

func (m *snapshotMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	v := m.value
	if m.kind == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &v}
	} else {
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}

// metricArena hands out snapshotMetrics from chunks that are never
// reallocated, so a pointer already sent stays valid for the whole scrape.
type metricArena struct{ chunk []snapshotMetric }

func (a *metricArena) next(desc *prometheus.Desc, labels []*dto.LabelPair, v float64, kind prometheus.ValueType) *snapshotMetric {
	if len(a.chunk) == cap(a.chunk) {
		a.chunk = make([]snapshotMetric, 0, 4096)
	}
	a.chunk = append(a.chunk, snapshotMetric{desc: desc, labels: labels, value: v, kind: kind})
	return &a.chunk[len(a.chunk)-1]
}

// labelPairs returns name/value pairs; callers pass them sorted by name.
func labelPairs(nameValues ...string) []*dto.LabelPair {
	out := make([]*dto.LabelPair, 0, len(nameValues)/2)
	for i := 0; i+1 < len(nameValues); i += 2 {
		out = append(out, &dto.LabelPair{Name: &nameValues[i], Value: &nameValues[i+1]})
	}
	return out
}

func (a *AdminCollector) collectRollup(ch chan<- prometheus.Metric, t *admin.Topic) {
	d := &a.descs
	r := rollupOf(t) // the sums the direct text path renders too
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, t.Name)
	}
	gauge(d.replicas, float64(r.replicas))
	gauge(d.isr, float64(r.isr))
	gauge(d.underReplicated, float64(r.under))
	if r.minISRKnown {
		gauge(d.underMinISR, float64(r.underMin))
		gauge(d.atMinISR, float64(r.atMin))
	}
	if r.haveHeadroom {
		gauge(d.headroom, float64(r.headroom))
	}
	gauge(d.hw, float64(r.hw))
	gauge(d.leo, float64(r.leo))
	gauge(d.stalled, float64(r.stalled))
	ch <- prometheus.MustNewConstMetric(d.regressions, prometheus.CounterValue, float64(r.regressions), t.Name)
	if r.elrKnown {
		gauge(d.elr, float64(r.elr))
		gauge(d.lastKnownELR, float64(r.lastKnownELR))
	}
	if r.reassignKnown {
		gauge(d.reassigning, float64(r.reassigning))
		gauge(d.reassignAdding, float64(r.adding))
		gauge(d.reassignRemoving, float64(r.removing))
		gauge(d.urpByMove, float64(r.urpByMove))
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
