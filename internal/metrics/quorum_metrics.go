package metrics

import (
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// quorumTables are the metadata quorum's tables; none when the snapshot has
// no quorum (this sidecar does not speak for the cluster), and only up and
// the reason while it is unknown.
func quorumTables(s *poller.Snapshot) []*exposition.Table {
	q := s.Quorum
	if q == nil {
		return nil
	}
	if q.Unknown != poller.QuorumKnown {
		return []*exposition.Table{
			{Rows: 1, Columns: []exposition.Column{{Family: quorumUpFamily, Value: func(int) (float64, bool) { return 0, true }}}},
			{Rows: 1, Labels: func(_ int, v []string) { v[0] = q.Unknown.String() }, Columns: []exposition.Column{
				{Family: quorumUnknownFamily, Value: func(int) (float64, bool) { return 1, true }},
			}},
		}
	}
	quorum := &exposition.Table{Rows: 1, Columns: []exposition.Column{
		{Family: quorumUpFamily, Value: func(int) (float64, bool) { return 1, true }},
		{Family: quorumLeaderFamily, Value: func(int) (float64, bool) { return float64(q.LeaderID), true }},
		{Family: quorumEpochFamily, Value: func(int) (float64, bool) { return float64(q.LeaderEpoch), true }},
		{Family: quorumHWFamily, Value: func(int) (float64, bool) { return float64(q.HighWatermark), q.HighWatermark >= 0 }},
		{Family: quorumHWRegressionsFamily, Value: func(int) (float64, bool) { return float64(q.HWRegressions), true }},
		{Family: quorumVotersFamily, Value: func(int) (float64, bool) { return float64(q.Voters), true }},
		{Family: quorumBrokersMissingFamily, Value: func(int) (float64, bool) { return float64(q.BrokersMissing), true }},
	}}
	replicas := exposition.RowTable(q.Replicas, func(r poller.QuorumReplica, v []string) {
		v[0], v[1] = idLabel(r.Node), quorumRole(r.Observer)
	}, quorumReplicaColumns)
	return []*exposition.Table{quorum, replicas}
}

var quorumReplicaColumns = []exposition.RowColumn[poller.QuorumReplica]{
	{Family: quorumReplicaLEOFamily, Value: func(r poller.QuorumReplica) (float64, bool) { return float64(r.LogEndOffset), r.LEOKnown }},
	{Family: quorumReplicaLagFamily, Value: func(r poller.QuorumReplica) (float64, bool) { return float64(r.LagRecords), r.LEOKnown }},
	{Family: quorumReplicaLagSecondsFamily, Value: func(r poller.QuorumReplica) (float64, bool) { return r.LagSeconds, r.LagKnown }},
	{Family: quorumReplicaFetchAgeFamily, Value: func(r poller.QuorumReplica) (float64, bool) { return r.LastFetchAgeSeconds, r.FetchKnown }},
}

// quorumRole is the role label of a replica of the metadata log.
func quorumRole(observer bool) string {
	if observer {
		return "observer"
	}
	return "voter"
}
