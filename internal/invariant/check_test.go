package invariant

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// parseLine is Parse for a single-line record (logparse's own test helper
// is not visible from here).
func parseLine(p *logparse.Parser, line []byte) (logparse.Event, bool) {
	return p.Parse(logparse.Record{First: line, Line: 1, Lines: 1})
}

// checkLines parses each line and runs the checker, returning one result per line.
func checkLines(t *testing.T, lines ...string) []Result {
	t.Helper()
	p := logparse.NewParser(time.UTC)
	c := NewChecker()
	out := make([]Result, 0, len(lines))
	for _, l := range lines {
		ev, ok := parseLine(p, []byte(l))
		if !ok {
			t.Fatalf("want line parsed, got not ours: %s", l)
		}
		var r Result
		c.Observe(&ev, &r)
		out = append(out, r)
	}
	return out
}

func countViolations(rs []Result, inv Invariant) int {
	n := 0
	for _, r := range rs {
		if r.Violated.Has(inv) {
			n++
		}
	}
	return n
}

const (
	hwLine     = "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=%s, segment=[16:1]) to (offset=%s, segment=[16:2]) (kafka.cluster.Partition)"
	isrLine    = "[2025-10-16 15:57:12,614] INFO [Partition t-0 broker=1] ISR updated to %s  and version updated to %s (kafka.cluster.Partition)"
	loadedLine = "[2025-10-16 15:57:12,614] INFO [Partition t-0 broker=%s] Log loaded for partition t-0 with initial high watermark %s (kafka.cluster.Partition)"
)

func fill(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

func TestCheckerHWMonotonic(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"increasing", []string{fill(hwLine, "1", "2"), fill(hwLine, "2", "5")}, 0},
		{"same offset newer segment is a roll", []string{fill(hwLine, "5", "5")}, 0},
		{"decrease inside one line", []string{fill(hwLine, "9", "4")}, 1},
		{"decrease across lines", []string{fill(hwLine, "1", "9"), fill(hwLine, "4", "5")}, 1},
		{"gap forward is fine (lines missing while DEBUG was off)", []string{fill(hwLine, "1", "2"), fill(hwLine, "7", "8")}, 0},
		{"reset by a new leadership", []string{
			fill(hwLine, "1", "9"),
			"[2025-10-16 15:57:13,000] INFO [Broker id=1] Leader t-0 with topic id Some(AMNt6PcpRZOktSh6v-u00A) starts at leader epoch 5 from offset 4 with partition epoch 9, high watermark 4, ISR [1,2], adding replicas [] and removing replicas [] . Previous leader Some(2) and previous leader epoch was 4. (state.change.logger)",
			fill(hwLine, "4", "5"),
		}, 0},
		{"reset by truncation", []string{
			fill(hwLine, "1", "9"),
			"[2025-10-16 15:57:13,000] INFO [UnifiedLog partition=t-0, dir=/k] Truncating to offset 9 (org.apache.kafka.storage.internals.log.UnifiedLog)",
			fill(hwLine, "4", "5"),
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countViolations(checkLines(t, tt.lines...), HWMonotonic); got != tt.want {
				t.Errorf("want %d hw_monotonic violations, got %d", tt.want, got)
			}
		})
	}
}

func TestCheckerPartitionEpochAndISRChurn(t *testing.T) {
	rs := checkLines(t,
		fill(isrLine, "1,2,3", "10"),
		fill(isrLine, "1,2", "11"),   // shrink
		fill(isrLine, "1,2,3", "12"), // expand
		fill(isrLine, "1,2,3", "12"), // epoch did not increase
	)
	if got := countViolations(rs, PartitionEpochMonotonic); got != 1 {
		t.Errorf("want 1 partition_epoch_monotonic violation, got %d", got)
	}
	if !rs[1].ISRShrink || rs[1].ISRExpand {
		t.Errorf("want line 2 a shrink, got %+v", rs[1])
	}
	if !rs[2].ISRExpand || rs[2].ISRShrink {
		t.Errorf("want line 3 an expand, got %+v", rs[2])
	}
	if rs[0].ISRShrink || rs[0].ISRExpand {
		t.Errorf("want the first ISR seen to be neither shrink nor expand, got %+v", rs[0])
	}
}

func TestCheckerEpochsArePerBroker(t *testing.T) {
	// Two brokers' logs checked in one run: each has its own sequence.
	rs := checkLines(t,
		fill(isrLine, "1,2,3", "10"),
		strings.Replace(fill(isrLine, "2,3", "4"), "broker=1", "broker=2", 1),
	)
	if got := countViolations(rs, PartitionEpochMonotonic); got != 0 {
		t.Errorf("want no violation across brokers, got %d", got)
	}
}

func TestCheckerMinISR(t *testing.T) {
	header := "[2025-10-16 15:58:28,053] ERROR [ReplicaManager broker=1] Error processing append operation on partition AMNt6PcpRZOktSh6v-u00A:t-0 (kafka.server.ReplicaManager)"
	p := logparse.NewParser(time.UTC)
	c := NewChecker()
	for _, tc := range []struct {
		cont string
		want bool
	}{
		{"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition t-0, live replica(s) broker.id are : Set(1)", false},
		{"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 2 is insufficient to satisfy the min.isr requirement of 2 for partition t-0, live replica(s) broker.id are : Set(1, 2)", true},
		{"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(3) is insufficient to satisfy the min.isr requirement of 2 for partition t-0", false},
	} {
		ev, ok := p.Parse(logparse.Record{First: []byte(header), Cont: []byte(tc.cont), Line: 1, Lines: 2})
		if !ok {
			t.Fatalf("want a produce rejection parsed from %q", tc.cont)
		}
		var r Result
		c.Observe(&ev, &r)
		if !r.Checked.Has(MinISREnforced) {
			t.Errorf("want min_isr_enforced checked for %q", tc.cont)
		}
		if got := r.Violated.Has(MinISREnforced); got != tc.want {
			t.Errorf("want violation=%v for %q, got %v", tc.want, tc.cont, got)
		}
	}
}

// The old leader of an unclean election comes back: its checkpointed HW is 150,
// the new leader only has 100 records, so it truncates committed data.
func TestCheckerTruncationBelowHW(t *testing.T) {
	rs := checkLines(t,
		fill(loadedLine, "1", "150"),
		"[2025-10-16 15:57:14,000] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition t-0 with TruncationState(offset=100, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, endOffset=100) (kafka.server.ReplicaFetcherThread)",
		"[2025-10-16 15:57:14,001] INFO [UnifiedLog partition=t-0, dir=/k] Truncating to offset 100 (org.apache.kafka.storage.internals.log.UnifiedLog)",
		"[2025-10-16 15:57:14,002] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating t-0 to offset 100 below high watermark 150 (kafka.server.ReplicaFetcherThread)",
	)
	if got := countViolations(rs, NoTruncationBelowHW); got != 1 {
		t.Errorf("want the loss counted once over the three truncation lines, got %d", got)
	}
	if !rs[1].BelowHW {
		t.Errorf("want the fetcher line to carry the finding, got %+v", rs[1])
	}
}

func TestCheckerTruncationAtHWIsFine(t *testing.T) {
	// A clean failover: the old leader truncates its uncommitted tail, at or above its HW.
	rs := checkLines(t,
		fill(loadedLine, "1", "150"),
		"[2025-10-16 15:57:14,000] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition t-0 with TruncationState(offset=150, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=3, endOffset=150) (kafka.server.ReplicaFetcherThread)",
		"[2025-10-16 15:57:14,001] INFO [UnifiedLog partition=t-0, dir=/k] Truncating to 150 has no effect as the largest offset in the log is 149 (org.apache.kafka.storage.internals.log.UnifiedLog)",
	)
	if got := countViolations(rs, NoTruncationBelowHW); got != 0 {
		t.Errorf("want no violation, got %d", got)
	}
}

func TestCheckerUncleanElectionDeduplicated(t *testing.T) {
	// The active controller prints both lines, and every controller replays the change.
	rs := checkLines(t,
		"[2025-10-16 15:57:14,000] INFO [QuorumController id=1] Setting new leader for topicId AMNt6PcpRZOktSh6v-u00A, partition 0 to 2 using an unclean election (org.apache.kafka.controller.PartitionChangeBuilder)",
		"[2025-10-16 15:57:14,001] INFO [QuorumController id=1] UNCLEAN partition change for t-0 with topic ID AMNt6PcpRZOktSh6v-u00A: leader: 1 -> 2, leaderEpoch: 3 -> 4, partitionEpoch: 7 -> 8 (org.apache.kafka.controller.ReplicationControlManager)",
		"[2025-10-16 15:57:14,003] INFO [QuorumController id=1] UNCLEAN partition change for t-0 with topic ID AMNt6PcpRZOktSh6v-u00A: leader: 1 -> 2, leaderEpoch: 3 -> 4, partitionEpoch: 7 -> 8 (org.apache.kafka.controller.ReplicationControlManager)",
		"[2025-10-16 16:57:14,003] INFO [QuorumController id=1] UNCLEAN partition change for t-0 with topic ID AMNt6PcpRZOktSh6v-u00A: leader: 2 -> 1, leaderEpoch: 4 -> 5, partitionEpoch: 9 -> 10 (org.apache.kafka.controller.ReplicationControlManager)",
	)
	n := 0
	for _, r := range rs {
		if r.NewUnclean {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want 2 distinct unclean elections, got %d", n)
	}
}

// "Shrinking ISR" only proposes a shrink: it counts once Kafka commits it
// ("ISR updated to", or the DEBUG line of a commit that reached the leader
// through metadata first), never when the controller rejects it, and a
// proposal's larger start still reveals an expansion no line showed.
func TestCheckerShrinkCountedOnCommit(t *testing.T) {
	shrinking := "[2025-10-16 15:57:10,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 5, endOffset: 10). Out of sync replicas: (brokerId: 3, endOffset: 5, lastCaughtUpTimeMs: 1). (kafka.cluster.Partition)"
	rejected := "[2025-10-16 15:57:11,000] INFO [Partition t-0 broker=1] Failed to alter partition to PendingShrinkIsr(outOfSyncReplicaIds=Set(3), sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=5), BrokerState(brokerId=2, brokerEpoch=6)), leaderRecoveryState=RECOVERED, partitionEpoch=7), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED)) since the controller rejected the request with INELIGIBLE_REPLICA. Partition state has been reset to the latest committed state CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED). (kafka.cluster.Partition)"
	staleEpoch := "[2025-10-16 15:57:11,000] DEBUG [Partition t-0 broker=1] Failed to alter partition to PendingShrinkIsr(outOfSyncReplicaIds=Set(3), sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=5), BrokerState(brokerId=2, brokerEpoch=6)), leaderRecoveryState=RECOVERED, partitionEpoch=7), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED)) because the partition epoch is invalid. Partition state may be out of sync, awaiting new the latest metadata. (kafka.cluster.Partition)"
	shrunkFirst := "[2025-10-16 15:57:11,000] DEBUG [Partition t-0 broker=1] Ignoring failed ISR update to PendingShrinkIsr(outOfSyncReplicaIds=Set(3), sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=[BrokerState(brokerId=1, brokerEpoch=5), BrokerState(brokerId=2, brokerEpoch=6)], leaderRecoveryState=RECOVERED, partitionEpoch=7), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1, 2), leaderRecoveryState=RECOVERED) (kafka.cluster.Partition)"
	expandedFirst := "[2025-10-16 15:57:11,000] DEBUG [Partition t-0 broker=1] Ignoring failed ISR update to PendingExpandIsr(newInSyncReplicaId=3, lastCommittedState=CommittedPartitionState(isr=Set(1, 2), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1, 2, 3), leaderRecoveryState=RECOVERED) (kafka.cluster.Partition)"
	shrinkingAgain := "[2025-10-16 15:57:13,000] INFO [Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1,3. Leader: (highWatermark: 9, endOffset: 12). Out of sync replicas: (brokerId: 2, endOffset: 9, lastCaughtUpTimeMs: 1). (kafka.cluster.Partition)"
	committedAgain := "[2025-10-16 15:57:14,000] INFO [Partition t-0 broker=1] ISR updated to 1,3  and version updated to 10 (kafka.cluster.Partition)"
	count := func(rs []Result) (shrinks, expands int) {
		for _, r := range rs {
			if r.ISRShrink {
				shrinks++
			}
			if r.ISRExpand {
				expands++
			}
		}
		return
	}
	tests := []struct {
		name                   string
		lines                  []string
		wantShrink, wantExpand int
	}{
		{"shrink then its commit", []string{shrinking, fill(isrLine, "1,2", "8")}, 1, 0},
		{"shrink never committed", []string{shrinking}, 0, 0},
		{"shrink rejected by the controller", []string{shrinking, rejected}, 0, 0},
		{"shrink rejected for a stale partition epoch", []string{shrinking, staleEpoch}, 0, 0},
		{"rejected, proposed again and committed", []string{shrinking, staleEpoch, shrinking, fill(isrLine, "1,2", "8")}, 1, 0},
		{"shrink committed through metadata before the answer", []string{shrinking, shrunkFirst}, 1, 0},
		{"shrink, commit, expand", []string{shrinking, fill(isrLine, "1,2", "8"), fill(isrLine, "1,2,3", "9")}, 1, 1},
		{"controller-side shrink seen only as a smaller ISR", []string{fill(isrLine, "1,2,3", "7"), fill(isrLine, "1,2", "8")}, 1, 0},
		{"an expansion no line showed, seen as the next shrink's larger start", []string{shrinking, fill(isrLine, "1,2", "8"), shrinkingAgain, committedAgain}, 2, 1},
		{"an expansion seen at DEBUG is not counted again by the next shrink", []string{shrinking, fill(isrLine, "1,2", "8"), expandedFirst, shrinkingAgain, committedAgain}, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e := count(checkLines(t, tt.lines...))
			if s != tt.wantShrink || e != tt.wantExpand {
				t.Errorf("want %d shrinks / %d expands, got %d / %d", tt.wantShrink, tt.wantExpand, s, e)
			}
		})
	}
}

// TestCheckerZooKeeperUncleanElection: a ZooKeeper-mode controller logs an
// unclean election only as OfflinePartition → OnlinePartition with a leader
// outside the last ISR it logged (RECOVERING from 3.2 on). Synthetic 2.8–3.5
// lines and a real 3.9.1 controller's state-change.log (issue 20, item 3).
func TestCheckerZooKeeperUncleanElection(t *testing.T) {
	for file, want := range map[string][]string{
		// orders-1: leader 3 was in the ISR [2,3] (clean); orders-0: 3 was not
		// in [1]; payments-0: RECOVERING, repeated by the ISR change after it;
		// payments-1: RECOVERED, no ISR known before (clean).
		"../logparse/testdata/zk-controller-2.8-3.5.log":            {"orders-0", "payments-0"},
		"../logparse/testdata/real-3.9.1-zk-unclean-controller.log": {"lost-0"},
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, c := logparse.NewParser(time.UTC), NewChecker()
		var got []string
		checked := 0
		for _, l := range strings.Split(string(data), "\n") {
			ev, ok := parseLine(p, []byte(l))
			if !ok {
				continue
			}
			var r Result
			c.Observe(&ev, &r)
			if r.Checked.Has(NoUncleanElection) {
				checked++
			}
			if r.NewUnclean != r.Violated.Has(NoUncleanElection) {
				t.Errorf("%s: NewUnclean %v but violated %v", file, r.NewUnclean, r.Violated)
			}
			if r.NewUnclean {
				got = append(got, fmt.Sprintf("%s-%d", ev.Topic, ev.Partition))
			}
		}
		if !slices.Equal(got, want) || checked == 0 {
			t.Errorf("%s: unclean elections %v (%d checked), want %v", file, got, checked, want)
		}
	}
}
