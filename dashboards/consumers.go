package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// consumersRow is "Consumer impact": who is hurt and whose fault it is. Its
// panels need --collector.consumer-groups (the LSO gap
// --collector.last-stable-offset, the share groups --collector.share-groups)
// and stay empty without.
func consumersRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Consumer impact").
		WithPanel(steps("Consumer groups starved by replication",
			"Partitions on which the group has read everything up to the high watermark while the high watermark is stalled with records above it: "+
				"replication, not the consumer, is at fault (KafkaConsumersStarvedByReplication). Needs --collector.consumer-groups.",
			"short", 12, 8,
			// Sparse (no series while not starved): a 0 for every group position exported.
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_consumer_group_starved_by_replication{%[1]s})`+
				` or 0 * sum by (group, topic) (kafka_replication_consumer_group_committed_offset{%[1]s})`, topicSel), "{{group}} {{topic}}"),
		)).
		WithPanel(timeSeries("Lag to HW vs records above HW",
			"Per group and topic: records the group could read and has not (lag to the high watermark, the consumer's share) against records written "+
				"that no consumer can read yet (log end offset − high watermark, replication's share). Peers' consumer lag shows only the first.",
			"short", 12, 8,
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_consumer_group_lag_to_high_watermark{%s})`, topicSel), "{{group}} {{topic}} lag to HW"),
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_consumer_group_records_above_high_watermark{%s})`, topicSel), "{{group}} {{topic}} above HW"),
		).Decimals(0)).
		WithPanel(timeSeries("Consumer lag (seconds)",
			"Age of the oldest record the group can read and has not, worst partition per group and topic, from the exporter's own high watermark readings "+
				"(KafkaConsumerGroupStalled fires when it keeps growing with no commit).",
			"s", 12, 8,
			query(fmt.Sprintf(`max by (group, topic) (kafka_replication_consumer_group_lag_seconds{%s})`, topicSel), "{{group}} {{topic}}"),
		)).
		WithPanel(steps("Share groups starved by replication",
			"Partitions on which the share group has acknowledged everything up to the high watermark while the high watermark is stalled with records above it "+
				"(KafkaShareGroupStarvedByReplication). Needs --collector.share-groups.",
			"short", 12, 8,
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_share_group_starved_by_replication{%[1]s})`+
				` or 0 * sum by (group, topic) (kafka_replication_share_group_start_offset{%[1]s})`, topicSel), "{{group}} {{topic}}"),
		)).
		WithPanel(timeSeries("Share groups: lag to HW vs records above HW",
			"Per share group and topic: records not yet acknowledged below the high watermark (the consumers' share) against records written that no "+
				"consumer can read yet (replication's share). Needs --collector.share-groups.",
			"short", 12, 8,
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_share_group_lag_to_high_watermark{%s})`, topicSel), "{{group}} {{topic}} lag to HW"),
			query(fmt.Sprintf(`sum by (group, topic) (kafka_replication_share_group_records_above_high_watermark{%s})`, topicSel), "{{group}} {{topic}} above HW"),
		).Decimals(0)).
		WithPanel(timeSeries("Last stable offset gap (HW − LSO)",
			"Records read_uncommitted consumers can read and read_committed consumers (Kafka Streams, exactly-once pipelines) cannot yet: above 0 while a "+
				"transaction is open, growing while one hangs. Worst partition per topic. Needs --collector.last-stable-offset.",
			"short", 12, 8,
			// Under --collector.partition-series=unhealthy a healthy partition has
			// neither series: 0 per topic, from the sidecars that read the LSO (whose
			// list_offsets_lso error counter exists), so no 0 stands for an LSO not read.
			query(fmt.Sprintf(`max by (topic) (kafka_replication_partition_high_watermark{%[1]s} - kafka_replication_partition_last_stable_offset{%[1]s})`+
				` or 0 * max by (topic) (kafka_replication_partition_replicas{%[1]s}`+
				` and on (instance) rate(kafka_replication_admin_request_errors_total{%[2]s, request="list_offsets_lso"}[$__rate_interval]))`, topicSel, sel), "{{topic}}"),
		).Decimals(0))
}
