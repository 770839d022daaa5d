package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// quorumRow is the KRaft metadata quorum: who leads, whether it commits, and
// how far behind the controllers (voters) and brokers (observers) are. One
// exporter per cluster speaks for it and the speaker moves with the lowest
// live broker id, so the queries select the cluster only, not $instance, and
// take the max over sidecars. Empty in ZooKeeper mode.
func quorumRow() *dashboard.RowBuilder {
	c := clusterMatcher
	return dashboard.NewRowBuilder("Metadata quorum").
		WithPanel(timeline("Active controller",
			"Node id of the metadata quorum's leader, the active controller. A change is a controller election "+
				"(KafkaMetadataQuorumLeaderFlapping when it keeps changing); a gap is no leader or no answer (KafkaMetadataQuorumUnavailable).",
			8, 8,
			query(fmt.Sprintf(`max(kafka_replication_metadata_quorum_leader_id{%s})`, c), "leader"),
		)).
		WithPanel(steps("Leader epoch",
			"Epoch of the metadata log's leader: it rises by one per election, including elections that ended between two exporter refreshes.",
			"short", 8, 8,
			query(fmt.Sprintf(`max(kafka_replication_metadata_quorum_leader_epoch{%s})`, c), "epoch"),
		)).
		WithPanel(timeSeries("Metadata committed records/s",
			"How fast the metadata log's high watermark advances. About 2/s on an idle cluster (the active controller's no-op record every 500ms, KIP-835); "+
				"0 means the quorum commits nothing: no leader election, ISR change or topic change can happen.",
			"cps", 8, 8,
			query(fmt.Sprintf(`max(deriv(kafka_replication_metadata_quorum_high_watermark{%s}[$__rate_interval]))`, c), "high watermark"),
		)).
		WithPanel(timeSeries("Voter lag (seconds)",
			"Per controller, on the leader's clock: time since it last caught up with the leader's log end, and since its last fetch "+
				"(controller.quorum.fetch.timeout.ms is 2s). Over 5s is KafkaMetadataQuorumVoterLagging. Kafka 3.3+.",
			"s", 12, 8,
			quorumAges("voter", "voter")...,
		)).
		WithPanel(timeSeries("Observer lag (seconds)",
			"Per broker, on the leader's clock: time since it last caught up with the metadata log, and since its last fetch. "+
				"Over 30s for 5 minutes is KafkaBrokerMetadataStale; the leader drops a broker that has not fetched for 300s. Kafka 3.3+.",
			"s", 12, 8,
			quorumAges("observer", "broker")...,
		)).
		WithPanel(timeSeries("Metadata lag (records)",
			"Records of the metadata log each voter and observer is behind the leader's log end offset (0 for the leader).",
			"short", 12, 8,
			query(fmt.Sprintf(`max by (role, node) (kafka_replication_metadata_quorum_replica_lag_records{%s})`, c), "{{role}} {{node}}"),
		).Decimals(0)).
		WithPanel(steps("Quorum state",
			"up: 1 while DescribeQuorum finds a leader; why not when it does not (no_leader, error, timeout; denied, unsupported); the number of voters; "+
				"brokers registered in Metadata that the quorum does not list (KafkaBrokerMetadataStale).",
			"short", 12, 8,
			query(fmt.Sprintf(`max(kafka_replication_metadata_quorum_up{%s})`, c), "up"),
			// unknown has no series while the quorum is known: a 0 beside up then, so the query is never empty on a live cluster.
			query(fmt.Sprintf(`max by (reason) (kafka_replication_metadata_quorum_unknown{%s}) or on () 0 * max(kafka_replication_metadata_quorum_up{%s})`, c, c),
				"unknown: {{reason}}"),
			query(fmt.Sprintf(`max(kafka_replication_metadata_quorum_voters{%s})`, c), "voters"),
			query(fmt.Sprintf(`max(kafka_replication_metadata_quorum_brokers_missing{%s})`, c), "brokers missing"),
		))
}

// quorumAges are a role's two ages at the leader, per node, in one query
// labelled by age: since it last caught up with the leader's log end, and
// since its last fetch (the leader itself has only the first, so a one-voter
// quorum still draws its voter).
func quorumAges(role, legend string) []*prometheus.DataqueryBuilder {
	sel := join(clusterMatcher, `role="`+role+`"`)
	return []*prometheus.DataqueryBuilder{
		query(fmt.Sprintf(`max by (node, age) (`+
			`label_replace(kafka_replication_metadata_quorum_replica_lag_seconds{%s}, "age", "since caught up", "", "") or `+
			`label_replace(kafka_replication_metadata_quorum_replica_last_fetch_age_seconds{%s}, "age", "since fetch", "", ""))`, sel, sel),
			legend+" {{node}} {{age}}"),
	}
}
