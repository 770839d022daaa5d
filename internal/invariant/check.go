package invariant

import (
	"fmt"
	"slices"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Invariant is one replication-protocol property checked over a stream of events.
// The Checker below is the only implementation: `verify` reports it offline and
// `serve` turns the same results into counters, so the two can never disagree.
type Invariant uint8

// Invariants, in report order.
const (
	HWMonotonic Invariant = iota
	ISRChangeVersioned
	PartitionEpochMonotonic
	MinISREnforced
	ISRAcksComplete
	NoTruncationBelowHW
	NoUncleanElection
	HWStallUnderMinISR
	MetadataHWMonotonic
	numInvariants
)

var invariantNames = [numInvariants]string{
	HWMonotonic:             "hw_monotonic",
	ISRChangeVersioned:      "isr_change_versioned",
	PartitionEpochMonotonic: "partition_epoch_monotonic",
	MinISREnforced:          "min_isr_enforced",
	ISRAcksComplete:         "isr_acks_complete",
	NoTruncationBelowHW:     "no_truncation_below_hw",
	NoUncleanElection:       "no_unclean_election",
	HWStallUnderMinISR:      "hw_stall_under_min_isr",
	MetadataHWMonotonic:     "metadata_hw_monotonic",
}

// What each invariant needs in the log when there is no evidence for it.
var invariantNeeds = [numInvariants]string{
	HWMonotonic:             "no HW updates found (enable DEBUG for kafka.cluster.Partition)",
	ISRChangeVersioned:      "no ISR updates found (INFO; the ISR did not change, or the log is incomplete)",
	PartitionEpochMonotonic: "no partition epochs found (INFO; the ISR did not change, or the log is incomplete)",
	MinISREnforced:          "no NotEnoughReplicas rejections found (INFO/ERROR; the cluster may be healthy)",
	ISRAcksComplete:         "no ISR ack traces found (enable TRACE for kafka.cluster.Partition)",
	NoTruncationBelowHW:     "no truncations found (INFO; no follower truncated)",
	NoUncleanElection:       "no unclean election found (INFO; needs controller.log of a controller node, or the controller's state-change.log in ZooKeeper mode)",
	HWStallUnderMinISR:      "no HW increments blocked under min ISR (TRACE for kafka.cluster.Partition, Kafka ≥3.7)",
	MetadataHWMonotonic: "no metadata quorum leadership found (INFO; needs server.log of a KRaft controller: only the quorum " +
		"leader computes the metadata HW)",
}

// String returns the invariant's stable name ("hw_monotonic", …).
func (i Invariant) String() string {
	if i < numInvariants {
		return invariantNames[i]
	}
	return "unknown"
}

// SkipReason says which log lines would have given evidence for the invariant.
func (i Invariant) SkipReason() string {
	if i < numInvariants {
		return invariantNeeds[i]
	}
	return ""
}

// Informational invariants are counted but never fail.
func (i Invariant) Informational() bool { return i == ISRAcksComplete || i == HWStallUnderMinISR }

// Invariants lists all invariants in report order.
func Invariants() []Invariant {
	out := make([]Invariant, numInvariants)
	for i := range out {
		out[i] = Invariant(i)
	}
	return out
}

// InvariantSet is a bit set of invariants.
type InvariantSet uint16

// Has reports whether i is in the set.
func (s InvariantSet) Has(i Invariant) bool { return s&(1<<i) != 0 }

func (s *InvariantSet) add(i Invariant) { *s |= 1 << i }

// Result is what the Checker concluded from one event.
type Result struct {
	Checked  InvariantSet // invariants this event was evidence for
	Violated InvariantSet // invariants this event violated
	Detail   string       // why, when Violated is not empty

	// Derived facts the live metrics need.
	ISRShrink  bool // committed ISR got smaller than the last one seen (a proposed shrink is not one)
	ISRExpand  bool // committed ISR got larger than the last one seen
	BelowHW    bool // a truncation removed committed data (below the replica's last known HW)
	NewUnclean bool // an unclean election, counted once however many controllers replayed it
	// MetadataHWRegression: the metadata quorum's leader computed a lower HW than its current one, counted once
	// however many times it logged that against the same current HW.
	MetadataHWRegression bool
}

// partKey identifies a partition as seen by one broker: HW and epoch sequences
// are per broker, so logs of several brokers can be checked in one run.
type partKey struct {
	broker    int32
	topic     string
	partition int32
}

// partState is one partition's history as one broker logged it.
type partState struct {
	lastHW     int64     // last hw_update "to" offset in the current leadership; -1 = reset
	knownHW    int64     // best known HW of this replica (leader or follower); -1 = unknown
	knownHWT   time.Time // log time of the line knownHW came from
	lastEpoch  int64     // last partition epoch (ISR version) seen; -1 = none
	isrSize    int       // size of the last committed ISR; -1 = unknown
	isrT       time.Time // log time of the line isrSize came from
	topicID    string
	lastTruncO int64 // offset of the last below-HW truncation reported, to count one loss once
}

type uncleanKey struct {
	topic     string // topic id when known, else name
	partition int32
}

type uncleanSeen struct {
	epoch  int64
	leader int32
	at     time.Time
}

// uncleanDedupWindow: the active controller prints "Setting new leader … unclean"
// (no partition epoch before 4.1) and every controller replays "UNCLEAN partition
// change" for the same election within moments of each other.
const uncleanDedupWindow = 60 * time.Second

// uncleanKeep is how long (log time) Retain keeps an unclean election for
// its replays, far beyond uncleanDedupWindow.
const uncleanKeep = time.Hour

// Checker checks replication invariants over a stream of events. It keeps per
// partition state and is not safe for concurrent use.
type Checker struct {
	parts      map[partKey]*partState
	fileBroker map[string]int32 // broker id learned per file, for lines that name none (UnifiedLog)
	lastBroker int32            // the only broker seen so far, or -1
	unclean    map[uncleanKey]uncleanSeen
	topicIDs   map[string]string      // topic id → name, learned from lines that carry both
	zkISR      map[uncleanKey][]int32 // the ZooKeeper controller's last logged ISR per partition
	// regressed is, per quorum node, the current HW of the last metadata HW
	// regression it logged in its present leadership (-1: none yet).
	regressed map[int32]int64

	// The last partition looked up: a busy log repeats one partition for
	// several lines in a row (the TRACE/DEBUG lines of one produce).
	lastKey   partKey
	lastState *partState

	// The last file that named its broker (see broker).
	lastFile       string
	lastFileBroker int32
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	return &Checker{
		parts:          make(map[partKey]*partState),
		fileBroker:     make(map[string]int32),
		lastBroker:     -1,
		lastFileBroker: -1,
		unclean:        make(map[uncleanKey]uncleanSeen),
		topicIDs:       make(map[string]string),
		zkISR:          make(map[uncleanKey][]int32),
		regressed:      make(map[int32]int64),
	}
}

// broker attributes an event to a broker. UnifiedLog lines carry no broker id,
// but every line of a file comes from the same broker: learn it from the lines
// that name it (or, before that, assume the only broker seen so far).
func (c *Checker) broker(ev *logparse.Event) int32 {
	if ev.Broker >= 0 {
		if ev.File != c.lastFile || ev.Broker != c.lastFileBroker {
			c.fileBroker[ev.File] = ev.Broker // on a change only: most events repeat the last file and broker
			c.lastFile, c.lastFileBroker = ev.File, ev.Broker
		}
		if c.lastBroker == -1 {
			c.lastBroker = ev.Broker
		} else if c.lastBroker != ev.Broker {
			c.lastBroker = -2 // several brokers: no single guess
		}
		return ev.Broker
	}
	if b, ok := c.fileBroker[ev.File]; ok {
		return b
	}
	if c.lastBroker >= 0 {
		return c.lastBroker
	}
	return -1
}

func (c *Checker) part(ev *logparse.Event) *partState {
	k := partKey{c.broker(ev), ev.Topic, ev.Partition}
	if c.lastState != nil && k == c.lastKey {
		return c.lastState
	}
	p := c.parts[k]
	if p == nil {
		p = &partState{lastHW: -1, knownHW: -1, lastEpoch: -1, isrSize: -1, lastTruncO: -1}
		c.parts[k] = p
	}
	c.lastKey, c.lastState = k, p
	return p
}

// Forget drops the state of a partition (a deleted topic), so that it starts over.
func (c *Checker) Forget(broker int32, topic string, partition int32) {
	delete(c.parts, partKey{broker, topic, partition})
	c.lastState = nil
}

// Retain drops the state of every partition keep refuses (a deleted topic),
// and the topic ids whose topic has no partition left, so that a long run
// over topic churn does not grow without end. keep gets the topic's name,
// or for an unclean election named only by id, the id.
func (c *Checker) Retain(keep func(topic string, partition int32) bool) {
	c.lastState = nil
	names := make(map[string]struct{})
	for k := range c.parts {
		if keep(k.topic, k.partition) {
			names[k.topic] = struct{}{}
		} else {
			delete(c.parts, k)
		}
	}
	for k := range c.zkISR {
		if keep(k.topic, k.partition) {
			names[k.topic] = struct{}{}
		} else {
			delete(c.zkISR, k)
		}
	}
	// An unclean election is kept for its replays, which follow within
	// moments: an hour of log time after the latest one, unless its topic
	// (named, or by a known id) is gone. One keyed by an id not learnt yet
	// may be named by the next line, so its age alone decides.
	var latest time.Time
	for _, u := range c.unclean {
		if u.at.After(latest) {
			latest = u.at
		}
	}
	for k, u := range c.unclean {
		name, byID := c.topicIDs[k.topic]
		if u.at.Before(latest.Add(-uncleanKeep)) || byID && !keep(name, k.partition) {
			delete(c.unclean, k)
		}
	}
	for id, name := range c.topicIDs {
		if _, ok := names[name]; !ok {
			delete(c.topicIDs, id)
		}
	}
}

// Observe checks one event and writes what it found to *r. It may fill
// ev.Topic from a topic id learned earlier (controller lines name the topic
// only by id). The caller owns r, so that a hot loop reuses one Result
// instead of copying a new one per event.
func (c *Checker) Observe(ev *logparse.Event, r *Result) {
	*r = Result{}
	if ev.TopicID != "" {
		if ev.Topic != "" {
			c.topicIDs[ev.TopicID] = ev.Topic
		} else if name, ok := c.topicIDs[ev.TopicID]; ok {
			ev.Topic = name
		}
	}
	switch ev.Type {
	case logparse.HWUpdate:
		c.hwUpdate(ev, r)
	case logparse.ISRUpdate:
		c.isrUpdate(ev, r)
	case logparse.ISRExpand:
		p := c.part(ev)
		p.isrSize, p.isrT = len(ev.ToISR), ev.Time
		r.ISRExpand = true
	case logparse.ISRShrink:
		// The leader's proposal: the controller may reject it (a stale
		// partition epoch, an ineligible replica) and Kafka's ISR then never
		// changed, so it is counted at its commit ("ISR updated to", or
		// isr_shrink_committed), compared with the ISR it starts from: a
		// sidecar started after the last ISR line learns that ISR here.
		p := c.part(ev)
		if !ev.Time.Before(p.isrT) {
			// It starts from a larger ISR than the last one seen: an expansion
			// happened that no line showed (a KRaft leader whose expansion
			// reaches it through metadata first logs it only at DEBUG).
			if p.isrSize >= 0 && len(ev.FromISR) > p.isrSize {
				r.ISRExpand = true
			}
			p.isrSize, p.isrT = len(ev.FromISR), ev.Time
		}
	case logparse.ISRShrinkCommitted:
		p := c.part(ev)
		r.ISRShrink = p.isrSize < 0 || len(ev.ToISR) < p.isrSize
		p.isrSize, p.isrT = len(ev.ToISR), ev.Time
	case logparse.ProduceRejectedMinISR:
		r.Checked.add(MinISREnforced)
		if ev.MinISR > 0 && ev.ISRSize >= ev.MinISR {
			r.Violated.add(MinISREnforced)
			r.Detail = fmt.Sprintf("produce rejected with ISR size %d >= min ISR %d", ev.ISRSize, ev.MinISR)
		}
	case logparse.ISRAckProgress:
		if ev.AllAcked {
			r.Checked.add(ISRAcksComplete)
		}
	case logparse.HWBlockedUnderMinISR:
		r.Checked.add(HWStallUnderMinISR)
	case logparse.LogLoaded:
		p := c.part(ev)
		p.lastHW = -1
		p.setKnownHW(ev.HW, ev.Time)
		p.lastTruncO = -1
		if ev.HW == 0 {
			// A new (or re-created) log: the partition epoch starts over too.
			p.lastEpoch = -1
			p.isrSize = -1
		}
	case logparse.LeaderStart, logparse.FollowerStart:
		c.transition(ev)
	case logparse.FetcherTruncation, logparse.LogTruncation, logparse.TruncationBelowHW:
		c.truncation(ev, r)
	case logparse.UncleanElection:
		c.uncleanElection(ev, r)
	case logparse.PartitionStateChange:
		c.zkStateChange(ev, r)
	case logparse.QuorumTransition:
		if ev.State == "leader" {
			r.Checked.add(MetadataHWMonotonic)
			c.regressed[ev.Broker] = -1
		}
	case logparse.QuorumHWRegression:
		c.metadataHWRegression(ev, r)
	}
}

// maxQuorumNodes bounds the quorum nodes the checker remembers: a quorum
// has a few voters, a log naming thousands is junk.
const maxQuorumNodes = 256

// metadataHWRegression: the quorum's leader computed a metadata HW below
// its current one, which Kafka says means a voter lost committed data (or
// the voter set changed). The leader logs it at every HW computation until
// the HW catches up: one regression per current HW and leadership.
func (c *Checker) metadataHWRegression(ev *logparse.Event, r *Result) {
	r.Checked.add(MetadataHWMonotonic)
	if last, seen := c.regressed[ev.Broker]; seen && last == ev.From {
		return
	}
	if _, seen := c.regressed[ev.Broker]; seen || len(c.regressed) < maxQuorumNodes {
		c.regressed[ev.Broker] = ev.From
	}
	r.Violated.add(MetadataHWMonotonic)
	r.MetadataHWRegression = true
	r.Detail = fmt.Sprintf("metadata high watermark computed at %d, below the current %d (quorum leader %d)", ev.To, ev.From, ev.Broker)
}

// zkStateChange finds the unclean elections of a ZooKeeper-mode controller,
// which logs none as such at INFO: a partition brought back from
// OfflinePartition under a leader outside the last ISR it logged. Kafka 3.2+
// marks that leaderRecoveryState=RECOVERING, which decides alone; before, the
// new ISR must also be the leader alone (a clean election keeps the live ISR),
// so that an expansion the controller did not log cannot look unclean.
func (c *Checker) zkStateChange(ev *logparse.Event, r *Result) {
	k := uncleanKey{ev.Topic, ev.Partition}
	last, known := c.zkISR[k]
	if ev.Reason == "OfflinePartition" {
		r.Checked.add(NoUncleanElection)
		outside := known && !slices.Contains(last, ev.Leader) && len(ev.ISR) == 1
		if ev.Recovering || (!ev.HasRecoveryState && outside) {
			c.uncleanElection(ev, r)
		}
	}
	c.zkISR[k] = append(last[:0], ev.ISR...)
}

func (c *Checker) hwUpdate(ev *logparse.Event, r *Result) {
	p := c.part(ev)
	r.Checked.add(HWMonotonic)
	switch {
	case ev.To < ev.From:
		// Equal offsets on a newer segment are a legal roll; only a lower offset is a regression.
		r.Violated.add(HWMonotonic)
		r.Detail = fmt.Sprintf("HW decreased from %d to %d", ev.From, ev.To)
	case p.lastHW >= 0 && ev.From < p.lastHW:
		r.Violated.add(HWMonotonic)
		r.Detail = fmt.Sprintf("HW went back from %d (previous update) to %d", p.lastHW, ev.From)
	}
	p.lastHW = ev.To
	p.setKnownHW(ev.To, ev.Time)
}

// setKnownHW keeps the HW of the newest line: a live sidecar follows
// server.log and state-change.log in separate goroutines, so lines of the two
// files may arrive out of order.
func (p *partState) setKnownHW(hw int64, t time.Time) {
	if p.knownHW < 0 || !t.Before(p.knownHWT) {
		p.knownHW, p.knownHWT = hw, t
	}
}

func (c *Checker) isrUpdate(ev *logparse.Event, r *Result) {
	p := c.part(ev)
	r.Checked.add(ISRChangeVersioned)
	if ev.Version < 0 {
		r.Violated.add(ISRChangeVersioned)
		r.Detail = "ISR update without a version / partition epoch"
	} else {
		r.Checked.add(PartitionEpochMonotonic)
		if p.lastEpoch >= 0 && ev.Version <= p.lastEpoch {
			r.Violated.add(PartitionEpochMonotonic)
			r.Detail = fmt.Sprintf("partition epoch did not increase: %d -> %d", p.lastEpoch, ev.Version)
		}
		p.lastEpoch = ev.Version
	}
	n := len(ev.ISR)
	if p.isrSize >= 0 {
		r.ISRShrink = n < p.isrSize
		r.ISRExpand = n > p.isrSize
	}
	p.isrSize, p.isrT = n, ev.Time
}

// transition handles leader_start / follower_start: a new leadership resets the
// HW sequence (a new leader may start below the HW the old one printed) and carries the replica's HW and partition epoch.
func (c *Checker) transition(ev *logparse.Event) {
	p := c.part(ev)
	if ev.TopicID != "" && p.topicID != "" && ev.TopicID != p.topicID {
		// A re-created topic: everything starts over.
		*p = partState{lastHW: -1, knownHW: -1, lastEpoch: -1, isrSize: -1, lastTruncO: -1}
	}
	if ev.TopicID != "" {
		p.topicID = ev.TopicID
	}
	p.lastHW = -1
	if ev.HW >= 0 {
		p.setKnownHW(ev.HW, ev.Time)
	}
	if ev.PartitionEpoch >= 0 && ev.PartitionEpoch > p.lastEpoch {
		p.lastEpoch = ev.PartitionEpoch
	}
	// A leadership line older than the last ISR line (another file, read later)
	// says nothing new about the ISR.
	if !ev.Time.Before(p.isrT) {
		if ev.Type == logparse.LeaderStart && ev.ISR != nil {
			p.isrSize, p.isrT = len(ev.ISR), ev.Time
		}
		if ev.Type == logparse.FollowerStart {
			// Only the leader commits ISR changes; a later leadership starts from its own line.
			p.isrSize, p.isrT = -1, ev.Time
		}
	}
}

// truncation flags a replica that removed data below its last known HW, i.e.
// committed data. Kafka's own "below high watermark" WARN is not printed reliably
// before 4.2 (KAFKA-19474), so the HW is tracked from log_loaded, leader_start,
// follower_start and hw_update lines instead.
func (c *Checker) truncation(ev *logparse.Event, r *Result) {
	if ev.Type == logparse.LogTruncation && ev.NoEffect {
		return
	}
	p := c.part(ev)
	p.lastHW = -1
	r.Checked.add(NoTruncationBelowHW)
	hw := p.knownHW
	if ev.Type == logparse.TruncationBelowHW && ev.HW > hw {
		hw = ev.HW
	}
	below := hw >= 0 && ev.Offset < hw
	if ev.Type == logparse.TruncationBelowHW {
		below = true
	}
	if below && p.lastTruncO != ev.Offset {
		r.Violated.add(NoTruncationBelowHW)
		r.BelowHW = true
		r.Detail = fmt.Sprintf("truncated to offset %d below high watermark %d", ev.Offset, hw)
		p.lastTruncO = ev.Offset
	}
	if hw < 0 || ev.Offset < hw {
		p.knownHW, p.knownHWT = ev.Offset, ev.Time
	}
}

func (c *Checker) uncleanElection(ev *logparse.Event, r *Result) {
	r.Checked.add(NoUncleanElection)
	k := uncleanKey{ev.TopicID, ev.Partition}
	if k.topic == "" {
		k.topic = ev.Topic
	}
	prev, seen := c.unclean[k]
	cur := uncleanSeen{epoch: ev.PartitionEpoch, leader: ev.Leader, at: ev.Time}
	dup := false
	if seen {
		switch {
		case prev.epoch >= 0 && cur.epoch >= 0:
			dup = prev.epoch == cur.epoch
		default:
			dt := cur.at.Sub(prev.at)
			if dt < 0 {
				dt = -dt
			}
			dup = dt <= uncleanDedupWindow && (prev.leader == cur.leader || prev.leader < 0 || cur.leader < 0)
		}
	}
	if seen && dup && cur.epoch < 0 {
		cur.epoch = prev.epoch
	}
	c.unclean[k] = cur
	if dup {
		return
	}
	r.Violated.add(NoUncleanElection)
	r.NewUnclean = true
	name := ev.Topic
	if name == "" {
		name = ev.TopicID
	}
	r.Detail = fmt.Sprintf("unclean leader election for %s-%d (new leader %d)", name, ev.Partition, ev.Leader)
}
