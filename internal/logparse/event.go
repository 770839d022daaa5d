package logparse

import "time"

// Type is the kind of a replication event. Its String form is stable: it is
// used in JSON output and as the `type` label of metrics.
type Type uint8

// Event types. Keep the order: Types() and the metric label values follow it.
const (
	TypeNone             Type = iota
	HWUpdate                  // hw_update: leader HW advanced (Partition, DEBUG)
	HWSkip                    // hw_skip: leader considered and skipped an HW increment (TRACE)
	ISRAckProgress            // isr_ack_progress: acks=all progress (TRACE)
	ReplicaLEO                // replica_leo: follower LEO recorded by the leader (DEBUG)
	HWBlockedUnderMinISR      // hw_blocked_under_min_isr: KAFKA-15583 (TRACE, Kafka ≥3.7)
	HWNonMonotonic            // hw_non_monotonic: UnifiedLog WARN
	LogLoaded                 // log_loaded: initial HW at load (INFO)
	ISRShrink                 // isr_shrink: leader proposes a shrink (INFO); counted when committed
	// isr_expand: Kafka ≤2.7 "Expanding ISR" (INFO); 2.8+ "Ignoring failed ISR update to PendingExpandIsr… since we
	// have already updated state to …" (DEBUG: the expansion reached the leader through metadata first)
	ISRExpand
	ISRUpdate               // isr_update: committed ISR + version/partition epoch (INFO)
	AlterPartitionFailed    // alter_partition_failed
	ProduceRejectedMinISR   // produce_rejected_min_isr: NotEnoughReplicas on append (ERROR + continuation)
	LeaderStart             // leader_start: state-change.log "Leader … starts at leader epoch"
	FollowerStart           // follower_start: state-change.log "Follower … starts at leader epoch"
	FetcherTruncation       // fetcher_truncation: ReplicaFetcherThread "Truncating partition …"
	LogTruncation           // log_truncation: UnifiedLog "Truncating to …"
	TruncationBelowHW       // truncation_below_hw: "Truncating … below high watermark" WARN
	EpochEntry              // epoch_entry: LeaderEpochFileCache appended entry (DEBUG)
	EpochConflictTruncation // epoch_conflict_truncation: epoch cache divergence (WARN)
	UncleanElection         // unclean_election: controller log
	ELRElection             // elr_election: controller log, KIP-966
	LeaderRecovering        // leader_recovering: "marked as RECOVERING" (state-change.log)
	BrokerFenced            // broker_fenced: controller log
	PartitionStateChange    // partition_state_change: ZooKeeper controller's leader and ISR of a partition (state-change.log)
	LogDirOffline           // log_dir_offline: ReplicaManager "Stopping serving replicas in dir …" (a failed disk or mount)
	BrokerStart             // broker_start: the broker process starting (BrokerServer SHUTDOWN → STARTING, KafkaServer "starting")
	// isr_shrink_committed: "Ignoring failed ISR update to PendingShrinkIsr… since we have already updated state to …"
	// (DEBUG: the shrink reached the leader through metadata first, and no "ISR updated to" follows)
	ISRShrinkCommitted
	// The KRaft metadata log's Raft client ("[RaftManager id=N] …", INFO) and the controller's view of its leader
	// ("[QuorumController id=N] …", INFO): quorum.go. Broker is the node the prefix names; none has a topic.
	QuorumTransition   // quorum_transition: "Completed transition to <State>(…)": the state in Reason, its Epoch and Leader
	QuorumFetchTimeout // quorum_fetch_timeout: a follower giving up on its leader and starting an election
	QuorumMajorityLost // quorum_majority_lost: the leader resigning, no fetch from a majority of the voters within the timeout
	QuorumHWRegression // quorum_hw_regression: the leader computed a metadata HW (To) below its current one (From)
	QuorumTruncation   // quorum_truncation: the metadata log truncated to Offset on the Leader's fetch response
	QuorumLeaderChange // quorum_leader_change: controller.log's new epoch (Epoch) and its Leader (-1: none yet)
	numTypes
)

var typeNames = [numTypes]string{
	TypeNone:                "none",
	HWUpdate:                "hw_update",
	HWSkip:                  "hw_skip",
	ISRAckProgress:          "isr_ack_progress",
	ReplicaLEO:              "replica_leo",
	HWBlockedUnderMinISR:    "hw_blocked_under_min_isr",
	HWNonMonotonic:          "hw_non_monotonic",
	LogLoaded:               "log_loaded",
	ISRShrink:               "isr_shrink",
	ISRExpand:               "isr_expand",
	ISRUpdate:               "isr_update",
	AlterPartitionFailed:    "alter_partition_failed",
	ProduceRejectedMinISR:   "produce_rejected_min_isr",
	LeaderStart:             "leader_start",
	FollowerStart:           "follower_start",
	FetcherTruncation:       "fetcher_truncation",
	LogTruncation:           "log_truncation",
	TruncationBelowHW:       "truncation_below_hw",
	EpochEntry:              "epoch_entry",
	EpochConflictTruncation: "epoch_conflict_truncation",
	UncleanElection:         "unclean_election",
	ELRElection:             "elr_election",
	LeaderRecovering:        "leader_recovering",
	BrokerFenced:            "broker_fenced",
	PartitionStateChange:    "partition_state_change",
	LogDirOffline:           "log_dir_offline",
	BrokerStart:             "broker_start",
	ISRShrinkCommitted:      "isr_shrink_committed",
	QuorumTransition:        "quorum_transition",
	QuorumFetchTimeout:      "quorum_fetch_timeout",
	QuorumMajorityLost:      "quorum_majority_lost",
	QuorumHWRegression:      "quorum_hw_regression",
	QuorumTruncation:        "quorum_truncation",
	QuorumLeaderChange:      "quorum_leader_change",
}

// String returns the stable name of the type ("hw_update", …).
func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return "unknown"
}

// Types lists every real event type (TypeNone excluded) in declaration order.
func Types() []Type {
	out := make([]Type, 0, numTypes-1)
	for t := HWUpdate; t < numTypes; t++ {
		out = append(out, t)
	}
	return out
}

// Level is a log4j level.
type Level uint8

// Log levels, least to most severe.
const (
	LevelUnknown Level = iota
	LevelTrace
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
	LevelFatal
)

var levelNames = [...]string{"", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return ""
}

// ReplicaOffset is one "broker N: offset" pair from the TRACE ack/LEO lines.
type ReplicaOffset struct {
	Replica int32 `json:"replica"`
	Offset  int64 `json:"offset"`
}

// PartitionKey names a partition. It lives here, in the leaf package, so
// that every package keeping per-partition state (the log state, the admin
// poller, the ELR reader, the test cluster) shares one key type.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// Event is one replication event parsed from a log record.
//
// Which value fields are meaningful depends on Type (see the field comments);
// the others are zero, or -1 where zero is a valid value (documented per field).
// Slices may alias the Parser's scratch buffers: they are valid until the next
// Parse call. Call Clone to keep an event.
type Event struct {
	Type   Type
	Time   time.Time // record timestamp, read in the Parser's location; zero if the layout has none
	Level  Level
	Logger string // log4j logger name, e.g. "kafka.cluster.Partition"

	Broker    int32  // broker id named by the line's ident prefix; -1 when the line names none
	Topic     string // empty for broker-wide events (broker_fenced)
	Partition int32  // -1 when the event has no partition
	TopicID   string // 22-char base64 topic id when the line carries one

	File string // set by the caller (the parser does not know it)
	Line int    // line number of the record's first line; set by the caller

	// hw_update, hw_non_monotonic, quorum_hw_regression: HW offsets before and after.
	From, To int64
	// isr_ack_progress: required offset; fetcher_truncation, log_truncation,
	// truncation_below_hw, quorum_truncation: truncation target offset.
	Offset int64
	// log_loaded, isr_shrink, leader_start, follower_start, truncation_below_hw: high watermark.
	HW int64
	// isr_shrink: leader LEO; replica_leo: the follower's LEO.
	LEO int64
	// replica_leo: the follower; leader_start/follower_start/unclean_election/elr_election/partition_state_change,
	// quorum_transition/quorum_truncation/quorum_leader_change: new leader (-1 unknown).
	Replica int32
	Leader  int32

	// isr_update, leader_start, hw_blocked_under_min_isr, produce_rejected_min_isr (when printed),
	// partition_state_change: ISR members.
	ISR []int32
	// isr_shrink, isr_expand: ISR before and after.
	FromISR, ToISR []int32
	// isr_shrink: out-of-sync replicas with their LEO (-1 = unknown).
	OutOfSync []ReplicaOffset
	// isr_ack_progress: acked and awaited replicas with their LEO; AllAcked: none is awaited ("awaiting Set()").
	Acked, Awaiting []ReplicaOffset
	AllAcked        bool

	// isr_update: version / partition epoch (-1 when the line carries none).
	Version int64
	// leader_start, follower_start: partition epoch (-1 when the version prints none), leader epoch, start offset.
	PartitionEpoch int64
	LeaderEpoch    int64
	StartOffset    int64
	// epoch_entry, epoch_conflict_truncation: epoch entry; quorum_transition, quorum_leader_change: the metadata
	// log's leader epoch.
	Epoch int64

	// isr_update, leader_start: "(under-min-isr)" printed (Kafka ≥3.5).
	UnderMinISR bool
	// partition_state_change: leaderRecoveryState=RECOVERING, which the ZooKeeper controller sets on an unclean
	// election (Kafka ≥3.2); HasRecoveryState: the line prints a leaderRecoveryState at all.
	Recovering, HasRecoveryState bool
	// produce_rejected_min_isr: ISR size (4.1+ prints it; ≤4.0 len of the set) and the min ISR required.
	ISRSize int
	MinISR  int
	// log_truncation: "has no effect" form, with the log's largest offset.
	NoEffect      bool
	LargestOffset int64
	// alter_partition_failed: error / reason text; fetcher_truncation: "high_watermark" or "leader_epoch";
	// partition_state_change: the state the partition changed from ("OfflinePartition", …; empty for an ISR
	// change); broker_fenced: the fenced broker id is in Replica.
	Reason string
	// log_dir_offline: the log directory, as the broker names it (absolute).
	Dir string
	// quorum_transition: the Raft state entered ("leader", "follower", …, QuorumStates); quorum_leader_change:
	// "active" when this controller became the leader, "renounced" when it lost it, else empty.
	State string
}

// Clone returns a copy of e whose slices no longer alias parser buffers.
func (e Event) Clone() Event {
	e.ISR = cloneInts(e.ISR)
	e.FromISR = cloneInts(e.FromISR)
	e.ToISR = cloneInts(e.ToISR)
	e.OutOfSync = cloneOffsets(e.OutOfSync)
	e.Acked = cloneOffsets(e.Acked)
	e.Awaiting = cloneOffsets(e.Awaiting)
	return e
}

func cloneInts(s []int32) []int32 {
	if s == nil {
		return nil
	}
	return append([]int32(nil), s...)
}

func cloneOffsets(s []ReplicaOffset) []ReplicaOffset {
	if s == nil {
		return nil
	}
	return append([]ReplicaOffset(nil), s...)
}
