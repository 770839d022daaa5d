package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The admin half's families: what the poller's snapshot (internal/poller)
// exports. The ISR and leader epoch, which the log half exports too in
// log-only mode, are declared in families.go.

// refreshColumns are the refresh itself: one row, no labels.
var refreshColumns = []exposition.RowColumn[*poller.Snapshot]{
	column(exposition.NewFamily("up", "1 if the last Metadata request to Kafka succeeded, 0 if no broker answered.", exposition.Gauge),
		func(s *poller.Snapshot) (float64, bool) { return b2f(s.Up), true }),
	column(exposition.NewFamily("last_refresh_timestamp_seconds", "Unix time of the last successful admin API refresh (Metadata answered).",
		exposition.Gauge),
		func(s *poller.Snapshot) (float64, bool) { return unixSeconds(s.LastSuccess), !s.LastSuccess.IsZero() }),
	column(exposition.NewFamily("refresh_duration_seconds", "Wall time the last admin API refresh took (Metadata, DescribeConfigs, ListOffsets).",
		exposition.Gauge),
		func(s *poller.Snapshot) (float64, bool) { return s.Duration.Seconds(), true }),
	// Whether the sidecar knows which broker it runs beside: in leader scope
	// it exports no partition series until it does.
	column(exposition.NewFamily("broker_identified",
		"1 if this sidecar knows its own broker's id (--kafka.broker-id, the id its log lines name, or its --kafka.server among the advertised addresses), 0 if not.",
		exposition.Gauge).
		WithDoc("Leader scope only, where at 0 no partition series is exported: set `--kafka.broker-id` (alert `KafkaReplicationExporterBrokerUnidentified`)."),
		func(s *poller.Snapshot) (float64, bool) { return b2f(s.BrokerIdentified), s.LeaderScope }),
}

// The poller's counters and the per-topic and per-broker readings.
var (
	requestErrorsFamily = exposition.NewFamily("admin_request_errors_total", "Kafka admin requests that failed, by request.", exposition.Counter, "request")
	disagreementsFamily = exposition.NewFamily("partition_source_disagreements_total",
		"Times the admin API and this broker's logs reported different values for a partition field.",
		exposition.Counter, "field").
		WithDoc("Metadata against the log lines of the same partition; the fresher reading is the one exported.")
	topicMinISRFamily = exposition.NewFamily("topic_min_insync_replicas_config",
		"min.insync.replicas of the topic from DescribeConfigs (topic override, else the broker default).",
		exposition.Gauge, topicLabels...)
	topicInfoFamily = exposition.NewFamily("topic_info",
		"1 for each exported topic, labeled with the topic id Kafka's Metadata gives it: a topic deleted and re-created under its name has a new one.",
		exposition.Gauge, "topic", "topic_id").
		WithDoc("The shipped rules join it into the cluster-wide high watermark and leader epoch, so that a re-created topic is no loss and no flapping. " +
			"Absent for a topic whose Metadata carries no id (Kafka before 2.8, or `--kafka.version` below 2.8.0).")
	brokerResponsiveFamily = exposition.NewFamily("broker_responsive",
		"1 if the broker answered every admin request of the last refresh in time, 0 if one failed or went unanswered.",
		exposition.Gauge, "broker").
		WithDoc("In time: within the refresh's deadline, the smaller of --kafka.request-timeout and --kafka.refresh-interval; " +
			"each consumer-group request within a fifth of it (at least 1s) from when it is sent.")
)

// absentUnanswered is the README note of the families read from the leader's ListOffsets answer.
const absentUnanswered = "Absent when the leader did not answer the last refresh."

// partitionColumns are the per-partition families (labels partition,
// topic), each read straight from the snapshot's partition (ok false where
// it has no value), each with its per-topic form for
// --no-collector.partition-labels where one makes sense (leader, leader
// epoch, min ISR and last advance have none).
var partitionColumns = []exposition.RowColumn[*poller.Partition]{
	column(exposition.NewFamily("partition_replicas",
		"Assigned replicas of the partition (Metadata).",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Sum of assigned replicas over the topic's exported partitions (Metadata)."),
		func(p *poller.Partition) (float64, bool) { return float64(p.Replicas), true }),
	column(isrFamily, func(p *poller.Partition) (float64, bool) { return float64(p.ISR), true }),
	column(exposition.NewFamily("partition_under_replicated",
		"1 if the ISR is smaller than the replica set (Metadata).",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Number of the topic's exported partitions with ISR smaller than the replica set.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return b2f(p.UnderReplicated()), true }),
	column(exposition.NewFamily("partition_min_insync_replicas",
		"Effective min.insync.replicas of the partition: min(topic config from DescribeConfigs, replication factor).",
		exposition.Gauge, partitionLabels...),
		func(p *poller.Partition) (float64, bool) { return float64(p.MinISR), p.MinISR > 0 }),
	column(exposition.NewFamily("partition_under_min_isr",
		"1 if the ISR is below the effective min.insync.replicas: acks=all produce fails and the HW cannot advance.",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Number of the topic's exported partitions with ISR below the effective min.insync.replicas.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return b2f(p.UnderMinISR()), p.MinISR > 0 }),
	column(exposition.NewFamily("partition_at_min_isr",
		"1 if the ISR is exactly the effective min.insync.replicas while RF is larger: one more loss blocks acks=all.",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Number of the topic's exported partitions with ISR exactly at the effective min.insync.replicas while RF is larger.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return b2f(p.AtMinISR()), p.MinISR > 0 }),
	column(exposition.NewFamily("partition_isr_headroom",
		"ISR size minus effective min.insync.replicas (negative = under min ISR).",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Min, "Smallest ISR minus effective min.insync.replicas among the topic's exported partitions.").MarkDerived(),
		func(p *poller.Partition) (float64, bool) { return float64(p.ISR - p.MinISR), p.MinISR > 0 }),
	column(exposition.NewFamily("partition_leader",
		"Broker id of the partition leader from Metadata, -1 when the partition is offline.",
		exposition.Gauge, partitionLabels...),
		func(p *poller.Partition) (float64, bool) { return float64(p.Leader), true }),
	column(leaderEpochFamily, func(p *poller.Partition) (float64, bool) { return float64(p.LeaderEpoch), true }),
	column(exposition.NewFamily("partition_high_watermark",
		"High watermark of the partition (ListOffsets LATEST, read_uncommitted, sent to the leader).",
		exposition.Gauge, partitionLabels...).
		WithDoc(absentUnanswered).
		RollsUpAlways(exposition.Sum, "Sum of high watermarks over the topic's exported partitions whose leader answered."),
		func(p *poller.Partition) (float64, bool) { return float64(p.HW), p.HWKnown }),
	column(exposition.NewFamily("partition_high_watermark_last_advance_timestamp_seconds",
		"Unix time the poller last saw the high watermark change (ListOffsets LATEST), exported only while it is stalled.",
		exposition.Gauge, partitionLabels...).
		WithDoc("`time() -` it is how long consumers have seen nothing new."),
		func(p *poller.Partition) (float64, bool) { return unixSeconds(p.LastAdvance), p.Stalled }),
	column(exposition.NewFamily("partition_log_end_offset",
		"Log end offset of the partition's leader (ListOffsets LATEST with the debug replica id -2).",
		exposition.Gauge, partitionLabels...).
		WithDoc(absentUnanswered).
		RollsUpAlways(exposition.Sum, "Sum of leader log end offsets over the topic's exported partitions whose leader answered."),
		func(p *poller.Partition) (float64, bool) { return float64(p.LEO), p.LEOKnown }),
	column(exposition.NewFamily("partition_high_watermark_stalled",
		"1 if the LEO is ahead of the HW and no refresh for --stall.threshold saw the HW advance or catch up, whatever the ISR (KAFKA-15583).",
		exposition.Gauge, partitionLabels...).
		WithDoc(absentUnanswered).
		RollsUpAlways(exposition.Sum, "Number of the topic's exported partitions whose high watermark is stalled.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return b2f(p.Stalled), p.HWKnown && p.LEOKnown }),
	column(exposition.NewFamily("partition_high_watermark_regressions_total",
		"High watermark decreases seen between polls for the same topic id (a re-created topic does not count).",
		exposition.Counter, partitionLabels...).
		RollsUp(exposition.Sum, "Sum of high watermark decreases over the topic's exported partitions.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return float64(p.Regressions), true }),
	column(exposition.NewFamily("partition_eligible_leader_replicas",
		"Eligible leader replicas of the partition (KIP-966, DescribeTopicPartitions).",
		exposition.Gauge, partitionLabels...).
		WithDoc("Replicas outside the ISR that the controller can still elect without losing committed records; absent where the cluster has no ELR.").
		RollsUp(exposition.Sum, "Sum of eligible leader replicas over the topic's exported partitions (KIP-966).").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return float64(p.ELR), p.ELRKnown }),
	column(exposition.NewFamily("partition_last_known_eligible_leader_replicas",
		"Last-known eligible leader replicas of the partition (KIP-966, DescribeTopicPartitions).",
		exposition.Gauge, partitionLabels...).
		WithDoc("Replicas that were eligible until they stopped uncleanly, a recovery's last resort; absent where the cluster has no ELR.").
		RollsUp(exposition.Sum, "Sum of last-known eligible leader replicas over the topic's exported partitions (KIP-966).").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return float64(p.LastKnownELR), p.ELRKnown }),
	column(exposition.NewFamily("partition_reassigning",
		"1 while a reassignment of the partition is in progress (ListPartitionReassignments).",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Number of the topic's exported partitions with a reassignment in progress.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) { return b2f(p.Reassigning), p.ReassignmentKnown }),
	column(exposition.NewFamily("partition_under_replicated_by_reassignment",
		"1 if every replica missing from the partition's ISR is being added by a reassignment.",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Number of the topic's exported partitions whose only replicas missing from the ISR are being added by a reassignment.").MarkSparse(),
		func(p *poller.Partition) (float64, bool) {
			return b2f(p.UnderReplicatedByReassignment), p.ReassignmentKnown
		}),
	// Only while a reassignment runs: zero on almost every partition almost
	// always, they would double the series for nothing.
	column(exposition.NewFamily("partition_reassignment_adding_replicas",
		"Replicas the partition's reassignment is adding, exported only while one is in progress.",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Sum of replicas that the topic's reassignments in progress are adding."),
		func(p *poller.Partition) (float64, bool) { return float64(p.AddingReplicas), p.Reassigning }),
	column(exposition.NewFamily("partition_reassignment_removing_replicas",
		"Replicas the partition's reassignment is removing, exported only while one is in progress.",
		exposition.Gauge, partitionLabels...).
		RollsUp(exposition.Sum, "Sum of replicas that the topic's reassignments in progress are removing."),
		func(p *poller.Partition) (float64, bool) { return float64(p.RemovingReplicas), p.Reassigning }),
	// Tiered storage: only partitions of topics with remote.storage.enable=true
	// under --collector.tiered-storage have a value, so other topics have no
	// series.
	column(exposition.NewFamily("partition_tiered_offset",
		"Highest offset of the partition copied to remote storage (ListOffsets -5, LATEST_TIERED, sent to the leader); -1 while nothing is.",
		exposition.Gauge, partitionLabels...).
		WithDoc(tieringDoc),
		func(p *poller.Partition) (float64, bool) {
			return tieringValue(p, func(t *poller.PartitionTiering) (int64, bool) { return t.LatestTiered, t.Known() })
		}),
	column(exposition.NewFamily("partition_local_log_start_offset",
		"First offset of the partition still in the leader's local log (ListOffsets -4, EARLIEST_LOCAL): below it, records are in remote storage only.",
		exposition.Gauge, partitionLabels...).
		WithDoc(tieringDoc),
		func(p *poller.Partition) (float64, bool) {
			return tieringValue(p, func(t *poller.PartitionTiering) (int64, bool) { return t.LocalStart, t.Known() })
		}),
	column(exposition.NewFamily("partition_tiering_lag_offsets",
		"Offsets below the last stable offset (with --collector.last-stable-offset, else the high watermark) not yet in remote storage: "+
			"that bound minus partition_tiered_offset+1, at least 0; it includes the active segment, which is never copied and whose size the admin API does not tell.",
		exposition.Gauge, partitionLabels...).
		WithDoc(tieringDoc+" A healthy partition stays within a segment or a few (records per segment: segment.bytes over the record size); "+
			"it grows without bound when a stuck HW or LSO stops tiering (`partition_tiering_stalled`). See docs/tiering.md.").
		RollsUp(exposition.Sum, "Sum of offsets not yet in remote storage over the topic's exported tiered partitions."),
		func(p *poller.Partition) (float64, bool) {
			return tieringValue(p, func(t *poller.PartitionTiering) (int64, bool) { return t.Lag, t.LagKnown })
		}),
}

// tieringValue is a value of p's tiering; none for a partition without.
func tieringValue(p *poller.Partition, value func(*poller.PartitionTiering) (int64, bool)) (float64, bool) {
	if p.Tiering == nil {
		return 0, false
	}
	v, ok := value(p.Tiering)
	return float64(v), ok
}

// tieringDoc is the README note of the tiering families.
const tieringDoc = "With --collector.tiered-storage, for partitions of topics with remote.storage.enable=true only; " +
	"absent when the leader did not answer or is below Kafka 3.9 (`partitions_tiering_unknown`)."

// The per-partition families with one more label: no per-topic form.
var (
	replicaLagFamily = exposition.NewFamily("partition_replica_lag",
		"Leader LEO minus the follower's own LEO, in offsets.",
		exposition.Gauge, "partition", "replica", "topic").
		WithDoc("ListOffsets with the debug replica id -2 sent to each replica's broker; absent when either did not answer the last refresh.").MarkSparse()
	replicaOfflineFamily = exposition.NewFamily("partition_replica_offline",
		"1 for a replica that Metadata lists as offline while its broker is up: a log directory of that broker failed.",
		exposition.Gauge, "partition", "replica", "topic").
		WithDoc("Only offline replicas have the series; their `partition_replica_lag` is absent then. Alert: `KafkaReplicaLogDirOffline`.").
		RollsUp(exposition.Sum, "Number of the topic's exported partition replicas that Metadata lists as offline while their broker is up (a failed log directory).")
	stallCauseFamily = exposition.NewFamily("partition_high_watermark_stall_cause",
		"1 for the likely cause of a stalled high watermark, only for stalled partitions.",
		exposition.Gauge, "cause", "partition", "topic").
		WithDoc("Causes: `under_min_isr`; `isr_shrink_pending`, the leader logged a shrink the metadata does not show; `unknown`. " +
			"Never exported without partition labels.")
)

// brokerLogDirOfflineFamily is each log directory of the brokers this
// sidecar asks (fetch_logdirs.go), healthy ones at 0 so that an alert can
// name the failed one beside them.
var brokerLogDirOfflineFamily = exposition.NewFamily("broker_log_dir_offline",
	"1 if the broker answered DescribeLogDirs with KAFKA_STORAGE_ERROR for the log directory (a failed disk or mount), 0 if it is online.",
	exposition.Gauge, "broker", "dir").
	WithDoc("Leader scope: each sidecar asks its own broker only, so each broker's directories are exported once, by the sidecar beside it; " +
		"cluster scope: every broker. A broker that did not answer the last refresh has no series (its failure counts in " +
		"admin_request_errors_total{request=\"describe_log_dirs\"}). `--no-collector.log-dirs` turns the read off. Alert: `KafkaBrokerLogDirOffline`.")

// Admin answers that could not be used (internal/poller/answers.go): every
// one shows, so that an alert can fire on what the poller cannot see.
var (
	answerErrorsFamily = exposition.NewFamily("admin_answer_errors_total",
		"Resources of admin answers that could not be used (an error for the resource, a value that is not a positive integer, "+
			"a resource left out), by request and reason.", exposition.Counter, "reason", "request").
		WithDoc("Reasons: `authorization_failed`, `error`, `invalid_value`, `missing`. Requests: `describe_configs` (per topic), " +
			"`list_offsets`, `list_offsets_leo`, `list_offsets_lso`, `list_offsets_tiered` (per partition: its HW, LEO, LSO or tiering series is then absent; " +
			"alert `KafkaReplicationExporterOffsetsUnanswered`). A request that failed as a whole counts in admin_request_errors_total instead.")
	minISRUnknownFamily = exposition.NewFamily("topics_min_insync_replicas_unknown",
		"Exported topics whose min.insync.replicas is unknown, so their min ISR series are absent, by why their answer was unusable.",
		exposition.Gauge, "reason").
		WithDoc("Reasons as admin_answer_errors_total, plus `request_failed` (DescribeConfigs failed and no earlier value is known). " +
			"KafkaPartitionUnderMinISR and KafkaPartitionAtMinISR are blind for these topics.")
	minISRDefaultFamily = exposition.NewFamily("topics_min_insync_replicas_broker_default",
		"Exported topics whose own min.insync.replicas was unusable and that use the answering broker's default instead, by why.",
		exposition.Gauge, "reason").
		WithDoc("Right unless the topic has an override the exporter cannot read.")
	metadataRefusedFamily = exposition.NewFamily("admin_metadata_refused_total",
		"Metadata entries left out of a refresh, by reason, counted per refresh.", exposition.Counter, "reason").
		WithDoc("Reasons: `invalid_topic_name` (outside `[a-zA-Z0-9._-]{1,249}`, the log half's rule), `duplicate_topic`, `duplicate_partition`.")
)

// adminFamilies are the admin half's families outside its column tables
// (refreshColumns, partitionColumns), each the one column of a table built
// per scrape.
var adminFamilies = []*exposition.Family{
	requestErrorsFamily, disagreementsFamily, topicMinISRFamily, topicInfoFamily, brokerResponsiveFamily, brokerLogDirOfflineFamily,
	replicaLagFamily, replicaOfflineFamily, stallCauseFamily,
	answerErrorsFamily, minISRUnknownFamily, minISRDefaultFamily, metadataRefusedFamily,
}
