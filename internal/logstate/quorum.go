package logstate

import (
	"cmp"
	"slices"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// QuorumNode is what one node's Raft client and controller lines said about
// the KRaft metadata log: a node's own server.log (and a controller's
// controller.log) name only that node, so a sidecar has one, or none on a
// ZooKeeper-mode broker.
type QuorumNode struct {
	Node int32 // the id the lines' "[RaftManager id=N]" / "[QuorumController id=N]" prefix names
	// Transitions counts "Completed transition to <State>", by logparse.QuorumStates index.
	Transitions []uint64
	// Elections counts the new epochs with a leader the node announced
	// (becoming leader or follower, or controller.log's new leader), once per
	// epoch whichever file logged it.
	Elections     uint64
	FetchTimeouts uint64 // elections it started because its leader stopped answering fetches
	Resignations  uint64 // leaderships it gave up for want of fetches from a majority of the voters
	HWRegressions uint64 // metadata HW regressions as leader (the checker's metadata_hw_monotonic violations)
	Truncations   uint64 // truncations of its metadata log on the leader's fetch response

	electedEpoch int64 // the epoch last counted in Elections; -1 before one
}

// maxQuorumNodes bounds the quorum nodes kept: a sidecar's logs name one
// node, a log that names hundreds is junk.
const maxQuorumNodes = 64

// quorumState indexes logparse.QuorumStates by name.
var quorumState = func() map[string]int {
	m := make(map[string]int, len(logparse.QuorumStates))
	for i, s := range logparse.QuorumStates {
		m[s] = i
	}
	return m
}()

// applyQuorum applies the metadata log's events, which name no partition:
// the checker first (the metadata HW regression is its invariant), then the
// node's counters.
func (s *Store) applyQuorum(ev *logparse.Event) bool {
	switch ev.Type {
	case logparse.QuorumTransition, logparse.QuorumFetchTimeout, logparse.QuorumMajorityLost,
		logparse.QuorumHWRegression, logparse.QuorumTruncation, logparse.QuorumLeaderChange:
	default:
		return false
	}
	s.checker.Observe(ev, &s.res)
	q := s.quorumNode(ev.Broker)
	if q == nil {
		return true
	}
	switch ev.Type {
	case logparse.QuorumTransition:
		if i, ok := quorumState[ev.State]; ok {
			q.Transitions[i]++
		}
		if ev.State == "leader" || ev.State == "follower" {
			q.elected(ev)
		}
	case logparse.QuorumLeaderChange:
		q.elected(ev)
	case logparse.QuorumFetchTimeout:
		q.FetchTimeouts++
	case logparse.QuorumMajorityLost:
		q.Resignations++
	case logparse.QuorumHWRegression:
		if s.res.MetadataHWRegression {
			q.HWRegressions++
		}
	case logparse.QuorumTruncation:
		q.Truncations++
	}
	return true
}

// elected counts a new epoch with a known leader. A node's Raft client and
// its controller both announce it, in two files read in log-time order, and
// a restarted node announces the epoch it rejoins: only a higher epoch counts.
func (q *QuorumNode) elected(ev *logparse.Event) {
	if ev.Leader >= 0 && ev.Epoch > q.electedEpoch {
		q.Elections++
		q.electedEpoch = ev.Epoch
	}
}

// quorumNode finds (or makes) a node's state; nil past the bound or for a
// line that names no node.
func (s *Store) quorumNode(id int32) *QuorumNode {
	if id < 0 {
		return nil
	}
	if q := s.quorum[id]; q != nil {
		return q
	}
	if len(s.quorum) >= maxQuorumNodes {
		return nil
	}
	q := &QuorumNode{Node: id, Transitions: make([]uint64, len(logparse.QuorumStates)), electedEpoch: -1}
	s.quorum[id] = q
	return q
}

// snapshotQuorum copies the nodes into snap, sorted by id, reusing its slices.
func (s *Store) snapshotQuorum(snap *Snapshot) {
	snap.Quorum = snap.Quorum[:0]
	for _, q := range s.quorum {
		c := *q
		c.Transitions = slices.Clone(q.Transitions)
		snap.Quorum = append(snap.Quorum, c)
	}
	slices.SortFunc(snap.Quorum, func(a, b QuorumNode) int { return cmp.Compare(a.Node, b.Node) })
}
