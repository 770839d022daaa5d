package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
)

// The share-group families (--collector.share-groups, internal/poller
// fetch_share_groups.go): the consumer groups' shape, with the
// share-partition start offset where a consumer group has its committed
// offset, and the brokers by whether they have share groups to list.
var (
	shareGroupsListedFamily = exposition.NewFamily("share_groups_listed",
		"Share groups that pass the share group filters, as their coordinators listed them in the last refresh (ListGroups).", exposition.Gauge)
	shareGroupsUnreadFamily = exposition.NewFamily("share_groups_unread",
		"Listed share groups whose start offsets the last refresh could not read, by reason.", exposition.Gauge, "reason").
		WithDoc("Reasons as for `kafka_replication_consumer_groups_unread`; those groups have no series. " +
			"Alert: `KafkaReplicationExporterConsumerGroupsUnread`.")
	shareGroupsBrokersFamily = exposition.NewFamily("share_groups_brokers",
		"Brokers by whether the last refresh could list their share groups.", exposition.Gauge, "state").
		WithDoc("States: `known` (listed), `unsupported` (no DescribeShareGroupOffsets — Kafka before 4.1 — or share.version 0: " +
			"share groups are off in the cluster; a state, not an error), `request_failed` (ApiVersions or ListGroups failed; " +
			"its groups have no series, counted in admin_request_errors_total).")
	shareGroupStarvedFamily = exposition.NewFamily("share_group_partitions_starved_by_replication",
		"Exported partitions on which the share group is caught up to the high watermark while the high watermark is stalled with records above it.",
		exposition.Gauge, "group").
		WithDoc("The per-group count of `kafka_replication_share_group_starved_by_replication`, exported with or without partition labels; " +
			"alert: `KafkaShareGroupStarvedByReplication`.")
)

// shareGroupPartitionColumns are the families per share group and exported
// partition (only with partition labels).
var shareGroupPartitionColumns = positionColumns("share_group", exposition.NewFamily("share_group_start_offset",
	"Share-partition start offset of the share group on the partition (DescribeShareGroupOffsets): its earliest record not yet acknowledged.",
	exposition.Gauge, groupPartitionLabels...),
	"start offset", "(its acknowledgements can fail to persist while __share_group_state is under min ISR too)")

// shareGroupFamilies are the share-group families of tables built per scrape.
var shareGroupFamilies = []*exposition.Family{
	shareGroupsListedFamily, shareGroupsUnreadFamily, shareGroupsBrokersFamily, shareGroupStarvedFamily,
}
