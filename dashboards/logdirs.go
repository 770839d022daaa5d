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
				"KAFKA_STORAGE_ERROR for it, or since its own 'Stopping serving replicas in dir' line until it restarts, "+
				"whichever says so. A failed directory stays offline until the disk is fixed and the broker restarted.",
			12, 8,
			query(fmt.Sprintf(`max by (broker, dir) (
  label_replace(kafka_replication_broker_log_dir_offline{%[1]s}, "source", "admin", "", "")
or
  label_replace(kafka_replication_log_dir_offline{%[1]s}, "source", "log", "", "")
)`, sel), "broker {{broker}} {{dir}}"),
		).Mappings(onlineOffline())).
		WithPanel(steps("Offline replicas",
			"Replicas Metadata lists as offline while their broker is up, per topic and broker: they were in a failed log "+
				"directory of that broker, have no lag series and are out of the ISR until it restarts. Which partitions: "+
				"kafka_replication_partition_replica_offline.",
			"short", 12, 8,
			query(fmt.Sprintf(`sum by (topic, replica) (kafka_replication_partition_replica_offline{%s})`, topicSel)+zeroByTopic,
				"{{topic}} broker {{replica}}"),
		).Decimals(0))
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
