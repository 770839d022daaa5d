package poller

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The snapshot's metadata quorum (fetch_quorum.go), from one refresh's read.

// observe turns a read into the snapshot's Quorum: nil when this sidecar
// does not speak for the cluster; only the reason when the read failed.
// brokers are this refresh's Metadata. It logs each change of state once.
func (w *quorumWatch) observe(read *quorumRead, brokers map[int32]string) *Quorum {
	if read == nil {
		if w.speaking {
			w.speaking = false
			w.logger.Info("This sidecar no longer speaks for the cluster's metadata quorum; another sidecar exports it")
		}
		return nil
	}
	if !w.speaking {
		w.speaking = true
		w.logger.Info("This sidecar speaks for the cluster's metadata quorum (DescribeQuorum each refresh)")
	}
	w.tell(read)
	if read.unknown != QuorumKnown {
		return &Quorum{Unknown: read.unknown}
	}
	part := read.part
	if hw := part.HighWatermark; hw >= 0 {
		if w.hwSeen && hw < w.lastHW {
			w.regressions++
			w.logger.Warn("The metadata log's high watermark went back", "from", w.lastHW, "to", hw, "leader", part.LeaderID, "epoch", part.LeaderEpoch)
		}
		w.lastHW, w.hwSeen = hw, true
	}
	q := &Quorum{
		LeaderID:      part.LeaderID,
		LeaderEpoch:   part.LeaderEpoch,
		HighWatermark: part.HighWatermark,
		HWRegressions: w.regressions,
		Voters:        len(part.CurrentVoters),
		Replicas:      quorumReplicas(part, read.version),
	}
	seen := make(map[int32]bool, len(q.Replicas))
	for _, r := range q.Replicas {
		seen[r.Node] = true
	}
	for id := range brokers {
		if !seen[id] {
			q.BrokersMissing++
		}
	}
	return q
}

// tell logs a change of state: unsupported once at INFO (a ZooKeeper
// cluster stays one), the failures at WARN, the recovery at INFO.
func (w *quorumWatch) tell(read *quorumRead) {
	if read.unknown == w.state {
		return
	}
	was := w.state
	w.state = read.unknown
	switch read.unknown {
	case QuorumKnown:
		w.logger.Info("DescribeQuorum answers again; metadata quorum series are exported", "was", was.String())
	case QuorumUnsupported:
		if !w.toldUnsup {
			w.toldUnsup = true
			w.logger.Info("The cluster has no KRaft metadata quorum to describe; metadata_quorum_unknown{reason=\"unsupported\"} is 1", "err", read.err)
		}
	default:
		w.logger.Warn("The KRaft metadata quorum is unknown; only metadata_quorum_up 0 and metadata_quorum_unknown are exported until it answers",
			"reason", read.unknown.String(), "err", read.err)
	}
}

// quorumReplicas are the voters, then the observers, each by node id, with
// their lags behind the leader. The leader's LastCaughtUpTimestamp is its
// now; v0 has no timestamps.
func quorumReplicas(part *kmsg.DescribeQuorumResponseTopicPartition, version int16) []QuorumReplica {
	leaderLEO, leaderNow := int64(-1), int64(-1)
	for _, v := range part.CurrentVoters {
		if v.ReplicaID == part.LeaderID {
			leaderLEO, leaderNow = v.LogEndOffset, v.LastCaughtUpTimestamp
		}
	}
	if version < 1 {
		leaderNow = -1
	}
	out := make([]QuorumReplica, 0, len(part.CurrentVoters)+len(part.Observers))
	add := func(states []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, observer bool) {
		from := len(out)
		for _, s := range states {
			r := QuorumReplica{Node: s.ReplicaID, Observer: observer}
			if s.LogEndOffset >= 0 && leaderLEO >= 0 {
				r.LogEndOffset, r.LagRecords, r.LEOKnown = s.LogEndOffset, max(leaderLEO-s.LogEndOffset, 0), true
			}
			if leaderNow >= 0 && s.LastCaughtUpTimestamp >= 0 {
				r.LagSeconds, r.LagKnown = msSeconds(leaderNow-s.LastCaughtUpTimestamp), true
			}
			if leaderNow >= 0 && s.LastFetchTimestamp >= 0 && s.ReplicaID != part.LeaderID {
				r.LastFetchAgeSeconds, r.FetchKnown = msSeconds(leaderNow-s.LastFetchTimestamp), true
			}
			out = append(out, r)
		}
		slices.SortFunc(out[from:], func(a, b QuorumReplica) int { return cmp.Compare(a.Node, b.Node) })
	}
	add(part.CurrentVoters, false)
	add(part.Observers, true)
	return out
}

// msSeconds is a span of the leader's milliseconds in seconds, never negative.
func msSeconds(ms int64) float64 { return float64(max(ms, 0)) / 1000 }
