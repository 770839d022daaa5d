package poller

import (
	"fmt"
	"time"
)

// Request names an admin request kind, for the request error counters.
type Request int

const (
	RequestMetadata Request = iota
	RequestDescribeConfigs
	RequestListOffsets
	RequestListOffsetsLEO
	RequestAlterLogLevel
	RequestDescribeTopicPartitions
	RequestListPartitionReassignments
	RequestListGroups
	RequestDescribeGroups
	RequestOffsetFetch
	RequestListOffsetsLSO
	RequestDescribeLogDirs
	RequestDescribeQuorum
	RequestListOffsetsTiered
	RequestListShareGroups
	RequestDescribeShareGroupOffsets
	NumRequests
)

var requestNames = [NumRequests]string{
	RequestMetadata:        "metadata",
	RequestDescribeConfigs: "describe_configs",
	RequestListOffsets:     "list_offsets",
	RequestListOffsetsLEO:  "list_offsets_leo",
	RequestAlterLogLevel:   "alter_log_level",

	RequestDescribeTopicPartitions:    "describe_topic_partitions",
	RequestListPartitionReassignments: "list_partition_reassignments",
	RequestListGroups:                 "list_groups",
	RequestDescribeGroups:             "describe_groups",
	RequestOffsetFetch:                "offset_fetch",
	RequestListOffsetsLSO:             "list_offsets_lso",
	RequestDescribeLogDirs:            "describe_log_dirs",
	RequestDescribeQuorum:             "describe_quorum",
	RequestListOffsetsTiered:          "list_offsets_tiered",
	RequestListShareGroups:            "list_share_groups",
	RequestDescribeShareGroupOffsets:  "describe_share_group_offsets",
}

func (r Request) String() string { return requestNames[r] }

// OptIn reports a request only an opt-in read sends (consumer groups, the
// last stable offset, tiered storage, share groups): its error counter is
// exported only while it is on.
func (r Request) OptIn() bool {
	return r == RequestListGroups || r == RequestDescribeGroups || r == RequestOffsetFetch || r == RequestListOffsetsLSO ||
		r == RequestListOffsetsTiered || r == RequestListShareGroups || r == RequestDescribeShareGroupOffsets
}

// Field names a partition field the admin API and the broker's logs can
// disagree on.
type Field int

const (
	FieldISR Field = iota
	FieldLeaderEpoch
	NumFields
)

var fieldNames = [NumFields]string{FieldISR: "isr", FieldLeaderEpoch: "leader_epoch"}

func (f Field) String() string { return fieldNames[f] }

// StallCause is why a stalled partition's high watermark does not move, as
// far as the poller can tell.
type StallCause int

const (
	StallNone StallCause = iota // not stalled
	// StallUnderMinISR: the ISR is below the effective min.insync.replicas.
	StallUnderMinISR
	// StallISRShrinkPending: the leader logged an ISR shrink that the
	// metadata does not show (the controller has not committed it), so the
	// HW waits for followers that are no longer fetching.
	StallISRShrinkPending
	// StallUnknown: the ISR looks sufficient and no pending shrink is known
	// (a slow follower still in the ISR, a frozen controller quorum).
	StallUnknown
	NumStallCauses
)

var stallCauseNames = [NumStallCauses]string{
	StallUnderMinISR:      "under_min_isr",
	StallISRShrinkPending: "isr_shrink_pending",
	StallUnknown:          "unknown",
}

func (c StallCause) String() string { return stallCauseNames[c] }

// Snapshot is what the last refresh learnt. It is immutable once published.
type Snapshot struct {
	Up          bool          // the last Metadata request succeeded
	LastSuccess time.Time     // zero until the first successful refresh
	Duration    time.Duration // wall time of the last refresh
	// RequestErrors counts failed requests since start, by Request.
	RequestErrors [NumRequests]uint64
	// UnusableAnswers counts the partitions that answers of a request
	// answered with an error or left out, since start (the ListOffsets
	// requests; a failed request counts in RequestErrors instead).
	UnusableAnswers [NumRequests][NumUnusable]uint64
	// Sent says which requests this poller sends (the opt-in ones only
	// while their read is on).
	Sent [NumRequests]bool
	// Disagreements counts new disagreements between the admin API and the
	// broker's logs since start, by Field.
	Disagreements [NumFields]uint64
	// BrokerIdentified: this sidecar knows its own broker's id
	// (--kafka.broker-id, its log lines or its address); LeaderScope: it
	// exports nothing until then.
	BrokerIdentified, LeaderScope bool
	// Brokers are the brokers this refresh sent requests to, sorted by id.
	Brokers []BrokerStatus
	// Topics are the exported topics, sorted by name.
	Topics []Topic
	// MinISR says how many topics' min.insync.replicas is unknown or the
	// broker's default (answers.go).
	MinISR MinISRStatus
	// MetadataRefused counts Metadata entries left out since start, by Refusal.
	MetadataRefused [NumRefusals]uint64
	// StableOffsets are the last stable offsets read
	// (--collector.last-stable-offset), sorted by topic, then partition;
	// nil when the read is off. Kept out of Partition so that the read
	// costs nothing when it is off.
	StableOffsets []StableOffset
	// Groups are the consumer groups read (--collector.consumer-groups),
	// sorted by name; nil when the collector is off (snapshot_groups.go).
	Groups []ConsumerGroup
	// GroupsListed counts the consumer groups the coordinators listed that
	// pass the filters, GroupsUnread those of them this refresh could not
	// read, by why; Groups are the others. Zero when the collector is off.
	GroupsListed int
	GroupsUnread [NumGroupUnread]int
	// ShareGroups are the share groups read (--collector.share-groups),
	// sorted by name, as Groups are: a position's Committed is the
	// share-partition start offset, and State and Members are not read.
	// nil when the read is off. ShareGroupsListed and ShareGroupsUnread
	// are as for Groups; ShareGroupBrokers counts the brokers by whether
	// they could be asked for their share groups.
	ShareGroups       []ConsumerGroup
	ShareGroupsListed int
	ShareGroupsUnread [NumGroupUnread]int
	ShareGroupBrokers [NumShareGroupSupport]int
	// LogDirs are the log directories of the brokers that answered
	// DescribeLogDirs this refresh (fetch_logdirs.go), sorted by broker,
	// then path; a broker that did not answer has none.
	LogDirs []LogDir
	// Quorum is the KRaft metadata quorum (snapshot_quorum.go); nil when
	// this sidecar does not speak for the cluster or Metadata failed.
	Quorum *Quorum
	// TieringRead: --collector.tiered-storage is on; TieringUnknown counts
	// this refresh's exported partitions of tiered topics by why their
	// tiering is unknown (TieringKnown: those it is known of).
	TieringRead    bool
	TieringUnknown [NumTieringUnknown]int
}

// LogDir is one log directory of a broker, as its DescribeLogDirs answered.
type LogDir struct {
	Broker int32
	Path   string
	// Offline: the broker answered KAFKA_STORAGE_ERROR for it, a failed
	// disk or mount; its replicas are offline until the broker restarts.
	Offline bool
}

// BrokerStatus says whether a broker answered every request of the refresh
// in time.
type BrokerStatus struct {
	ID         int32
	Responsive bool
}

// Topic is one exported topic.
type Topic struct {
	Name string
	// ID is Kafka's topic id as Kafka prints it (unpadded URL-safe base64),
	// new for a topic deleted and re-created under the same name; "" when
	// Metadata carried none (Kafka before 2.8, or --kafka.version below 2.8.0).
	ID           string
	MinISRConfig int // configured min.insync.replicas; 0 = unknown
	MinISRSource MinISRSource
	// MinISRUnusable is why the topic's own answer was unusable, when
	// MinISRSource is not MinISRSourceTopic.
	MinISRUnusable Unusable
	// Partitions are the exported partitions, sorted by number.
	Partitions []Partition
}

// Partition is one exported partition.
type Partition struct {
	Topic       string
	Partition   int32
	Replicas    int
	ISR         int   // Metadata joined with the log view: the fresher wins
	MinISR      int   // effective: min(topic config, replicas); 0 = unknown
	Leader      int32 // -1 = offline
	LeaderEpoch int64 // Metadata joined with the log view
	HW          int64
	HWKnown     bool  // the leader answered in this refresh
	LEO         int64 // the leader's log end offset
	LEOKnown    bool
	LastAdvance time.Time // when the HW last moved; zero = no HW reading yet
	Regressions uint64    // HW decreases seen for this topic id
	// Stalled: the LEO is ahead of the HW and no reading for the stall
	// threshold looked healthy (HW advancing, or LEO <= HW). Only decided
	// when both HW and LEO were answered in this refresh.
	Stalled    bool
	StallCause StallCause // StallNone unless Stalled
	// Lags are the followers that answered, in replica-list order, then
	// the replicas offline in a failed log directory.
	Lags []ReplicaLag

	// Sizes of the Eligible Leader Replicas (KIP-966: clean candidates
	// outside the ISR) and of the last-known ELR (replicas that were
	// eligible until they stopped uncleanly), valid when ELRKnown.
	ELR, LastKnownELR int32
	// Replicas the reassignment in progress adds and removes, valid when
	// ReassignmentKnown.
	AddingReplicas, RemovingReplicas int32
	// ELRKnown is whether this refresh read the partition's ELR: false where
	// the broker lacks DescribeTopicPartitions, the cluster has ELR off, or
	// the read failed.
	ELRKnown bool
	// ReassignmentKnown is whether this refresh read the reassignments.
	ReassignmentKnown bool
	Reassigning       bool
	// UnderReplicatedByReassignment: under-replicated, and every replica
	// missing from the ISR is one the reassignment is adding.
	UnderReplicatedByReassignment bool
	// LSOStalled: the partition's StableOffset is Stalled (a transaction
	// left open); false while the LSO is not read. It fits in the padding.
	LSOStalled bool
	// Tiering is the partition's tiered storage (snapshot_tiering.go); nil
	// unless tiering is read and its topic has remote.storage.enable=true.
	Tiering *PartitionTiering
}

// ReplicaLag is how far a follower's log end offset is behind the leader's.
type ReplicaLag struct {
	Replica int32 // broker id
	// Offline: Metadata lists the replica as offline while its broker is
	// alive, which is a failed log directory; it has no lag then. Beside
	// Replica, it keeps the struct at 16 bytes.
	Offline bool
	Lag     int64 // offsets, never negative; 0 when Offline
}

// String is "{replica lag}", or "{replica offline}".
func (l ReplicaLag) String() string {
	if l.Offline {
		return fmt.Sprintf("{%d offline}", l.Replica)
	}
	return fmt.Sprintf("{%d %d}", l.Replica, l.Lag)
}

// UnderReplicated reports an ISR smaller than the replica set.
func (p *Partition) UnderReplicated() bool { return p.ISR < p.Replicas }

// Unhealthy reports a partition in a state an operator has to see, the ones
// --collector.partition-series=unhealthy gives series of their own: offline;
// under-replicated (which covers under and at min ISR, ELR and offline
// replicas); no ISR headroom (ISR at most min ISR, RF above 1); a stalled
// or regressed HW; a reassignment; an HW or LEO the leader did not answer;
// a stalled LSO; stalled tiering.
func (p *Partition) Unhealthy() bool {
	noHeadroom := p.MinISR > 0 && p.ISR <= p.MinISR && p.Replicas > 1
	return p.Leader < 0 || p.UnderReplicated() || noHeadroom || p.Stalled || p.Regressions > 0 ||
		p.Reassigning || !p.HWKnown || !p.LEOKnown || p.LSOStalled || p.Tiering != nil && p.Tiering.Stalled
}

// UnderMinISR reports an ISR below the effective min.insync.replicas.
func (p *Partition) UnderMinISR() bool { return p.MinISR > 0 && p.ISR < p.MinISR }

// AtMinISR reports an ISR exactly at the effective min.insync.replicas while
// the replication factor is larger: one more loss blocks acks=all.
func (p *Partition) AtMinISR() bool {
	return p.MinISR > 0 && p.ISR == p.MinISR && p.Replicas > p.MinISR
}
