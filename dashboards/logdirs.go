package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// logDirRow is a broker's failed log directories (KafkaBrokerLogDirOffline)
// and the replicas they took offline (KafkaReplicaLogDirOffline), whose lag
// series are gone while they are offline.
func logDirRow() *dashboard.RowBuilder {
	return dashboard.NewRowBuilder("Log directories").
		WithPanel(timeline("Offline log directories",
			"Each log directory of the brokers, by broker and path: offline while the broker answers DescribeLogDirs with "+
				"KAFKA_STORAGE_ERROR for it, and (log) from the broker's own 'Stopping serving replicas in dir' line until it "+
				"restarts. A failed directory stays offline until the disk is fixed and the broker restarted.",
			24, 8,
			query(fmt.Sprintf(`max by (broker, dir) (kafka_replication_broker_log_dir_offline{%s})`, sel), "broker {{broker}} {{dir}}"),
			query(fmt.Sprintf(`max by (broker, dir) (kafka_replication_log_dir_offline{%s})`, sel), "broker {{broker}} {{dir}} (log)"),
		).Mappings(onlineOffline())).
		WithPanel(partitionTable("Offline replicas",
			"Replicas Metadata lists as offline while their broker is up: they were in a failed log directory of broker "+
				"'replica', have no lag series and are out of the ISR until it restarts. Without partition labels, the "+
				"count per topic.",
			8, "Offline",
			column{"Offline", fmt.Sprintf(`kafka_replication_partition_replica_offline{%s}`, topicSel)},
		))
}

// onlineOffline shows a 0/1 directory state as words and colors.
func onlineOffline() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"0": {Text: cog.ToPtr("online"), Color: cog.ToPtr("green"), Index: cog.ToPtr[int32](0)},
			"1": {Text: cog.ToPtr("offline"), Color: cog.ToPtr("red"), Index: cog.ToPtr[int32](1)},
		},
	}}}
}
