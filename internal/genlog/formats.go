package genlog

import "github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"

// format is one kind of log line: its level, logger and message layout
// (fmt verbs where the values go), and what the parser must make of it.
// Every layout is copied from a real Kafka 4.1 broker capture in
// internal/logparse/testdata; TestFormatsAreReal holds them to those captures, so
// the generator cannot drift from what brokers print.
type format struct {
	level, logger, msg string
	event              logparse.Type // logparse.TypeNone: a line that is not ours
}

const (
	partitionLogger  = "kafka.cluster.Partition"
	stateLogger      = "state.change.logger"
	replicaManager   = "kafka.server.ReplicaManager"
	fetcherLogger    = "kafka.server.ReplicaFetcherThread"
	unifiedLogLogger = "org.apache.kafka.storage.internals.log.UnifiedLog"
	coordinatorRT    = "org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime"
)

var (
	// One produce batch on the leader, replicated to the followers (TRACE/DEBUG).
	hwSkip = format{
		"TRACE", partitionLogger,
		"[Partition %s-%d broker=%d] Skipping update high watermark since new hw (offset=%d, segment=[%d:%d]) is not " +
			"larger than old value. All current LEOs are Set(%s)",
		logparse.HWSkip,
	}
	ackProgress = format{
		"TRACE", partitionLogger,
		"[Partition %s-%d broker=%d] Progress awaiting ISR acks for offset %d: acked: Set(%s), awaiting Set(%s)",
		logparse.ISRAckProgress,
	}
	replicaLEO = format{
		"DEBUG", partitionLogger,
		"[Partition %s-%d broker=%d] Recorded replica %d log end offset (LEO) position %d and log start offset 0.",
		logparse.ReplicaLEO,
	}
	hwUpdate = format{
		"DEBUG", partitionLogger,
		"[Partition %s-%d broker=%d] High watermark updated from (offset=%d, segment=[%d:%d]) to (offset=%d, segment=[%d:%d])",
		logparse.HWUpdate,
	}
	hwBlocked = format{
		"TRACE", partitionLogger,
		"[Partition %s-%d broker=%d] Not increasing HWM because partition is under min ISR(ISR=Set(%d)",
		logparse.HWBlockedUnderMinISR,
	}

	// ISR changes: a shrink the controller commits, an expansion that reaches
	// the leader through the metadata before the AlterPartition answer.
	isrShrink = format{
		"INFO", partitionLogger,
		"[Partition %s-%d broker=%d] Shrinking ISR from %s to %s. Leader: (highWatermark: %d, endOffset: %d). Out of " +
			"sync replicas: (brokerId: %d, endOffset: %d, lastCaughtUpTimeMs: %d).",
		logparse.ISRShrink,
	}
	isrUpdate = format{
		"INFO", partitionLogger,
		"[Partition %s-%d broker=%d] ISR updated to %s  and version updated to %d",
		logparse.ISRUpdate,
	}
	submitExpand = format{
		"DEBUG", partitionLogger,
		"[Partition %s-%d broker=%d] Submitting ISR state change PendingExpandIsr(newInSyncReplicaId=%d, " +
			"sentLeaderAndIsr=LeaderAndIsr(leader=%d, leaderEpoch=%d, isrWithBrokerEpoch=[%s], " +
			"leaderRecoveryState=RECOVERED, partitionEpoch=%d), leaderRecoveryState=RECOVERED, " +
			"lastCommittedState=CommittedPartitionState(isr=Set(%s), leaderRecoveryState=RECOVERED))",
		logparse.TypeNone,
	}
	isrExpand = format{
		"DEBUG", partitionLogger,
		"[Partition %s-%d broker=%d] Ignoring failed ISR update to PendingExpandIsr(newInSyncReplicaId=%d, " +
			"sentLeaderAndIsr=LeaderAndIsr(leader=%d, leaderEpoch=%d, isrWithBrokerEpoch=[%s], " +
			"leaderRecoveryState=RECOVERED, partitionEpoch=%d), leaderRecoveryState=RECOVERED, " +
			"lastCommittedState=CommittedPartitionState(isr=Set(%s), leaderRecoveryState=RECOVERED)) since we have already " +
			"updated state to CommittedPartitionState(isr=Set(%s), leaderRecoveryState=RECOVERED)",
		logparse.ISRExpand,
	}

	// A produce rejected for min ISR: the ERROR header, then the exception
	// on a continuation line of its own.
	produceRejected = format{
		"ERROR", replicaManager,
		"[ReplicaManager broker=%d] Error processing append operation on partition %s:%s-%d",
		logparse.ProduceRejectedMinISR,
	}
	notEnoughReplicas = "org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : %d is insufficient " +
		"to satisfy the min.isr requirement of %d for partition %s-%d, live replica(s) broker.id are : Set(%s)"

	// A leadership bounce: the broker follows, truncates to its HW, leads again.
	followerStart = format{
		"INFO", stateLogger,
		"[Broker id=%d] Follower %s-%d starts at leader epoch %d from offset %d with partition epoch %d and high " +
			"watermark %d. Current leader is %d. Previous leader Some(%d) and previous leader epoch was %d.",
		logparse.FollowerStart,
	}
	fetcherTruncation = format{
		"INFO", fetcherLogger,
		"[ReplicaFetcher replicaId=%d, leaderId=%d, fetcherId=0] Truncating partition %s-%d with " +
			"TruncationState(offset=%d, completed=true) due to local high watermark %d",
		logparse.FetcherTruncation,
	}
	logTruncation = format{
		"INFO", unifiedLogLogger,
		"[UnifiedLog partition=%s-%d, dir=/var/lib/kafka/data] Truncating to offset %d",
		logparse.LogTruncation,
	}
	leaderStart = format{
		"INFO", stateLogger,
		"[Broker id=%d] Leader %s-%d with topic id Some(%s) starts at leader epoch %d from offset %d with partition " +
			"epoch %d, high watermark %d, ISR [%s], adding replicas [] and removing replicas [] . Previous leader Some(%d) " +
			"and previous leader epoch was %d.",
		logparse.LeaderStart,
	}

	// Lines that are not ours: other loggers, and lines of ours that carry
	// no replication event (they pass the parser's first look).
	noiseCoordinator = format{
		"INFO", coordinatorRT,
		"[GroupCoordinator id=%d] Scheduling unloading of metadata for __consumer_offsets-%d with epoch OptionalInt[5]",
		logparse.TypeNone,
	}
	noiseNoCheckpoint = format{
		"INFO", partitionLogger,
		"[Partition %s-%d broker=%d] No checkpointed highwatermark is found for partition %s-%d",
		logparse.TypeNone,
	}
	noiseNewPartition = format{
		"INFO", stateLogger,
		"[Broker id=%d] Creating new partition %s-%d with topic id %s.",
		logparse.TypeNone,
	}
)

// formats lists every header format, for TestFormatsAreReal.
var formats = []*format{
	&hwSkip, &ackProgress, &replicaLEO, &hwUpdate, &hwBlocked,
	&isrShrink, &isrUpdate, &submitExpand, &isrExpand,
	&produceRejected,
	&followerStart, &fetcherTruncation, &logTruncation, &leaderStart,
	&noiseCoordinator, &noiseNoCheckpoint, &noiseNewPartition,
}
