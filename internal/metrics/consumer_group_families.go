package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The consumer-side families: the consumer groups (--collector.consumer-groups,
// internal/poller fetch_groups.go), read in consumer_group_metrics.go, and
// the last stable offset (--collector.last-stable-offset, fetch_lso.go and
// build_lso.go).

// groupPartitionLabels label the per group and partition families.
var groupPartitionLabels = []string{"group", "partition", "topic"}

// The read itself: the groups listed, and those of them left unread.
var (
	groupsListedFamily = exposition.NewFamily("consumer_groups_listed",
		"Consumer groups that pass the group filters, as their coordinators listed them in the last refresh (ListGroups).", exposition.Gauge)
	groupsUnreadFamily = exposition.NewFamily("consumer_groups_unread",
		"Listed consumer groups whose committed offsets the last refresh could not read, by reason.", exposition.Gauge, "reason").
		WithDoc("Reasons: `error_code` (the coordinator answered the group with an error, such as COORDINATOR_LOAD_IN_PROGRESS), " +
			"`no_answer` (its request went unanswered in time or failed), `refresh_ended` (the refresh ended before it was read). " +
			"Those groups have no series. Alert: `KafkaReplicationExporterConsumerGroupsUnread`.")
)

// Per group, with or without partition labels.
var (
	groupStateFamily = exposition.NewFamily("consumer_group_state",
		"1 for the consumer group's state as its coordinator reports it (DescribeGroups).", exposition.Gauge, "group", "state").
		WithDoc("States as Kafka spells them: `Stable`, `Empty`, `PreparingRebalance`, `CompletingRebalance`, `Assigning`, " +
			"`Reconciling`, `Dead`; `Unknown` when neither DescribeGroups nor, for a KIP-848 group, ConsumerGroupDescribe answered for it.")
	groupMembersFamily = exposition.NewFamily("consumer_group_members",
		"Members of the consumer group (DescribeGroups, or ConsumerGroupDescribe for a KIP-848 group).", exposition.Gauge, "group").
		WithDoc("Absent while the group's state is `Unknown`.")
	groupStarvedFamily = exposition.NewFamily("consumer_group_partitions_starved_by_replication",
		"Exported partitions on which the group is caught up to the high watermark while the high watermark is stalled with records above it.",
		exposition.Gauge, "group").
		WithDoc("The per-group count of `kafka_replication_consumer_group_starved_by_replication`, exported with or without partition labels; the alert reads it.")
)

// groupPartitionRow is one group's position on one partition.
type groupPartitionRow struct {
	group string
	p     *poller.GroupPartition
}

// groupPartitionColumns are the families per consumer group and exported
// partition (only with partition labels).
var groupPartitionColumns = positionColumns("consumer_group", exposition.NewFamily("consumer_group_committed_offset",
	"Offset the consumer group committed on the partition (OffsetFetch).", exposition.Gauge, groupPartitionLabels...),
	"committed offset", "(the group's last commits can fail while the offsets topic is under min ISR too)")

// positionColumns are the families per group of a kind (prefix
// consumer_group, share_group) and exported partition: its offset (named
// offsetName in HELP) and, split against the HW, the consumer's and
// replication's shares of its lag; why names why a group's offset can trail
// the HW it has read up to.
func positionColumns(prefix string, offset *exposition.Family, offsetName, why string) []exposition.RowColumn[groupPartitionRow] {
	return []exposition.RowColumn[groupPartitionRow]{
		column(offset, func(r groupPartitionRow) (float64, bool) { return float64(r.p.Committed), true }),
		column(exposition.NewFamily(prefix+"_lag_to_high_watermark",
			"High watermark minus the group's "+offsetName+", never negative: records the group could read and has not (the consumer's share of the lag).",
			exposition.Gauge, groupPartitionLabels...).WithDoc(absentUnanswered),
			func(r groupPartitionRow) (float64, bool) { return float64(r.p.LagToHW), r.p.HWKnown }),
		column(exposition.NewFamily(prefix+"_records_above_high_watermark",
			"Leader log end offset minus high watermark: records written that no consumer of the group can read yet (replication's share of the lag).",
			exposition.Gauge, groupPartitionLabels...).WithDoc(absentUnanswered),
			func(r groupPartitionRow) (float64, bool) { return float64(r.p.AboveHW), r.p.AboveHWKnown }),
		column(exposition.NewFamily(prefix+"_starved_by_replication",
			"1 if the group is caught up to the high watermark while the partition's high watermark is stalled with records above it (KAFKA-15583).",
			exposition.Gauge, groupPartitionLabels...).
			WithDoc("Decided with `kafka_replication_partition_high_watermark_stalled`. Caught up: the "+offsetName+" is at the HW, within its last advance, "+
				"or passed by the HW at most --kafka.refresh-interval plus 10s before that advance was read "+
				why+". Absent when the leader's HW or LEO did not answer the last refresh.").
			MarkSparse(),
			func(r groupPartitionRow) (float64, bool) {
				return b2f(r.p.StarvedByReplication), r.p.AboveHWKnown
			}),
		column(exposition.NewFamily(prefix+"_lag_seconds",
			"Age of the oldest record the group can read and has not: seconds since the high watermark passed the group's "+offsetName+", "+
				"from the exporter's own high watermark readings; 0 when caught up.",
			exposition.Gauge, groupPartitionLabels...).
			WithDoc("Interpolated between up to 24 distinct high watermarks read, thinned as they age; see the README for its error bounds."),
			func(r groupPartitionRow) (float64, bool) { return r.p.LagSeconds, r.p.LagSecondsKnown }),
	}
}

// stableOffsetColumns are the per-partition LSO families, read only with
// --collector.last-stable-offset: the LSO, how long read_committed consumers
// have been held back, and whether that is longer than any transaction
// should last.
var stableOffsetColumns = []exposition.RowColumn[*poller.StableOffset]{
	column(exposition.NewFamily("partition_last_stable_offset",
		"Last stable offset of the partition (ListOffsets LATEST, read_committed, sent to the leader): how far read_committed consumers can read.",
		exposition.Gauge, partitionLabels...).
		WithDoc("With --collector.last-stable-offset; absent when the leader did not answer the last refresh. Below the high watermark while a transaction is open."),
		func(o *poller.StableOffset) (float64, bool) { return float64(o.LSO), true }),
	column(exposition.NewFamily("partition_last_stable_offset_lag_seconds",
		"Seconds since the high watermark passed the last stable offset: how long read_committed consumers have been held back "+
			"by the oldest open transaction; 0 when the LSO is at the high watermark.",
		exposition.Gauge, partitionLabels...).
		WithDoc("With --collector.last-stable-offset, from the exporter's own high watermark readings (as `consumer_group_lag_seconds`); "+
			"absent when the leader did not answer the LSO or the HW in the last refresh."),
		func(o *poller.StableOffset) (float64, bool) { return o.LagSeconds, o.HWKnown }),
	column(exposition.NewFamily("partition_last_stable_offset_stalled",
		"1 if the last stable offset has stood below the high watermark for --collector.last-stable-offset.stall-threshold: "+
			"a transaction open that long (hanging) holds read_committed consumers back.",
		exposition.Gauge, partitionLabels...).
		WithDoc("With --collector.last-stable-offset. Alert: `KafkaPartitionTransactionHanging`.").
		RollsUp(exposition.Sum, "Number of the topic's exported partitions whose last stable offset is stalled (a hanging transaction).").MarkSparse(),
		func(o *poller.StableOffset) (float64, bool) { return b2f(o.Stalled), o.HWKnown }),
}

// consumerGroupFamilies are the consumer-group families outside the column
// tables above, each the column of a table built per scrape.
var consumerGroupFamilies = []*exposition.Family{
	groupsListedFamily, groupsUnreadFamily, groupStateFamily, groupMembersFamily, groupStarvedFamily,
}
