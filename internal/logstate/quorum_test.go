package logstate

import (
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// quorumOf returns the snapshot's quorum node id.
func quorumOf(t *testing.T, s *Store, id int32) QuorumNode {
	t.Helper()
	var snap Snapshot
	s.Snapshot(&snap)
	for _, q := range snap.Quorum {
		if q.Node == id {
			return q
		}
	}
	t.Fatalf("no quorum node %d in %+v", id, snap.Quorum)
	return QuorumNode{}
}

// transitions is q's transitions by state name.
func transitions(q QuorumNode) map[string]uint64 {
	m := map[string]uint64{}
	for i, n := range q.Transitions {
		if n > 0 {
			m[logparse.QuorumStates[i]] = n
		}
	}
	return m
}

// The real elections of the e2e captures. 4.4.0: controller 103 followed 102
// in epoch 1, timed out on its fetches when 102 was killed and won epoch 2.
// Its server.log and controller.log both announce each epoch's leader: an
// election counts once. The resignation captures: leader 103 of epoch 1
// resigned once for want of fetches from the two frozen voters, the only
// majority-lost line of its log; 3.9.1's second ResignedState (epoch 4) is
// the cluster's shutdown, which logs none.
func TestStoreCountsARealElectionOnce(t *testing.T) {
	type counts struct{ elections, fetchTimeouts, resignations, truncations uint64 }
	election := []string{"new-leader", "controller"}
	for _, c := range []struct {
		version string
		files   []string // real-<version>-quorum-<file>.log
		node    int32
		want    map[string]uint64
		counts  counts
	}{
		{"4.4.0", election, 103, map[string]uint64{"unattached": 4, "prospective": 3, "follower": 1, "candidate": 1, "leader": 1}, counts{2, 1, 0, 0}},
		{"3.9.1", election, 103, map[string]uint64{"unattached": 3, "candidate": 5, "follower": 1, "leader": 1, "resigned": 1}, counts{2, 1, 0, 0}},
		// 102 followed 103 in epoch 1, timed out when 103 was killed, lost
		// epoch 2 (a split vote) and won epoch 3.
		{"4.1.1", election, 102, map[string]uint64{"unattached": 3, "prospective": 2, "follower": 1, "candidate": 2, "leader": 1}, counts{2, 1, 0, 0}},
		// 103 resigned epoch 1 and won epoch 3 after the thaw.
		{"4.4.0", []string{"resign"}, 103, map[string]uint64{"unattached": 2, "prospective": 2, "candidate": 2, "leader": 2, "resigned": 1}, counts{2, 0, 1, 0}},
		// 103 resigned epoch 1, followed 102 in epoch 3 (truncating its
		// log to offset 16) and won epoch 4 when 102 shut down.
		{"3.9.1", []string{"resign"}, 103, map[string]uint64{"unattached": 3, "candidate": 2, "follower": 1, "leader": 2, "resigned": 2}, counts{3, 1, 1, 1}},
	} {
		s := NewStore(nil)
		var files []*LogFile
		for _, f := range c.files {
			path := "../logparse/testdata/real-" + c.version + "-quorum-" + f + ".log"
			files = append(files, NewLogFile(path, LogFileOptions{FromBeginning: true, Location: time.UTC, PollInterval: time.Nanosecond}))
		}
		drain(NewStream(s, files, time.Nanosecond))
		q := quorumOf(t, s, c.node)
		got := transitions(q)
		if len(got) != len(c.want) {
			t.Errorf("%s %v: want transitions %v, got %v", c.version, c.files, c.want, got)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s %v: want transitions %v, got %v", c.version, c.files, c.want, got)
				break
			}
		}
		if n := (counts{q.Elections, q.FetchTimeouts, q.Resignations, q.Truncations}); n != c.counts || q.HWRegressions != 0 {
			t.Errorf("%s %v: want %+v and no HW regression, got %+v", c.version, c.files, c.counts, q)
		}
	}
}

// The leader's repeated regression line counts once per current HW; the
// resignation, truncation and a restarted node rejoining an epoch it saw
// count as what they are.
func TestStoreQuorumCounters(t *testing.T) {
	s := NewStore(nil)
	const raft = "[2026-12-04 18:10:00,000] INFO [RaftManager id=102] "
	regressed := raft + "The latest computed high watermark 41 is smaller than the current value 57, which should only happen when voter set membership changes. (org.apache.kafka.raft.LeaderState)"
	applyLines(t, s,
		raft+"Completed transition to Leader(localReplicaKey=ReplicaKey(id=102, directoryId=Optional.empty), epoch=3, epochStartOffset=0, highWatermark=Optional.empty, voterStates={}) from null (org.apache.kafka.raft.QuorumState)",
		regressed, regressed,
		raft+"Did not receive fetch request from the majority of the voters within 3000ms. Current fetched voters are [], and voters are [] (org.apache.kafka.raft.LeaderState)",
		raft+"Completed transition to ResignedState(localId=102, epoch=3, voters=[101, 102, 103], electionTimeoutMs=1603, unackedVoters=[101, 103], preferredSuccessors=[]) from null (org.apache.kafka.raft.QuorumState)",
		raft+"Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=4, leader=103, leaderEndpoints=Endpoints(endpoints={}), voters=[101, 102, 103], highWatermark=Optional.empty, fetchingSnapshot=Optional.empty) from null (org.apache.kafka.raft.QuorumState)",
		raft+"Truncated to offset 57 from Fetch response from leader 103 (org.apache.kafka.raft.KafkaRaftClient)",
		"[2026-12-04 18:10:01,000] INFO [QuorumController id=102] In the new epoch 4, the leader is 103. (org.apache.kafka.controller.QuorumController)",
		raft+"Completed transition to FollowerState(fetchTimeoutMs=2000, epoch=4, leader=103, leaderEndpoints=Endpoints(endpoints={}), voters=[101, 102, 103], highWatermark=Optional.empty, fetchingSnapshot=Optional.empty) from null (org.apache.kafka.raft.QuorumState)",
	)
	q := quorumOf(t, s, 102)
	if q.Elections != 2 || q.HWRegressions != 1 || q.Resignations != 1 || q.Truncations != 1 || q.FetchTimeouts != 0 {
		t.Errorf("want 2 elections (epochs 3, 4), 1 regression, 1 resignation, 1 truncation, got %+v", q)
	}
	if got := transitions(q); got["leader"] != 1 || got["resigned"] != 1 || got["follower"] != 2 {
		t.Errorf("want leader 1, resigned 1, follower 2, got %v", got)
	}
	if len(partitions(s)) != 0 {
		t.Errorf("want no partition state from quorum lines, got %v", partitions(s))
	}
}
