package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
)

// The tiered-storage families outside partitionColumns
// (--collector.tiered-storage): the stall verdict with its cause, and the
// tiered partitions whose tiering is unknown.
var (
	tieringStalledFamily = exposition.NewFamily("partition_tiering_stalled",
		"1 if the partition's latest tiered offset has not moved for --collector.tiered-storage.stall-threshold while offsets wait to be copied, "+
			"labeled with the cause; only stalled partitions have the series.",
		exposition.Gauge, "cause", "partition", "topic").MarkSparse().
		WithDoc("Causes: `hw_stalled` (the high watermark is stalled), `lso_stuck` (a hanging transaction holds the last stable offset, " +
			"with --collector.last-stable-offset), `remote` (neither, while the HW moved on: copy errors, a remote.copy.lag.* delay, " +
			"or a segment that has not rolled yet). Local retention waits for tiering, so the leader's disk fills. " +
			"Never exported without partition labels. Alert: `KafkaPartitionTieringStalledByReplication`.")
	tieringUnknownFamily = exposition.NewFamily("partitions_tiering_unknown",
		"Exported partitions of tiered topics whose tiering offsets are unknown this refresh, by why.",
		exposition.Gauge, "reason").
		WithDoc("With --collector.tiered-storage. Reasons: `request_failed` (ApiVersions or ListOffsets to the leader failed, or no leader), " +
			"`unsupported` (the leader lists ListOffsets below v9: Kafka before 3.9), " +
			"`unusable` (the partition answered with an error, counted in admin_answer_errors_total).")
)

// tieringFamilies are the tiered-storage families of tables built per scrape.
var tieringFamilies = []*exposition.Family{tieringStalledFamily, tieringUnknownFamily}
