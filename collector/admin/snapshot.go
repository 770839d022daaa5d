package admin

import (
	"cmp"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
	"slices"
	"strings"
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
}

func (r Request) String() string { return requestNames[r] }

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

// counters are the poller's own counters; the refresh goroutine owns them
// and each snapshot carries a copy.
type counters struct {
	requestErrors [NumRequests]uint64
	disagreements [NumFields]uint64
}

// Snapshot is what the last refresh learnt. It is immutable once published.
type Snapshot struct {
	Up          bool          // the last Metadata request succeeded
	LastSuccess time.Time     // zero until the first successful refresh
	Duration    time.Duration // wall time of the last refresh
	// RequestErrors counts failed requests since start, by Request.
	RequestErrors [NumRequests]uint64
	// Disagreements counts new disagreements between the admin API and the
	// broker's logs since start, by Field.
	Disagreements [NumFields]uint64
	// Brokers are the brokers this refresh sent requests to, sorted by id.
	Brokers []BrokerStatus
	// Topics are the exported topics, sorted by name.
	Topics []Topic
}

// BrokerStatus says whether a broker answered every request of the refresh
// in time.
type BrokerStatus struct {
	ID         int32
	Responsive bool
}

// Topic is one exported topic.
type Topic struct {
	Name         string
	MinISRConfig int // configured min.insync.replicas; 0 = unknown
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
	// when both HW and LEO were answered in this refresh (StallKnown).
	Stalled    bool
	StallCause StallCause // StallNone unless Stalled
	// Lags are the followers that answered, in replica-list order.
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
}

// ReplicaLag is how far a follower's log end offset is behind the leader's.
type ReplicaLag struct {
	Replica int32 // broker id
	Lag     int64 // offsets, never negative
}

// StallKnown reports whether this refresh could decide Stalled: the
// leader answered both its HW and its LEO.
func (p *Partition) StallKnown() bool { return p.HWKnown && p.LEOKnown }

// UnderReplicated reports an ISR smaller than the replica set.
func (p *Partition) UnderReplicated() bool { return p.ISR < p.Replicas }

// UnderMinISR reports an ISR below the effective min.insync.replicas.
func (p *Partition) UnderMinISR() bool { return p.MinISR > 0 && p.ISR < p.MinISR }

// AtMinISR reports an ISR exactly at the effective min.insync.replicas while
// the replication factor is larger: one more loss blocks acks=all.
func (p *Partition) AtMinISR() bool {
	return p.MinISR > 0 && p.ISR == p.MinISR && p.Replicas > p.MinISR
}

// build turns one refresh's answers into a snapshot, feeding the HW tracker
// for every partition (exported or not) along the way.
func (a *Poller) build(p refreshPlan, got fetched, mdAt time.Time) *Snapshot {
	now := a.now()
	count := func(f Field) { a.counts.disagreements[f]++ }

	// The partitions and lags are two allocations, sized from the plan, that
	// the topics' slices share, rather than one growing slice per topic.
	snap := &Snapshot{}
	topicOf := make(map[string]int)
	var perTopic []int
	lagCap := 0
	for i := range p.parts {
		pp := &p.parts[i]
		if !pp.export {
			continue
		}
		t, ok := topicOf[pp.key.Topic]
		if !ok {
			t = len(snap.Topics)
			topicOf[pp.key.Topic] = t
			snap.Topics = append(snap.Topics, Topic{Name: pp.key.Topic, MinISRConfig: a.minISR[pp.key.Topic]})
			perTopic = append(perTopic, 0)
		}
		perTopic[t]++
		lagCap += max(len(pp.replicas)-1, 0)
	}
	all := make([]Partition, p.exported)
	off := 0
	for t, n := range perTopic {
		snap.Topics[t].Partitions = all[off : off : off+n]
		off += n
	}
	lags := make([]ReplicaLag, 0, lagCap)

	for i := range p.parts {
		pp := &p.parts[i]
		// The leader's LEO, read for exported partitions only.
		var leo offsetAnswer
		if l := pp.leoSlot(pp.leader); l >= 0 {
			leo = got.leoAt[l]
		}
		var (
			hw      hwVerdict
			hwKnown bool
		)
		if ans := got.hwAt[i]; ans.ok {
			epoch := pp.epoch
			if ans.leaderEpoch >= 0 {
				epoch = ans.leaderEpoch
			}
			hw = a.tracker.observe(pp.key, hwObservation{
				topicID: pp.topicID, hw: ans.offset, leaderEpoch: epoch,
				leo: leo.offset, leoKnown: leo.ok, leoAsked: pp.export,
			}, now, a.gen)
			if hw.regressed {
				a.logger.Debug("High watermark went backwards",
					"topic", pp.key.Topic, "partition", pp.key.Partition,
					"from", hw.prevHW, "to", ans.offset,
					"leader_epoch_before", hw.prevEpoch, "leader_epoch_after", epoch)
			}
			hwKnown = true
		} else {
			// The leader did not answer (or there is none): the HW is
			// unknown, not the last one read, which could be stale for
			// ever; its history stays for when the leader answers again.
			a.tracker.touch(pp.key, a.gen)
			hw.lastAdvance, hw.regressions, _ = a.tracker.lastAdvance(pp.key, pp.topicID)
		}
		if !pp.export {
			continue
		}

		ts := &snap.Topics[topicOf[pp.key.Topic]]
		if a.cfg.Scope == ScopeLeader {
			// The partitions this broker leads: its log is the one that
			// would have shown their ISR changes.
			a.join.observeISR(pp.key, int(pp.isr))
		}
		isr, epoch := a.join.join(pp.key, int(pp.isr), int64(pp.epoch), mdAt, count)
		s := Partition{
			Topic:       pp.key.Topic,
			Partition:   pp.key.Partition,
			Replicas:    len(pp.replicas),
			ISR:         isr,
			Leader:      pp.leader,
			LeaderEpoch: epoch,
			HWKnown:     hwKnown,
			LastAdvance: hw.lastAdvance,
			Regressions: hw.regressions,
		}
		if hwKnown {
			s.HW = got.hwAt[i].offset
		}
		if s.Leader < 0 {
			s.Leader = -1
		}
		if ts.MinISRConfig > 0 {
			s.MinISR = min(ts.MinISRConfig, s.Replicas)
		}
		if leo.ok {
			s.LEO, s.LEOKnown = leo.offset, true
			from := len(lags)
			for _, r := range pp.replicas {
				if r == pp.leader {
					continue
				}
				if f := pp.leoSlot(r); f >= 0 && got.leoAt[f].ok {
					// The follower is asked a moment apart from the leader
					// and can be ahead by then; lag is never negative.
					lags = append(lags, ReplicaLag{Replica: r, Lag: max(s.LEO-got.leoAt[f].offset, 0)})
				}
			}
			if len(lags) > from {
				s.Lags = lags[from:len(lags):len(lags)]
			}
		}
		if hwKnown && hw.stalled {
			s.Stalled, s.StallCause = true, a.stallCause(&s)
		}
		s.setELR(got.elr)
		s.setReassignment(got.reassign, p.outOfISR[int32(i)])
		ts.Partitions = append(ts.Partitions, s)
	}

	for i := range snap.Topics {
		slices.SortFunc(snap.Topics[i].Partitions, func(x, y Partition) int { return cmp.Compare(x.Partition, y.Partition) })
	}
	slices.SortFunc(snap.Topics, func(x, y Topic) int { return strings.Compare(x.Name, y.Name) })
	return snap
}

// stallCause says why a stalled partition's HW does not move, from what the
// poller knows: the ISR against min ISR, then the leader's log.
func (a *Poller) stallCause(p *Partition) StallCause {
	switch {
	case p.UnderMinISR():
		return StallUnderMinISR
	case a.join.pendingShrink(logparse.PartitionKey{Topic: p.Topic, Partition: p.Partition}):
		return StallISRShrinkPending
	}
	return StallUnknown
}
