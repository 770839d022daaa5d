package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// partitionSel selects the chosen partitions of one topic on every broker:
// admin series follow the leader from sidecar to sidecar, so the panels merge
// them with max by (partition) instead of filtering on instance.
var partitionSel = join(clusterMatcher, topicMatcher, partitionMatcher)

// Topic is "Kafka / Replication / Topic": the per-partition drill-down the
// overview's partition table links to.
func Topic() *dashboard.DashboardBuilder {
	perPartition := func(metric string) string {
		return fmt.Sprintf(`max by (partition) (%s{%s})`, metric, partitionSel)
	}
	// A sparse family has no series for a healthy partition: 0 there.
	zeroByPartition := " or 0 * " + perPartition("kafka_replication_partition_replicas")
	perPartitionSparse := func(metric string) string { return perPartition(metric) + zeroByPartition }
	return withDefaults(dashboard.NewDashboardBuilder("Kafka / Replication / Topic").
		Uid("kafka-replication-topic").
		Description("Per-partition replication state of one Kafka topic from kafka_replication_exporter.")).
		WithVariable(datasourceVariable()).
		WithVariable(clusterVariable()).
		WithVariable(topicVariable(false)).
		WithVariable(partitionVariable()).
		Link(dashboard.NewDashboardLinkBuilder("Overview").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"kafka-replication"}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		WithPanel(partitionTable("Partitions",
			"Current state of each partition. Min ISR is the effective value, min(min.insync.replicas, replication factor); ELR are the clean leader candidates outside the ISR (KIP-966, empty on 3.x); LEO − HW is what consumers cannot read yet.",
			10, "partition",
			column{"Leader", perPartition("kafka_replication_partition_leader")},
			column{"Leader epoch", perPartition("kafka_replication_partition_leader_epoch")},
			column{"Replicas", perPartition("kafka_replication_partition_replicas")},
			column{"ISR", perPartition("kafka_replication_partition_in_sync_replicas")},
			column{"Min ISR", perPartition("kafka_replication_partition_min_insync_replicas")},
			column{"ELR", perPartitionSparse("kafka_replication_partition_eligible_leader_replicas")},
			column{"Reassigning", perPartitionSparse("kafka_replication_partition_reassigning")},
			column{"High watermark", perPartition("kafka_replication_partition_high_watermark")},
			column{"Log end offset", perPartition("kafka_replication_partition_log_end_offset")},
			column{"LEO − HW", fmt.Sprintf(`max by (partition) (kafka_replication_partition_log_end_offset{%[1]s} - kafka_replication_partition_high_watermark{%[1]s})`, partitionSel)},
		)).
		WithRow(dashboard.NewRowBuilder("In-sync replicas")).
		WithPanel(steps("ISR size",
			"In-sync replicas per partition; the dashed line is the effective min ISR.",
			"short", 12, 8,
			query(perPartition("kafka_replication_partition_in_sync_replicas"), "ISR p{{partition}}"),
			query(fmt.Sprintf(`min(kafka_replication_partition_min_insync_replicas{%s})`, partitionSel), "min ISR"),
		).OverrideByName("min ISR", []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
			{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
		})).
		WithPanel(timeSeries("Follower lag",
			"Offsets each follower is behind the leader, per partition and replica.",
			"short", 12, 8,
			query(fmt.Sprintf(`max by (partition, replica) (kafka_replication_partition_replica_lag{%s})`, partitionSel)+zeroByPartition, "p{{partition}} replica {{replica}}"),
		)).
		WithPanel(steps("ISR, ELR and last-known ELR",
			"Clean leader candidates per partition: the ISR, and outside it the eligible leader replicas the controller keeps below min ISR (KIP-966). ISR 1 with ELR 0 leaves the leader as the only clean candidate; last-known ELR are replicas that stopped uncleanly. No ELR lines on Kafka 3.x or with ELR off.",
			"short", 12, 8,
			query(perPartition("kafka_replication_partition_in_sync_replicas"), "ISR p{{partition}}"),
			query(perPartitionSparse("kafka_replication_partition_eligible_leader_replicas"), "ELR p{{partition}}"),
			query(perPartitionSparse("kafka_replication_partition_last_known_eligible_leader_replicas"), "last-known ELR p{{partition}}"),
		)).
		WithPanel(steps("Reassignments",
			"Replicas being added and removed per partition while a reassignment runs. Under-replicated only by replicas being added does not fire the under-replicated and at-min-ISR alerts.",
			"short", 12, 8,
			// The adding/removing series exist only while a reassignment runs:
			// zero from the always-present reassigning series otherwise.
			query(perPartition("kafka_replication_partition_reassignment_adding_replicas")+zeroByPartition, "adding p{{partition}}"),
			query(perPartition("kafka_replication_partition_reassignment_removing_replicas")+zeroByPartition, "removing p{{partition}}"),
			query(perPartitionSparse("kafka_replication_partition_under_replicated_by_reassignment"), "under-replicated by it p{{partition}}"),
		)).
		WithPanel(timeSeries("ISR shrinks and expands",
			"ISR changes logged by the leaders of this topic; shrinks drawn below the axis.",
			"ops", 24, 8,
			query(fmt.Sprintf(`-sum by (partition) (rate(kafka_replication_partition_isr_shrinks_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "shrinks p{{partition}}"),
			query(fmt.Sprintf(`sum by (partition) (rate(kafka_replication_partition_isr_expands_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "expands p{{partition}}"),
		)).
		WithRow(dashboard.NewRowBuilder("High watermark and leadership")).
		WithPanel(timeSeries("High watermark and log end offset",
			"Offsets per partition: consumers read up to the HW; a flat HW under a rising LEO is a stall.",
			"short", 12, 8,
			query(perPartition("kafka_replication_partition_high_watermark"), "HW p{{partition}}"),
			query(perPartition("kafka_replication_partition_log_end_offset"), "LEO p{{partition}}"),
		).Decimals(0)).
		WithPanel(timeline("Leader",
			"Broker id leading each partition; -1 is offline.",
			12, 8,
			query(perPartition("kafka_replication_partition_leader"), "p{{partition}}"),
		)).
		WithRow(dashboard.NewRowBuilder("Rejections and data-loss evidence")).
		WithPanel(timeSeries("NotEnoughReplicas rejections/s",
			"acks=all appends to this topic rejected because the ISR is below min.insync.replicas.",
			"ops", 12, 8,
			query(fmt.Sprintf(`sum by (partition) (rate(kafka_replication_partition_produce_not_enough_replicas_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "p{{partition}}"),
		)).
		WithPanel(bars("HW regressions, truncations below HW, unclean elections",
			"Events that mean committed records were lost or un-committed. Each should be zero.",
			12, 8,
			query(fmt.Sprintf(`sum by (partition) (increase(kafka_replication_partition_high_watermark_regressions_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "HW regression p{{partition}}"),
			query(fmt.Sprintf(`sum by (partition) (increase(kafka_replication_partition_truncations_below_high_watermark_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "truncation below HW p{{partition}}"),
			query(fmt.Sprintf(`max by (partition) (increase(kafka_replication_partition_unclean_leader_elections_total{%s}[$__rate_interval]))`, partitionSel)+zeroByPartition, "unclean election p{{partition}}"),
		)).
		WithRow(tieringRow(perPartition))
}

// tieringRow is the topic's tiered storage (--collector.tiered-storage, topics
// with remote.storage.enable=true; empty otherwise): how far tiering is behind,
// and whether a stuck HW or LSO stops it.
func tieringRow(perPartition func(metric string) string) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Tiered storage").
		WithPanel(timeSeries("Tiering lag",
			"Offsets below the LSO (or HW) not yet in remote storage, per partition; it includes the active segment, which is never copied. A healthy partition stays within a few segments; a line that only climbs is tiering stopped, and local retention with it: the leader's disk fills. Empty without --collector.tiered-storage or remote.storage.enable.",
			"short", 12, 8,
			query(perPartition("kafka_replication_partition_tiering_lag_offsets"), "p{{partition}}"),
		).Decimals(0)).
		WithPanel(steps("Tiering stalled",
			"1 while a partition's latest tiered offset has not moved for the stall threshold with offsets waiting, by cause: hw_stalled and lso_stuck are replication (alert KafkaPartitionTieringStalledByReplication), remote the remote storage or a segment not rolled yet.",
			"short", 12, 8,
			query(fmt.Sprintf(`max by (partition, cause) (kafka_replication_partition_tiering_stalled{%s})`, partitionSel), "p{{partition}} {{cause}}"),
		))
}
