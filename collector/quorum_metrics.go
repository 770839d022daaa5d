package collector

import "github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"

// quorumTables are the metadata quorum's tables; none when the snapshot has
// no quorum (this sidecar does not speak for the cluster), and only up and
// the reason while it is unknown.
func quorumTables(s *admin.Snapshot) []*Table {
	q := s.Quorum
	if q == nil {
		return nil
	}
	if q.Unknown != admin.QuorumKnown {
		return []*Table{
			{Rows: 1, Columns: []Column{{quorumUpFamily, func(int) (float64, bool) { return 0, true }}}},
			{Rows: 1, Labels: func(_ int, v []string) { v[0] = q.Unknown.String() }, Columns: []Column{
				{quorumUnknownFamily, func(int) (float64, bool) { return 1, true }},
			}},
		}
	}
	quorum := &Table{Rows: 1, Columns: []Column{
		{quorumUpFamily, func(int) (float64, bool) { return 1, true }},
		{quorumLeaderFamily, func(int) (float64, bool) { return float64(q.LeaderID), true }},
		{quorumEpochFamily, func(int) (float64, bool) { return float64(q.LeaderEpoch), true }},
		{quorumHWFamily, func(int) (float64, bool) { return float64(q.HighWatermark), q.HighWatermark >= 0 }},
		{quorumHWRegressionsFamily, func(int) (float64, bool) { return float64(q.HWRegressions), true }},
		{quorumVotersFamily, func(int) (float64, bool) { return float64(q.Voters), true }},
		{quorumBrokersMissingFamily, func(int) (float64, bool) { return float64(q.BrokersMissing), true }},
	}}
	replicas := rowTable(q.Replicas, func(r admin.QuorumReplica, v []string) {
		v[0], v[1] = idLabel(r.Node), quorumRole(r.Observer)
	}, quorumReplicaColumns)
	return []*Table{quorum, replicas}
}

var quorumReplicaColumns = []rowColumn[admin.QuorumReplica]{
	{quorumReplicaLEOFamily, func(r admin.QuorumReplica) (float64, bool) { return float64(r.LogEndOffset), r.LEOKnown }},
	{quorumReplicaLagFamily, func(r admin.QuorumReplica) (float64, bool) { return float64(r.LagRecords), r.LEOKnown }},
	{quorumReplicaLagSecondsFamily, func(r admin.QuorumReplica) (float64, bool) { return r.LagSeconds, r.LagKnown }},
	{quorumReplicaFetchAgeFamily, func(r admin.QuorumReplica) (float64, bool) { return r.LastFetchAgeSeconds, r.FetchKnown }},
}

// quorumRole is the role label of a replica of the metadata log.
func quorumRole(observer bool) string {
	if observer {
		return "observer"
	}
	return "voter"
}
