package metrics

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"

// The KRaft metadata quorum's families (internal/poller's Snapshot.Quorum):
// exported once per cluster, by the sidecar that speaks for it.

// quorumDoc is the README note every quorum family shares.
const quorumDoc = "One DescribeQuorum per refresh, by the cluster-scope exporter or, in leader scope, only the sidecar of the lowest broker id in Metadata. "

var (
	quorumUpFamily = exposition.NewFamily("metadata_quorum_up",
		"1 if the last DescribeQuorum was answered with a metadata log leader, 0 otherwise.",
		exposition.Gauge).
		WithDoc(quorumDoc + "At 0 only it and `metadata_quorum_unknown` are exported.")
	quorumUnknownFamily = exposition.NewFamily("metadata_quorum_unknown",
		"1 for why the KRaft metadata quorum is not known; absent while metadata_quorum_up is 1.",
		exposition.Gauge, "reason").MarkSparse().
		WithDoc("Reasons: `denied` (CLUSTER_AUTHORIZATION_FAILED: grant DESCRIBE on CLUSTER), `unsupported` (ZooKeeper mode, or no API 55), " +
			"`no_leader`, `error` (the code is in the WARN; counts in admin_request_errors_total{request=\"describe_quorum\"}), `timeout` (counts there too).")
	quorumLeaderFamily = exposition.NewFamily("metadata_quorum_leader_id",
		"Node id of the active controller, the leader of the metadata log.",
		exposition.Gauge).WithDoc(quorumDoc)
	quorumEpochFamily = exposition.NewFamily("metadata_quorum_leader_epoch",
		"Leader epoch of the metadata log (__cluster_metadata).",
		exposition.Gauge).WithDoc(quorumDoc + "A rise is a controller election.")
	quorumHWFamily = exposition.NewFamily("metadata_quorum_high_watermark",
		"High watermark of the metadata log (offset).",
		exposition.Gauge).
		WithDoc(quorumDoc + "Absent while a new leader has not committed yet. The active controller writes a record every 500 ms " +
			"(KIP-835), so a high watermark that does not move means no working majority.")
	quorumHWRegressionsFamily = exposition.NewFamily("metadata_quorum_high_watermark_regressions_total",
		"Times the metadata log's high watermark was lower than the previous one read.",
		exposition.Counter).WithDoc(quorumDoc)
	quorumVotersFamily = exposition.NewFamily("metadata_quorum_voters",
		"Voters of the metadata quorum (CurrentVoters).",
		exposition.Gauge).WithDoc(quorumDoc)
	quorumReplicaLEOFamily = exposition.NewFamily("metadata_quorum_replica_log_end_offset",
		"Log end offset of a voter or observer of the metadata log, as the leader last heard.",
		exposition.Gauge, "node", "role").
		WithDoc(quorumDoc + "Roles: `voter` (the leader too), `observer` (every broker that is not a voter). Absent while the leader does not know it.")
	quorumReplicaLagFamily = exposition.NewFamily("metadata_quorum_replica_lag_records",
		"Leader's log end offset minus this replica's, in records (0 for the leader).",
		exposition.Gauge, "node", "role").WithDoc(quorumDoc)
	quorumReplicaLagSecondsFamily = exposition.NewFamily("metadata_quorum_replica_lag_seconds",
		"Leader's now minus the last time this replica was caught up, on the leader's clock.",
		exposition.Gauge, "node", "role").
		WithDoc(quorumDoc + "DescribeQuorum v1 and up (Kafka 3.3); absent while the replica's timestamp is unknown.")
	quorumReplicaFetchAgeFamily = exposition.NewFamily("metadata_quorum_replica_last_fetch_age_seconds",
		"Leader's now minus this replica's last fetch from the leader, on the leader's clock.",
		exposition.Gauge, "node", "role").
		WithDoc(quorumDoc + "DescribeQuorum v1 and up; absent for the leader and while unknown. A frozen voter's grows without bound.")
	quorumBrokersMissingFamily = exposition.NewFamily("metadata_quorum_brokers_missing",
		"Brokers in Metadata that are neither voters nor observers of the metadata log.",
		exposition.Gauge).
		WithDoc(quorumDoc + "The leader drops an observer after 300 s without a fetch: a broker still registered that no longer replicates metadata.")
)

func quorumFamilies() []*exposition.Family {
	return []*exposition.Family{
		quorumUpFamily, quorumUnknownFamily, quorumLeaderFamily, quorumEpochFamily, quorumHWFamily, quorumHWRegressionsFamily,
		quorumVotersFamily, quorumReplicaLEOFamily, quorumReplicaLagFamily, quorumReplicaLagSecondsFamily, quorumReplicaFetchAgeFamily,
		quorumBrokersMissingFamily,
	}
}
