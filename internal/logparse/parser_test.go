package logparse

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// testTime is the timestamp every synthetic line below carries.
var testTime = time.Date(2025, 10, 16, 15, 57, 12, 614_000_000, time.UTC)

// line builds a default-layout line: "[%d] %p %m (%c)".
func line(level, msg, logger string) string {
	return "[2025-10-16 15:57:12,614] " + level + " " + msg + " (" + logger + ")"
}

// want returns the event a line yields before the type's own fields: the
// parser's defaults plus the common fields.
func want(t Type, level Level, logger string, broker int32, topic string, partition int32, set func(*Event)) Event {
	ev := Event{
		Type: t, Time: testTime, Level: level, Logger: logger,
		Broker: broker, Topic: topic, Partition: partition, Line: 1,
		Replica: -1, Leader: -1, Version: -1, PartitionEpoch: -1, LeaderEpoch: -1,
		StartOffset: -1, Epoch: -1, LargestOffset: -1,
	}
	if set != nil {
		set(&ev)
	}
	return ev
}

// normalize makes nil and empty slices compare equal: the parser returns
// empty scratch slices, tests write nil.
func normalize(ev Event) Event {
	if len(ev.ISR) == 0 {
		ev.ISR = nil
	}
	if len(ev.FromISR) == 0 {
		ev.FromISR = nil
	}
	if len(ev.ToISR) == 0 {
		ev.ToISR = nil
	}
	if len(ev.OutOfSync) == 0 {
		ev.OutOfSync = nil
	}
	if len(ev.Acked) == 0 {
		ev.Acked = nil
	}
	if len(ev.Awaiting) == 0 {
		ev.Awaiting = nil
	}
	return ev
}

const (
	partitionLogger = "kafka.cluster.Partition"
	stateLogger     = "state.change.logger"
	fetcherLogger   = "kafka.server.ReplicaFetcherThread"
	replicaManager  = "kafka.server.ReplicaManager"
	unifiedLog41    = "org.apache.kafka.storage.internals.log.UnifiedLog"
	rcm             = "org.apache.kafka.controller.ReplicationControlManager"
	pcb             = "org.apache.kafka.controller.PartitionChangeBuilder"
	topicID         = "AMNt6PcpRZOktSh6v-u00A"
)

type parseCase struct {
	name string
	in   string
	cont string // continuation lines of the record
	want Event
}

var parseCases = []parseCase{
	// E1, three LogOffsetMetadata renderings (§4) and a message-only offset.
	{
		"hw_update/3.6+", line("DEBUG", "[Partition performance-test-2 broker=1] High watermark updated from (offset=88, segment=[16:76938]) to (offset=89, segment=[16:78032])", partitionLogger), "",
		want(HWUpdate, LevelDebug, partitionLogger, 1, "performance-test", 2, func(e *Event) { e.From, e.To = 88, 89 }),
	},
	{
		"hw_update/2.8-3.4", line("DEBUG", "[Partition t-0 broker=3] High watermark updated from (offset=88 segment=[16:76938]) to (offset=89 segment=[16:78032])", partitionLogger), "",
		want(HWUpdate, LevelDebug, partitionLogger, 3, "t", 0, func(e *Event) { e.From, e.To = 88, 89 }),
	},
	{
		"hw_update/3.5-no-separator", line("DEBUG", "[Partition t-0 broker=3] High watermark updated from (offset=88segment=[16:76938]) to (offset=89segment=[16:78032])", partitionLogger), "",
		want(HWUpdate, LevelDebug, partitionLogger, 3, "t", 0, func(e *Event) { e.From, e.To = 88, 89 }),
	},
	{
		"hw_update/message-only", line("DEBUG", "[Partition my-topic-a-10 broker=3] High watermark updated from (offset=7, segment=[-1:-1]) to (offset=9, segment=[-1:-1])", partitionLogger), "",
		want(HWUpdate, LevelDebug, partitionLogger, 3, "my-topic-a", 10, func(e *Event) { e.From, e.To = 7, 9 }),
	},

	// E2
	{
		"hw_skip", line("TRACE", "[Partition performance-test-2 broker=1] Skipping update high watermark since new hw (offset=88, segment=[16:76938]) is not larger than old value. All current LEOs are Set(replica 2: (offset=88, segment=[16:76938]), replica 3: (offset=88, segment=[16:76938]), replica 1: (offset=89, segment=[16:78032]))", partitionLogger), "",
		want(HWSkip, LevelTrace, partitionLogger, 1, "performance-test", 2, func(e *Event) { e.From = 88 }),
	},
	{
		"isr_ack_progress/awaiting", line("TRACE", "[Partition performance-test-2 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89), awaiting Set(broker 3: 88, broker 2: 88)", partitionLogger), "",
		want(ISRAckProgress, LevelTrace, partitionLogger, 1, "performance-test", 2, func(e *Event) {
			e.Offset = 89
			e.Acked = []ReplicaOffset{{1, 89}}
			e.Awaiting = []ReplicaOffset{{3, 88}, {2, 88}}
		}),
	},
	{
		"isr_ack_progress/complete", line("TRACE", "[Partition performance-test-2 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 3: 89, broker 2: 89, broker 1: 89), awaiting Set()", partitionLogger), "",
		want(ISRAckProgress, LevelTrace, partitionLogger, 1, "performance-test", 2, func(e *Event) {
			e.Offset = 89
			e.Acked = []ReplicaOffset{{3, 89}, {2, 89}, {1, 89}}
			e.AllAcked = true
		}),
	},
	{
		"replica_leo", line("DEBUG", "[Partition performance-test-0 broker=2] Recorded replica 1 log end offset (LEO) position 771005 and log start offset 0.", partitionLogger), "",
		want(ReplicaLEO, LevelDebug, partitionLogger, 2, "performance-test", 0, func(e *Event) { e.Replica, e.LEO = 1, 771005 }),
	},
	{
		"log_loaded", line("INFO", "[Partition orders-3 broker=2] Log loaded for partition orders-3 with initial high watermark 17", partitionLogger), "",
		want(LogLoaded, LevelInfo, partitionLogger, 2, "orders", 3, func(e *Event) { e.HW = 17 }),
	},

	// E4: unclosed Scala set (3.7–4.1), HashSet, Java set (4.2), closed (later trunk).
	{
		"hw_blocked/3.7-4.1", line("TRACE", "[Partition t-0 broker=1] Not increasing HWM because partition is under min ISR(ISR=Set(1)", partitionLogger), "",
		want(HWBlockedUnderMinISR, LevelTrace, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR = []int32{1} }),
	},
	{
		"hw_blocked/hashset", line("TRACE", "[Partition t-0 broker=1] Not increasing HWM because partition is under min ISR(ISR=HashSet(1, 2, 3, 4, 5)", partitionLogger), "",
		want(HWBlockedUnderMinISR, LevelTrace, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR = []int32{1, 2, 3, 4, 5} }),
	},
	{
		"hw_blocked/4.2", line("TRACE", "[Partition t-0 broker=1] Not increasing HWM because partition is under min ISR(ISR=[1]", partitionLogger), "",
		want(HWBlockedUnderMinISR, LevelTrace, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR = []int32{1} }),
	},
	{
		"hw_blocked/trunk", line("TRACE", "[Partition t-0 broker=1] Not increasing HWM because partition is under min ISR(ISR=[1])", partitionLogger), "",
		want(HWBlockedUnderMinISR, LevelTrace, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR = []int32{1} }),
	},

	// E5, every logger.
	{
		"hw_non_monotonic/kafka.log.Log", line("WARN", "[Log partition=orders-3, dir=/var/kafka] Non-monotonic update of high watermark from (offset=5120 segment=[4096:81920]) to (offset=5117 segment=[4096:81404])", "kafka.log.Log"), "",
		want(HWNonMonotonic, LevelWarn, "kafka.log.Log", -1, "orders", 3, func(e *Event) { e.From, e.To = 5120, 5117 }),
	},
	{
		"hw_non_monotonic/UnifiedLog", line("WARN", "[UnifiedLog partition=orders-3, dir=/var/kafka] Non-monotonic update of high watermark from (offset=5120, segment=[4096:81920]) to (offset=5117, segment=[4096:81404])", "kafka.log.UnifiedLog"), "",
		want(HWNonMonotonic, LevelWarn, "kafka.log.UnifiedLog", -1, "orders", 3, func(e *Event) { e.From, e.To = 5120, 5117 }),
	},
	{
		"hw_non_monotonic/4.1", line("WARN", "[UnifiedLog partition=orders-3, dir=/var/kafka] Non-monotonic update of high watermark from (offset=5120, segment=[4096:81920]) to (offset=5117, segment=[4096:81404])", unifiedLog41), "",
		want(HWNonMonotonic, LevelWarn, unifiedLog41, -1, "orders", 3, func(e *Event) { e.From, e.To = 5120, 5117 }),
	},
	{
		"hw_non_monotonic/MergedLog", line("WARN", "[MergedLog partition=orders-3, dir=/var/kafka] Non-monotonic update of high watermark from (offset=5120, segment=[4096:81920]) to (offset=5117, segment=[4096:81404])", "kafka.log.MergedLog"), "",
		want(HWNonMonotonic, LevelWarn, "kafka.log.MergedLog", -1, "orders", 3, func(e *Event) { e.From, e.To = 5120, 5117 }),
	},

	// E6, both replica-detail forms and "unknown".
	{
		"isr_shrink/2.8-3.5", line("INFO", "[Partition payments-2 broker=3] Shrinking ISR from 3,1,4 to 3. Leader: (highWatermark: 2051, endOffset: 2064). Out of sync replicas: (brokerId: 1, endOffset: 2051) (brokerId: 4, endOffset: 2055).", partitionLogger), "",
		want(ISRShrink, LevelInfo, partitionLogger, 3, "payments", 2, func(e *Event) {
			e.FromISR, e.ToISR = []int32{3, 1, 4}, []int32{3}
			e.HW, e.LEO = 2051, 2064
			e.OutOfSync = []ReplicaOffset{{1, 2051}, {4, 2055}}
		}),
	},
	{
		"isr_shrink/3.6+", line("INFO", "[Partition t-0 broker=1] Shrinking ISR from 1,2,3 to 1,2. Leader: (highWatermark: 100, endOffset: 120). Out of sync replicas: (brokerId: 3, endOffset: 90, lastCaughtUpTimeMs: 1729000000000).", partitionLogger), "",
		want(ISRShrink, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) {
			e.FromISR, e.ToISR = []int32{1, 2, 3}, []int32{1, 2}
			e.HW, e.LEO = 100, 120
			e.OutOfSync = []ReplicaOffset{{3, 90}}
		}),
	},
	{
		"isr_shrink/unknown", line("INFO", "[Partition t-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 100, endOffset: 120). Out of sync replicas: (brokerId: 2, endOffset: unknown, lastCaughtUpTimeMs: unknown).", partitionLogger), "",
		want(ISRShrink, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) {
			e.FromISR, e.ToISR = []int32{1, 2}, []int32{1}
			e.HW, e.LEO = 100, 120
			e.OutOfSync = []ReplicaOffset{{2, -1}}
		}),
	},
	{
		"isr_expand/2.7", line("INFO", "[Partition t-0 broker=3] Expanding ISR from 3 to 3,4", partitionLogger), "",
		want(ISRExpand, LevelInfo, partitionLogger, 3, "t", 0, func(e *Event) { e.FromISR, e.ToISR = []int32{3}, []int32{3, 4} }),
	},
	{
		"isr_expand/committed-first-3.1+", line("DEBUG", "[Partition t-0 broker=1] Ignoring failed ISR update to PendingExpandIsr(newInSyncReplicaId=2, sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=12), BrokerState(brokerId=2, brokerEpoch=99)), leaderRecoveryState=RECOVERED, partitionEpoch=4), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1, 2), leaderRecoveryState=RECOVERED)", partitionLogger), "",
		want(ISRExpand, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.FromISR, e.ToISR = []int32{1}, []int32{1, 2} }),
	},
	{
		"isr_expand/committed-first-2.8-3.0", line("DEBUG", "[Partition t-0 broker=1] Ignoring failed ISR update to PendingExpandIsr(isr=Set(1, 3), newInSyncReplicaId=2) since we have already updated state to CommittedIsr(isr=Set(1, 3, 2))", partitionLogger), "",
		want(ISRExpand, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.FromISR, e.ToISR = []int32{1, 3}, []int32{1, 3, 2} }),
	},

	{
		"isr_shrink_committed/committed-first", line("DEBUG", "[Partition t-0 broker=1] Ignoring failed ISR update to PendingShrinkIsr(outOfSyncReplicaIds=Set(3), sentLeaderAndIsr=LeaderAndIsr(leader=1, leaderEpoch=0, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=12)), leaderRecoveryState=RECOVERED, partitionEpoch=3), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(1, 3), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1), leaderRecoveryState=RECOVERED)", partitionLogger), "",
		want(ISRShrinkCommitted, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.FromISR, e.ToISR = []int32{1, 3}, []int32{1} }),
	},

	// E8, four forms (+ 2.7).
	{
		"isr_update/2.8-3.0", line("INFO", "[Partition t-0 broker=1] ISR updated to 0,1 and version updated to [6]", partitionLogger), "",
		want(ISRUpdate, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR, e.Version = []int32{0, 1}, 6 }),
	},
	{
		"isr_update/3.1-3.4", line("INFO", "[Partition t-0 broker=1] ISR updated to 1,2,3 and version updated to 18", partitionLogger), "",
		want(ISRUpdate, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR, e.Version = []int32{1, 2, 3}, 18 }),
	},
	{
		"isr_update/3.5+", line("INFO", "[Partition __consumer_offsets-1 broker=1] ISR updated to 2,1,3  and version updated to 18", partitionLogger), "",
		want(ISRUpdate, LevelInfo, partitionLogger, 1, "__consumer_offsets", 1, func(e *Event) { e.ISR, e.Version = []int32{2, 1, 3}, 18 }),
	},
	{
		"isr_update/under-min-isr", line("INFO", "[Partition t-0 broker=1] ISR updated to 1 (under-min-isr) and version updated to 19", partitionLogger), "",
		want(ISRUpdate, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR, e.Version, e.UnderMinISR = []int32{1}, 19, true }),
	},
	{
		"isr_update/2.7-alterisr", line("INFO", "[Partition t-0 broker=1] ISR updated from AlterIsr to 1,2 and version updated to [7]", partitionLogger), "",
		want(ISRUpdate, LevelInfo, partitionLogger, 1, "t", 0, func(e *Event) { e.ISR, e.Version = []int32{1, 2}, 7 }),
	},

	// E9
	{
		"alter_partition_failed/3.3+rejected", line("INFO", "[Partition orders-0 broker=4] Failed to alter partition to PendingExpandIsr(newInSyncReplicaId=3, sentLeaderAndIsr=LeaderAndIsr(leader=4, leaderEpoch=3, isrWithBrokerEpoch=List(BrokerState(brokerId=4, brokerEpoch=664), BrokerState(brokerId=3, brokerEpoch=2117)), leaderRecoveryState=RECOVERED, partitionEpoch=12), leaderRecoveryState=RECOVERED, lastCommittedState=CommittedPartitionState(isr=Set(4), leaderRecoveryState=RECOVERED)) since the controller rejected the request with INELIGIBLE_REPLICA. Partition state has been reset to the latest committed state CommittedPartitionState(isr=Set(4), leaderRecoveryState=RECOVERED).", partitionLogger), "",
		want(AlterPartitionFailed, LevelInfo, partitionLogger, 4, "orders", 0, func(e *Event) { e.Reason = "INELIGIBLE_REPLICA" }),
	},
	{
		"alter_partition_failed/3.2-epoch", line("DEBUG", "[Partition t-0 broker=1] Failed to alter partition to PendingShrinkIsr(isr=Set(1, 2), outOfSyncReplicaIds=Set(3)) since the leader epoch is old. Giving up.", partitionLogger), "",
		want(AlterPartitionFailed, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.Reason = "leader epoch is old" }),
	},
	{
		"alter_partition_failed/2.8-update-isr", line("DEBUG", "[Partition t-0 broker=1] Failed to update ISR to PendingExpandIsr(isr=Set(1, 2), newInSyncReplicaId=3) since it doesn't know about this topic or partition. Giving up.", partitionLogger), "",
		want(AlterPartitionFailed, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.Reason = "it doesn't know about this topic or partition" }),
	},
	{
		"alter_partition_failed/unexpected", line("WARN", "[Partition t-0 broker=1] Failed to update ISR to PendingExpandIsr(isr=Set(1, 2), newInSyncReplicaId=3) due to unexpected NETWORK_EXCEPTION. Retrying.", partitionLogger), "",
		want(AlterPartitionFailed, LevelWarn, partitionLogger, 1, "t", 0, func(e *Event) { e.Reason = "NETWORK_EXCEPTION" }),
	},
	{
		"alter_partition_failed/3.2-invalid", line("DEBUG", "[Partition t-0 broker=1] Failed to alter partition to PendingShrinkIsr(isr=Set(1, 2), outOfSyncReplicaIds=Set(3)) because the partition epoch is invalid. Giving up.", partitionLogger), "",
		want(AlterPartitionFailed, LevelDebug, partitionLogger, 1, "t", 0, func(e *Event) { e.Reason = "partition epoch is invalid" }),
	},

	// E10
	{
		"produce_rejected/<=4.0", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition events-7", replicaManager),
		"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR Set(3) is insufficient to satisfy the min.isr requirement of 2 for partition events-7",
		want(ProduceRejectedMinISR, LevelError, replicaManager, 1, "events", 7, func(e *Event) { e.ISR, e.ISRSize, e.MinISR = []int32{3}, 1, 2 }),
	},
	{
		"produce_rejected/4.1", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition AMNt6PcpRZOktSh6v-u00A:performance-test-0", replicaManager),
		"org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition performance-test-0, live replica(s) broker.id are : Set(1)",
		want(ProduceRejectedMinISR, LevelError, replicaManager, 1, "performance-test", 0, func(e *Event) {
			e.TopicID, e.ISR, e.ISRSize, e.MinISR = topicID, []int32{1}, 1, 2
		}),
	},
	{
		"produce_rejected/log4j2.25-blank-line", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition events-7", replicaManager),
		"\norg.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR HashSet(1, 2, 3, 4, 5) is insufficient to satisfy the min.isr requirement of 6 for partition events-7",
		want(ProduceRejectedMinISR, LevelError, replicaManager, 1, "events", 7, func(e *Event) { e.ISR, e.ISRSize, e.MinISR = []int32{1, 2, 3, 4, 5}, 5, 6 }),
	},

	// E12 leader, every form.
	{
		"leader_start/2.8-3.2", line("INFO", "[Broker id=1] Leader t-0 starts at leader epoch 5 from offset 100 with high watermark 90 ISR [1,2,3] addingReplicas [] removingReplicas []. Previous leader epoch was 4.", stateLogger), "",
		want(LeaderStart, LevelInfo, stateLogger, 1, "t", 0, func(e *Event) {
			e.Leader, e.LeaderEpoch, e.StartOffset, e.HW, e.ISR = 1, 5, 100, 90, []int32{1, 2, 3}
		}),
	},
	{
		"leader_start/3.3-3.4", line("INFO", "[Broker id=2] Leader orders-3 with topic id Some(Q2x7YtZ4Rj2mE0a1b2c3dA) starts at leader epoch 4 from offset 1200 with partition epoch 9, high watermark 1200, ISR [2,1,3], adding replicas [] and removing replicas []. Previous leader epoch was 3.", stateLogger), "",
		want(LeaderStart, LevelInfo, stateLogger, 2, "orders", 3, func(e *Event) {
			e.TopicID, e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW, e.ISR = "Q2x7YtZ4Rj2mE0a1b2c3dA", 2, 4, 1200, 9, 1200, []int32{2, 1, 3}
		}),
	},
	{
		"leader_start/3.5", line("INFO", "[Broker id=2] Leader orders-3 with topic id Some(Q2x7YtZ4Rj2mE0a1b2c3dA) starts at leader epoch 0 from offset 0 with partition epoch 0, high watermark 0, ISR [2], adding replicas [] and removing replicas [] . Previous leader epoch was -1.", stateLogger), "",
		want(LeaderStart, LevelInfo, stateLogger, 2, "orders", 3, func(e *Event) {
			e.TopicID, e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW, e.ISR = "Q2x7YtZ4Rj2mE0a1b2c3dA", 2, 0, 0, 0, 0, []int32{2}
		}),
	},
	{
		"leader_start/3.6+", line("INFO", "[Broker id=2] Leader orders-3 with topic id Some(Q2x7YtZ4Rj2mE0a1b2c3dA) starts at leader epoch 5 from offset 1400 with partition epoch 11, high watermark 1390, ISR [2,3], adding replicas [] and removing replicas [] . Previous leader Some(1) and previous leader epoch was 4.", stateLogger), "",
		want(LeaderStart, LevelInfo, stateLogger, 2, "orders", 3, func(e *Event) {
			e.TopicID, e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW, e.ISR = "Q2x7YtZ4Rj2mE0a1b2c3dA", 2, 5, 1400, 11, 1390, []int32{2, 3}
		}),
	},
	{
		"leader_start/under-min-isr", line("INFO", "[Broker id=2] Leader orders-3 with topic id None starts at leader epoch 5 from offset 1400 with partition epoch 11, high watermark 1390, ISR [2], adding replicas [] and removing replicas [] (under-min-isr). Previous leader None and previous leader epoch was 4.", stateLogger), "",
		want(LeaderStart, LevelInfo, stateLogger, 2, "orders", 3, func(e *Event) {
			e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW, e.ISR, e.UnderMinISR = 2, 5, 1400, 11, 1390, []int32{2}, true
		}),
	},

	// E13 follower, every form.
	{
		"follower_start/2.8-3.2", line("INFO", "[Broker id=3] Follower t-0 starts at leader epoch 5 from offset 100 with high watermark 90. Previous leader epoch was 4.", stateLogger), "",
		want(FollowerStart, LevelInfo, stateLogger, 3, "t", 0, func(e *Event) { e.LeaderEpoch, e.StartOffset, e.HW = 5, 100, 90 }),
	},
	{
		"follower_start/3.3-3.5", line("INFO", "[Broker id=3] Follower orders-3 starts at leader epoch 4 from offset 1200 with partition epoch 9 and high watermark 1200. Current leader is 2. Previous leader epoch was 3.", stateLogger), "",
		want(FollowerStart, LevelInfo, stateLogger, 3, "orders", 3, func(e *Event) {
			e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW = 2, 4, 1200, 9, 1200
		}),
	},
	{
		"follower_start/3.6+", line("INFO", "[Broker id=3] Follower orders-3 starts at leader epoch 7 from offset 1200 with partition epoch 9 and high watermark 1200. Current leader is 2. Previous leader Some(2) and previous leader epoch was 7.", stateLogger), "",
		want(FollowerStart, LevelInfo, stateLogger, 3, "orders", 3, func(e *Event) {
			e.Leader, e.LeaderEpoch, e.StartOffset, e.PartitionEpoch, e.HW = 2, 7, 1200, 9, 1200
		}),
	},
	{
		"leader_recovering", line("INFO", "[Broker id=2] The topic partition orders-3 was marked as RECOVERING. Marking the topic partition as RECOVERED.", stateLogger), "",
		want(LeaderRecovering, LevelInfo, stateLogger, 2, "orders", 3, nil),
	},

	// E16a
	{
		"fetcher_truncation/2.8-3.0", line("INFO", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition t-0 to local high watermark 5117", fetcherLogger), "",
		want(FetcherTruncation, LevelInfo, fetcherLogger, 1, "t", 0, func(e *Event) { e.Leader, e.Offset, e.Reason = 3, 5117, ReasonHighWatermark }),
	},
	{
		"fetcher_truncation/3.1+hw", line("INFO", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition t-0 with TruncationState(offset=5117, completed=true) due to local high watermark 5117", fetcherLogger), "",
		want(FetcherTruncation, LevelInfo, fetcherLogger, 1, "t", 0, func(e *Event) { e.Leader, e.Offset, e.Reason = 3, 5117, ReasonHighWatermark }),
	},
	{
		"fetcher_truncation/3.1+epoch", line("INFO", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition performance-test-1 with TruncationState(offset=768982, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=1, leaderEpoch=5, endOffset=768982)", fetcherLogger), "",
		want(FetcherTruncation, LevelInfo, fetcherLogger, 1, "performance-test", 1, func(e *Event) { e.Leader, e.Offset, e.Reason = 3, 768982, ReasonLeaderEpoch }),
	},
	{
		"fetcher_truncation/reset-latest", line("WARN", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Reset fetch offset for partition t-0 from 120 to current leader's latest offset 100", fetcherLogger), "",
		want(FetcherTruncation, LevelWarn, fetcherLogger, 1, "t", 0, func(e *Event) { e.Leader, e.Offset, e.Reason = 3, 100, ReasonLeaderEndOffset }),
	},
	{
		"fetcher_truncation/truncate-fully", line("WARN", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncate fully and reset fetch offset for partition t-0 from 120 to the current leader's start offset 500 because the local replica's end offset is smaller than the current leader's start offsets.", fetcherLogger), "",
		want(FetcherTruncation, LevelWarn, fetcherLogger, 1, "t", 0, func(e *Event) { e.Leader, e.Offset, e.Reason = 3, 500, ReasonLeaderStartOffset }),
	},

	// E16b
	{
		"log_truncation/data-removed", line("INFO", "[UnifiedLog partition=t-0, dir=/tmp/kafka-logs-1] Truncating to offset 5117", unifiedLog41), "",
		want(LogTruncation, LevelInfo, unifiedLog41, -1, "t", 0, func(e *Event) { e.Offset = 5117 }),
	},
	{
		"log_truncation/no-effect", line("INFO", "[UnifiedLog partition=__consumer_offsets-41, dir=/tmp/kafka-logs-1] Truncating to 6 has no effect as the largest offset in the log is 5", unifiedLog41), "",
		want(LogTruncation, LevelInfo, unifiedLog41, -1, "__consumer_offsets", 41, func(e *Event) { e.Offset, e.NoEffect, e.LargestOffset = 6, true, 5 }),
	},
	{
		"log_truncation/2.8-Log", line("INFO", "[Log partition=t-0, dir=/var/kafka] Truncating to offset 12", "kafka.log.Log"), "",
		want(LogTruncation, LevelInfo, "kafka.log.Log", -1, "t", 0, func(e *Event) { e.Offset = 12 }),
	},

	// E16c
	{
		"truncation_below_hw/fetcher", line("WARN", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating orders-3 to offset 5117 below high watermark 5120", fetcherLogger), "",
		want(TruncationBelowHW, LevelWarn, fetcherLogger, 1, "orders", 3, func(e *Event) { e.Leader, e.Offset, e.HW = 3, 5117, 5120 }),
	},
	{
		"truncation_below_hw/4.2-future", line("WARN", "[UnifiedLog partition=foo-0, dir=/d] Truncating future foo-0 to offset 5 below high watermark 10", unifiedLog41), "",
		want(TruncationBelowHW, LevelWarn, unifiedLog41, -1, "foo", 0, func(e *Event) { e.Offset, e.HW = 5, 10 }),
	},

	// E17
	{
		"epoch_entry", line("DEBUG", "[LeaderEpochCache t-0] Appended new epoch entry EpochEntry(epoch=6, startOffset=1234). Cache now contains 3 entries.", "org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache"), "",
		want(EpochEntry, LevelDebug, "org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache", -1, "t", 0, func(e *Event) { e.Epoch, e.StartOffset = 6, 1234 }),
	},
	{
		"epoch_conflict_truncation", line("WARN", "[LeaderEpochCache t-0] New epoch entry EpochEntry(epoch=6, startOffset=1200) caused truncation of conflicting entries ListBuffer(EpochEntry(epoch=5, startOffset=1230)). Cache now contains 3 entries.", "kafka.server.epoch.LeaderEpochFileCache"), "",
		want(EpochConflictTruncation, LevelWarn, "kafka.server.epoch.LeaderEpochFileCache", -1, "t", 0, func(e *Event) { e.Epoch, e.StartOffset = 6, 1200 }),
	},

	// E18
	{
		"unclean_election/partition-change", line("INFO", "[QuorumController id=1] UNCLEAN partition change for orders-0 with topic ID AMNt6PcpRZOktSh6v-u00A: isr: [1] -> [2], leader: 1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 2 -> 3, partitionEpoch: 5 -> 6", rcm), "",
		want(UncleanElection, LevelInfo, rcm, 1, "orders", 0, func(e *Event) { e.TopicID, e.Leader, e.PartitionEpoch = topicID, 2, 6 }),
	},
	{
		"unclean_election/3.0-3.4-prefix", line("INFO", "[Controller 3000] UNCLEAN partition change for orders-0 with topic ID AMNt6PcpRZOktSh6v-u00A: leader: -1 -> 2, leaderEpoch: 2 -> 3, partitionEpoch: 5 -> 6", rcm), "",
		want(UncleanElection, LevelInfo, rcm, 3000, "orders", 0, func(e *Event) { e.TopicID, e.Leader, e.PartitionEpoch = topicID, 2, 6 }),
	},
	{
		"unclean_election/setting-new-leader-3.6", line("INFO", "Setting new leader for topicId AMNt6PcpRZOktSh6v-u00A, partition 4 to 2 using an unclean election", pcb), "",
		want(UncleanElection, LevelInfo, pcb, -1, "", 4, func(e *Event) { e.TopicID, e.Leader = topicID, 2 }),
	},
	{
		"unclean_election/setting-new-leader-4.1", line("INFO", "Setting new leader for topicId AMNt6PcpRZOktSh6v-u00A, partition 4 to 2 using an unclean election. Previous partition: PartitionRegistration(replicas=[1, 2], isr=[1], leader=1), change record: PartitionChangeRecord(partitionId=4, leader=2)", pcb), "",
		want(UncleanElection, LevelInfo, pcb, -1, "", 4, func(e *Event) { e.TopicID, e.Leader = topicID, 2 }),
	},
	{
		"elr_election", line("INFO", "Setting new leader for topicId AMNt6PcpRZOktSh6v-u00A, partition 4 to 3 using ELR. Previous partition: PartitionRegistration(…), change record: PartitionChangeRecord(…)", pcb), "",
		want(ELRElection, LevelInfo, pcb, -1, "", 4, func(e *Event) { e.TopicID, e.Leader = topicID, 3 }),
	},
	{
		"broker_fenced/3.x", line("INFO", "[QuorumController id=1] Fencing broker 2 because its session has timed out.", rcm), "",
		want(BrokerFenced, LevelInfo, rcm, 1, "", -1, func(e *Event) { e.Replica = 2 }),
	},
	{
		"broker_fenced/4.1", line("INFO", "[QuorumController id=1] Fencing broker 2 at epoch 664 because its session has timed out.", rcm), "",
		want(BrokerFenced, LevelInfo, rcm, 1, "", -1, func(e *Event) { e.Replica, e.Epoch = 2, 664 }),
	},
}

func TestParse(t *testing.T) {
	p := NewParser(time.UTC)
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := p.Parse(Record{First: []byte(tc.in), Cont: []byte(tc.cont), Line: 1, Lines: 1})
			if !ok {
				t.Fatalf("want a %s event, got not ours", tc.want.Type)
			}
			if w, g := normalize(tc.want), normalize(got); !reflect.DeepEqual(w, g) {
				t.Errorf("want\n%+v\ngot\n%+v", w, g)
			}
		})
	}
}

// TestParseNotOurs lists lines that look close to ours but are not events.
func TestParseNotOurs(t *testing.T) {
	p := NewParser(time.UTC)
	for _, tc := range []struct{ name, in, cont string }{
		{"other logger", line("INFO", "[GroupCoordinator id=1] Scheduling unloading of metadata for __consumer_offsets-13 with epoch OptionalInt[5]", "org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime"), ""},
		{"producer client", line("WARN", "[Producer clientId=console-producer] Got error produce response with correlation id 5 on topic-partition performance-test-0, retrying (2 attempts left). Error: NOT_ENOUGH_REPLICAS", "org.apache.kafka.clients.producer.internals.Sender"), ""},
		{
			"append error without NotEnoughReplicas", line("INFO", "[ReplicaManager broker=1] Error processing append operation on partition t-0", replicaManager),
			"org.apache.kafka.common.errors.InvalidProducerEpochException: Producer's epoch is stale",
		},
		{
			"append error at ERROR, other exception", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition t-0", replicaManager),
			"org.apache.kafka.common.errors.NotLeaderOrFollowerException: This server is not the leader",
		},
		{"append error, no continuation", line("ERROR", "[ReplicaManager broker=1] Error processing append operation on partition t-0", replicaManager), ""},
		{"transaction marker", line("INFO", "[Transaction Marker Request Completion Handler 1]: Sending txn-1's transaction marker for partition t-0 has failed with error org.apache.kafka.common.errors.NotEnoughReplicasException, retrying with current coordinator epoch 3", "kafka.coordinator.transaction.TransactionMarkerRequestCompletionHandler"), ""},
		{"clean election", line("TRACE", "Setting new leader for topicId AMNt6PcpRZOktSh6v-u00A, partition 4 to 2 using a clean election", pcb), ""},
		{"reset to local end offset", line("INFO", "[ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Reset fetch offset for partition t-0 from 120 to the current local replica's end offset 110", fetcherLogger), ""},
		{"ignored shrink that did not shrink the ISR", line("DEBUG", "[Partition t-0 broker=1] Ignoring failed ISR update to PendingShrinkIsr(outOfSyncReplicaIds=Set(3), lastCommittedState=CommittedPartitionState(isr=Set(1, 3), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1, 3), leaderRecoveryState=RECOVERED)", partitionLogger), ""},
		{"ignored expansion that did not grow the ISR", line("DEBUG", "[Partition t-0 broker=1] Ignoring failed ISR update to PendingExpandIsr(newInSyncReplicaId=2, lastCommittedState=CommittedPartitionState(isr=Set(1, 3), leaderRecoveryState=RECOVERED)) since we have already updated state to CommittedPartitionState(isr=Set(1), leaderRecoveryState=RECOVERED)", partitionLogger), ""},
		{"no checkpoint", line("INFO", "[Partition t-0 broker=1] No checkpointed highwatermark is found for partition t-0", partitionLogger), ""},
		{"continuation line", "\tat kafka.cluster.Partition.appendRecordsToLeader(Partition.scala:1)", ""},
		{"empty", "", ""},
		{"bad partition number", line("DEBUG", "[Partition t-x broker=1] High watermark updated from (offset=1, segment=[0:1]) to (offset=2, segment=[0:2])", partitionLogger), ""},
		{"truncated line", "[2025-10-16 15:57:12,614] DEBUG [Partition t-0 broker=1] High watermark updated from (offset=88, seg", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ev, ok := p.Parse(Record{First: []byte(tc.in), Cont: []byte(tc.cont), Line: 1}); ok {
				t.Errorf("want not ours, got %s", AppendJSON(nil, &ev))
			}
		})
	}
}

// TestParsePartitionMemo: a parser that remembers the last partition prefix
// reads near-misses of it exactly as a fresh parser does.
func TestParsePartitionMemo(t *testing.T) {
	hw := " High watermark updated from (offset=1, segment=[0:1]) to (offset=2, segment=[0:2])"
	p := NewParser(time.UTC)
	for _, prefix := range []string{
		"[Partition t-1 broker=1]", "[Partition t-1 broker=1]", "[Partition t-1 broker=12]", "[Partition t-1 broker=1]",
		"[Partition t-10 broker=1]", "[Partition t-1 broker=1]X", "[Partition t-1 broker=1]", "[Partition t-1 broker=1] ",
		"[Partition t-1 broker=1]", "[Partition t-1 broker=1]x" + hw[1:],
		"[Partition t-1 broker=", "[Partition u-1 broker=1]", "[Partition t-1 broker=1]", "[Partition t-1 broker=1)",
	} {
		in := line("DEBUG", prefix+hw, partitionLogger)
		got, ok := p.Parse(Record{First: []byte(in), Line: 1, Lines: 1})
		want, wantOK := NewParser(time.UTC).Parse(Record{First: []byte(in), Line: 1, Lines: 1})
		if ok != wantOK || !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("%q: reused parser %v %+v, fresh parser %v %+v", prefix, ok, got, wantOK, want)
		}
	}
}

// parseLine is Parse for a single-line record.
func (p *Parser) parseLine(line []byte) (Event, bool) {
	return p.Parse(Record{First: line, Line: 1, Lines: 1})
}

// serve and verify read ack lines to their type: whether every ISR replica
// acked is all they keep, and it must be what the whole line says, in every
// form of set Kafka prints.
func TestTypeOnlyAllAcked(t *testing.T) {
	for _, tc := range []struct {
		awaiting string
		all      bool
	}{
		{"Set()", true},
		{"HashSet()", true},
		{"[]", true},
		{"Set(broker 3: 88)", false},
		{"HashSet(broker 3: 88, broker 2: 88)", false},
		{"[broker 3: 88]", false},
	} {
		l := line("TRACE", "[Partition t-2 broker=1] Progress awaiting ISR acks for offset 89: acked: Set(broker 1: 89), awaiting "+tc.awaiting, partitionLogger)
		p := NewParser(time.UTC)
		p.TypeOnly = true
		ev, ok := p.Parse(Record{First: []byte(l), Line: 1, Lines: 1})
		full, fullOK := NewParser(time.UTC).Parse(Record{First: []byte(l), Line: 1, Lines: 1})
		if !ok || !fullOK || ev.AllAcked != tc.all || full.AllAcked != tc.all || ev.Offset != 89 || ev.Acked != nil {
			t.Errorf("awaiting %s: type-only %v %+v, full %v %+v; want AllAcked %v", tc.awaiting, ok, ev, fullOK, full, tc.all)
		}
	}
}

// emptySet looks at a set's first element only, and must agree with setBody.
func TestEmptySetAgreesWithSetBody(t *testing.T) {
	for _, s := range []string{"", "X", "Set", "Set(", "Set()", "Set())", "Set()x", "Set(b", "Set(broker 1: 2)", "HashSet()", "[", "[]", "[1]", "Set[]", "Set(]", "[)", "(", "()", "Set)"} {
		body, _, ok := setBody([]byte(s))
		if want := ok && len(body) == 0; emptySet([]byte(s)) != want {
			t.Errorf("emptySet(%q) = %v, setBody says %v", s, !want, want)
		}
	}
}

func TestIndexIsBytesIndex(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "aab", "xx broker=1] y", "broker=", " broker", "abcabd"} {
		for _, sep := range []string{"", "a", "ab", "abd", " broker=", "broker=1] y", "zz", "abcabdx"} {
			if got, want := index([]byte(s), sep), strings.Index(s, sep); got != want {
				t.Errorf("index(%q, %q) = %d, want %d", s, sep, got, want)
			}
		}
	}
}
