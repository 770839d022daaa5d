package logstate

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/invariant"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Counter indexes Partition.Counters: the per-partition counters the logs drive.
type Counter int

// The counters, in the order internal/metrics' descriptor list renders them.
const (
	HWUpdates Counter = iota
	HWViolations
	HWBlocked
	ISRShrinks
	ISRExpands
	EpochRegressions
	NotEnoughReplicas
	Truncations
	TruncationsBelowHW
	UncleanElections
	LeaderTransitions
	FollowerTransitions
	AlterPartitionFailures
	HWLowered
	HWLoweredOffsets
	NumCounters
)

// Counters are one partition's log-derived counters, indexed by Counter.
type Counters [NumCounters]uint64

// logPartition is what this broker's logs said about one partition. Events
// arrive in log-time order (Stream), so each gauge takes the last line's value.
type logPartition struct {
	hw   int64 // last HW seen in the log; valid when hasHW
	seen int64 // wall time (UnixNano) of the last event

	hasHW  bool
	leader bool // Leader-only view (ISR, leader epoch): this broker's log speaks for the partition only while it leads it.

	counters Counters

	isrSize     int
	isrAt       time.Time
	leaderEpoch int64
	epochAt     time.Time

	// shrinkPending: this broker, leading the partition, logged "Shrinking
	// ISR from … to …" (to shrinkTo members) and no line since says the
	// controller committed it.
	shrinkPending bool
	shrinkTo      int

	admin adminISR
}

// adminISR is what the admin API's successive Metadata answers said about
// the partition's ISR (ObserveISR), to count the changes the log never shows.
type adminISR struct {
	size int // -1 until the first observation
	// The log's ISR counters at the last observation: a change the admin API
	// saw counts only if the log did not count one since.
	shrinks, expands uint64
	// A change seen at the last observation, decided at the next one: the
	// log line for it may arrive a little after the Metadata answer.
	pendingShrink, pendingExpand bool
	logShrinks, logExpands       uint64 // the log counters before that change
}

func newLogPartition() *logPartition {
	return &logPartition{leaderEpoch: -1, admin: adminISR{size: -1}}
}

// Store is the sidecar's partition state built from log events. It is safe for
// concurrent use: the Stream applies events, scrapes and the admin half read.
type Store struct {
	mu      sync.Mutex
	checker *invariant.Checker
	res     invariant.Result // the last event's, reused: apply runs under mu
	parts   map[logparse.PartitionKey]*logPartition
	filter  func(topic string) bool
	admit   map[string]bool // filter answers by topic
	now     func() time.Time
	// tick is a coarse wall clock (unix ns) the followers set once per poll,
	// so that an event does not read the clock.
	tick atomic.Int64

	events    [256]uint64    // by logparse.Type
	lastEvent [256]time.Time // by logparse.Type

	// Unclean elections seen before the topic's name: the active controller's
	// "Setting new leader … using an unclean election" names the topic only by id;
	// the replayed "UNCLEAN partition change" line that follows names both.
	pendingUnclean map[logparse.PartitionKey]uint64 // keyed by topic id

	// The last partition applied: consecutive lines of a busy log are mostly
	// about one partition, so most events skip the map lookup.
	lastKey  logparse.PartitionKey
	lastPart *logPartition

	// maxParts bounds the partitions kept; events of others are refused
	// (counted by type still) and counted in refused.
	maxParts int
	refused  uint64

	// broker is the broker id the lines name: -1 before one did, -2 once
	// they named several (LogBrokerID).
	broker int32

	// logDirs are the log directories the broker said it stopped serving,
	// true until it starts again (then false: served again, or failed anew
	// with a new line); at most maxLogDirs.
	logDirs map[LogDir]bool // keyed with Offline false

	// quorum is the KRaft metadata log as each node's lines told it (quorum.go).
	quorum map[int32]*QuorumNode
}

// maxLogDirs bounds the log directories kept: a broker has a few, a log
// that names thousands is junk.
const maxLogDirs = 64

// DefaultMaxPartitions is the default bound on the partitions a Store keeps
// state for: a broker hosts thousands of partitions (Kafka's guidance is a
// few thousand per broker), so ten times the largest of those still fits,
// while a log that names millions of partitions cannot exhaust memory.
const DefaultMaxPartitions = 50_000

// NewStore returns an empty store. filter (nil = all) decides which topics get
// per-partition state; events of other topics still count in the event totals.
// It keeps state for at most DefaultMaxPartitions partitions (SetMaxPartitions).
func NewStore(filter func(topic string) bool) *Store {
	return &Store{
		checker:        invariant.NewChecker(),
		parts:          make(map[logparse.PartitionKey]*logPartition),
		filter:         filter,
		admit:          make(map[string]bool),
		pendingUnclean: make(map[logparse.PartitionKey]uint64),
		logDirs:        make(map[LogDir]bool),
		quorum:         make(map[int32]*QuorumNode),
		now:            time.Now,
		maxParts:       DefaultMaxPartitions,
		broker:         -1,
	}
}

// SetMaxPartitions bounds the partitions the store keeps state for (n > 0).
func (s *Store) SetMaxPartitions(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxParts = n
}

// maxAdmitted bounds the topic filter's memo (a cluster has far fewer topics).
const maxAdmitted = 1 << 16

// admitted reports whether the topic filter lets the topic in, remembering
// the answer: the filter is a regexp, too costly to run for every event.
func (s *Store) admitted(topic string) bool {
	if s.filter == nil {
		return true
	}
	ok, seen := s.admit[topic]
	if !seen {
		if len(s.admit) >= maxAdmitted {
			clear(s.admit)
		}
		ok = s.filter(topic)
		s.admit[topic] = ok
	}
	return ok
}

// Tick sets the coarse clock Apply reads (called by the followers once per poll).
func (s *Store) Tick(now time.Time) { s.tick.Store(now.UnixNano()) }

// wallNow is the coarse clock, or the real one before the first Tick.
func (s *Store) wallNow() time.Time {
	if ns := s.tick.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return s.now()
}

// Apply feeds one parsed event into the state: the shared invariant checker
// first (the same code `verify` runs), then the partition's counters and gauges.
func (s *Store) Apply(ev *logparse.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(ev)
}

// storeBatch holds the store's lock across a few records of one poll rather
// than taking it for every event. The hold is bounded in records (parsed or not), so a scrape waits at most
// for the parsing of that many lines.
type storeBatch struct {
	s    *Store
	held bool
	n    int
}

// batchRecords bounds how many records one hold of the store's lock spans.
const batchRecords = 256

// apply applies ev under the batch's hold of the lock.
func (b *storeBatch) apply(ev *logparse.Event) {
	if !b.held {
		b.s.mu.Lock()
		b.held = true
	}
	b.s.apply(ev)
}

// record counts one record read under the hold, releasing it at the bound.
func (b *storeBatch) record() {
	if b.held {
		if b.n++; b.n >= batchRecords {
			b.release()
		}
	}
}

// release lets scrapes in; called at the end of every poll.
func (b *storeBatch) release() {
	if b.held {
		b.s.mu.Unlock()
		b.held, b.n = false, 0
	}
}

// apply is Apply with s.mu held.
func (s *Store) apply(ev *logparse.Event) {
	s.events[ev.Type]++
	if ev.Broker != s.broker && ev.Broker >= 0 && s.broker != -2 {
		s.noteBroker(ev.Broker)
	}
	at := ev.Time
	if at.IsZero() {
		at = s.wallNow()
	}
	s.lastEvent[ev.Type] = at
	switch ev.Type {
	case logparse.HWSkip, logparse.ISRAckProgress, logparse.ReplicaLEO:
		// Counted by type only (kafka_replication_log_events_total): they are
		// most of a TRACE log and no partition metric needs them. The checker
		// keeps no state for them either (it only counts complete acks for verify's report), and
		// the parser reads them to their type (TypeOnly). The
		// partition appears with its first HW update, ISR line or HW
		// increment refused under min ISR.
		return
	}
	if s.applyServer(ev) || s.applyQuorum(ev) {
		return
	}
	res := &s.res
	observed := ev.Topic == ""
	if observed {
		// Controller lines may name the topic only by id: the checker
		// fills in the name when it has learnt it.
		s.checker.Observe(ev, res)
	}
	if ev.Topic == "" {
		if ev.TopicID != "" && ev.Partition >= 0 && res.NewUnclean && len(s.pendingUnclean) < s.maxParts {
			s.pendingUnclean[logparse.PartitionKey{Topic: ev.TopicID, Partition: ev.Partition}]++
		}
		return
	}
	if ev.Partition < 0 {
		return
	}
	// The partition first: the checker keeps state only for the partitions
	// the store keeps, so the topic filter and the bound apply to both.
	p := s.partition(ev)
	if p == nil {
		return
	}
	if !observed {
		s.checker.Observe(ev, res)
	}
	c := &p.counters
	if ev.TopicID != "" {
		idKey := logparse.PartitionKey{Topic: ev.TopicID, Partition: ev.Partition}
		if n := s.pendingUnclean[idKey]; n > 0 {
			c[UncleanElections] += n
			delete(s.pendingUnclean, idKey)
		}
	}
	if res.Violated.Has(invariant.HWMonotonic) {
		c[HWViolations]++
	}
	if res.Violated.Has(invariant.PartitionEpochMonotonic) {
		c[EpochRegressions]++
	}
	if res.ISRShrink {
		c[ISRShrinks]++
	}
	if res.ISRExpand {
		c[ISRExpands]++
	}
	if res.BelowHW {
		c[TruncationsBelowHW]++
	}
	if res.NewUnclean {
		c[UncleanElections]++
	}
	wall := s.wallNow()
	p.seen = wall.UnixNano()
	switch ev.Type {
	case logparse.HWUpdate:
		c[HWUpdates]++
		p.setHW(ev.To)
		p.leader = true
	case logparse.HWBlockedUnderMinISR:
		c[HWBlocked]++
	case logparse.ProduceRejectedMinISR:
		c[NotEnoughReplicas]++
	case logparse.LogTruncation:
		// Only "Truncating to offset N" removes data; the fetcher's "Truncating
		// partition …" line precedes it whether or not anything is removed.
		if !ev.NoEffect {
			c[Truncations]++
		}
	case logparse.AlterPartitionFailed:
		// The controller refused the proposal: nothing is pending until the
		// leader proposes again.
		c[AlterPartitionFailures]++
		p.shrinkPending = false
	case logparse.LogLoaded:
		p.setHW(ev.HW)
	case logparse.HWNonMonotonic:
		p.setHW(ev.To) // a follower's HW lowered by truncation
		// Kafka's own account of committed offsets this replica gave up: the
		// old leader's only line about a loss that happened while it was away.
		if ev.From > ev.To {
			c[HWLowered]++
			c[HWLoweredOffsets] += uint64(ev.From - ev.To)
		}
	case logparse.ISRShrink:
		// Proposed, not committed: the controller may never answer. Only the
		// leader logs it, which is all a sidecar started after the election
		// may have read about the partition's role.
		p.leader = true
		p.shrinkPending, p.shrinkTo = true, len(ev.ToISR)
	case logparse.ISRUpdate:
		p.leader = true
		p.isrSize, p.isrAt, p.shrinkPending = len(ev.ISR), wall, false
	case logparse.ISRExpand, logparse.ISRShrinkCommitted:
		// Logged by the leader; on KRaft often its only line for the new ISR.
		p.leader = true
		p.isrSize, p.isrAt, p.shrinkPending = len(ev.ToISR), wall, false
	case logparse.LeaderStart:
		c[LeaderTransitions]++
		p.setHW(ev.HW)
		p.leader, p.leaderEpoch, p.epochAt = true, ev.LeaderEpoch, wall
		p.isrSize, p.isrAt, p.shrinkPending = len(ev.ISR), wall, false
	case logparse.FollowerStart:
		c[FollowerTransitions]++
		p.setHW(ev.HW)
		p.leader, p.leaderEpoch, p.epochAt = false, ev.LeaderEpoch, wall
		p.shrinkPending = false
	}
}

// applyServer applies the broker's lines about itself, which name no
// partition: a log directory it stopped serving, and its start, after which
// every directory it named is served again until it says otherwise.
func (s *Store) applyServer(ev *logparse.Event) bool {
	switch ev.Type {
	case logparse.LogDirOffline:
		k := LogDir{Broker: ev.Broker, Path: ev.Dir}
		if _, known := s.logDirs[k]; known || len(s.logDirs) < maxLogDirs {
			s.logDirs[k] = true
		}
	case logparse.BrokerStart:
		// ZooKeeper mode's line names no broker: every directory.
		for k := range s.logDirs {
			if ev.Broker < 0 || k.Broker == ev.Broker {
				s.logDirs[k] = false
			}
		}
	default:
		return false
	}
	return true
}

// noteBroker keeps the first broker id the lines name, or -2 once they
// name another: logs of several brokers say nothing about this one.
func (s *Store) noteBroker(id int32) {
	if s.broker == -1 {
		s.broker = id
	} else {
		s.broker = -2
	}
}

// LogBrokerID implements poller.LogStore: the broker id this broker's own
// log lines name, when they all name the same one.
func (s *Store) LogBrokerID() (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broker, s.broker >= 0
}

// partition finds (or makes) ev's partition state. nil means the topic
// filter leaves the topic out.
func (s *Store) partition(ev *logparse.Event) *logPartition {
	k := logparse.PartitionKey{Topic: ev.Topic, Partition: ev.Partition}
	p := s.lastPart
	if p == nil || k != s.lastKey {
		if !s.admitted(ev.Topic) {
			return nil
		}
		if p = s.parts[k]; p == nil {
			if p = s.newPartition(k); p == nil {
				return nil
			}
		}
	}
	s.lastKey, s.lastPart = k, p
	return p
}

// newPartition adds state for k, or refuses it (nil) at the bound.
func (s *Store) newPartition(k logparse.PartitionKey) *logPartition {
	if len(s.parts) >= s.maxParts {
		s.refused++
		return nil
	}
	p := newLogPartition()
	s.parts[k] = p
	return p
}

func (p *logPartition) setHW(hw int64) { p.hw, p.hasHW = hw, true }

// LogPartitionState implements poller.LogStore: the ISR size and leader epoch this
// broker's log last showed for a partition it leads.
func (s *Store) LogPartitionState(topic string, partition int32) (isrSize int, isrAt time.Time, leaderEpoch int64, epochAt time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[logparse.PartitionKey{Topic: topic, Partition: partition}]
	if p == nil || !p.leader || p.isrAt.IsZero() {
		return 0, time.Time{}, 0, time.Time{}, false
	}
	return p.isrSize, p.isrAt, p.leaderEpoch, p.epochAt, true
}

// PendingISRShrink implements poller.LogStore: this broker, leading the
// partition, logged a shrink that no later line shows committed, and the
// admin API's last ISR is still larger than the shrink's target.
func (s *Store) PendingISRShrink(topic string, partition int32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[logparse.PartitionKey{Topic: topic, Partition: partition}]
	return p != nil && p.leader && p.shrinkPending && (p.admin.size < 0 || p.admin.size > p.shrinkTo)
}

// ObserveISR implements poller.LogStore: the ISR size the admin API reported
// for a partition this sidecar exports. An ISR change the controller made
// without this broker logging it (a follower fenced by the controller, an
// expansion logged only at DEBUG) is counted in the ISR shrink and expand
// counters, once: a change is decided one observation later, and counts only
// if the log counted none since the observation before it.
func (s *Store) ObserveISR(topic string, partition int32, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admitted(topic) {
		return
	}
	k := logparse.PartitionKey{Topic: topic, Partition: partition}
	p := s.parts[k]
	if p == nil {
		if p = s.newPartition(k); p == nil {
			return
		}
		p.seen = s.now().UnixNano()
	}
	o, c := &p.admin, &p.counters
	if o.pendingShrink && c[ISRShrinks] == o.logShrinks {
		c[ISRShrinks]++
	}
	if o.pendingExpand && c[ISRExpands] == o.logExpands {
		c[ISRExpands]++
	}
	o.pendingShrink = o.size >= 0 && size < o.size
	o.pendingExpand = o.size >= 0 && size > o.size
	o.logShrinks, o.logExpands = o.shrinks, o.expands
	o.size, o.shrinks, o.expands = size, c[ISRShrinks], c[ISRExpands]
	if size <= p.shrinkTo {
		p.shrinkPending = false
	}
}

// retainGrace keeps a partition whose topic the metadata does not list yet: a
// topic created just after the metadata request logs before the next refresh.
const retainGrace = time.Minute

// hostedGrace keeps a partition whose replica moved away from this broker
// long enough for its last counter increments to be scraped and alerted on.
const hostedGrace = time.Hour

// Retain drops the state of partitions that no longer exist (after
// retainGrace) or that this broker no longer hosts (after hostedGrace), so
// that their series disappear and a long-lived sidecar on a cluster with topic
// churn does not grow without end. Called with the admin API's view after a
// refresh; hosted may be nil when this broker's id is not known.
func (s *Store) Retain(exists func(topic string) bool, hosted func(logparse.PartitionKey) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastPart = nil
	now := s.now()
	gone, moved := now.Add(-retainGrace).UnixNano(), now.Add(-hostedGrace).UnixNano()
	for k, p := range s.parts {
		if (!exists(k.Topic) && p.seen < gone) || (hosted != nil && !hosted(k) && p.seen < moved) {
			delete(s.parts, k)
		}
	}
	// The checker's state goes with the partition's, or with its topic for
	// the partitions only the controller's lines named.
	s.checker.Retain(func(topic string, partition int32) bool {
		_, kept := s.parts[logparse.PartitionKey{Topic: topic, Partition: partition}]
		return kept || exists(topic)
	})
}

// Partition is one partition's log-derived state as a scrape reads it.
type Partition struct {
	logparse.PartitionKey
	Counters Counters
	HW       int64 // the last high watermark the log showed; valid when HasHW
	HasHW    bool
	// The leader-only view: set while this broker's log says it leads the
	// partition.
	ISRSize        int
	HasISR         bool
	LeaderEpoch    int64
	HasLeaderEpoch bool
}

// Snapshot is a copy of the store's state, taken for one scrape.
type Snapshot struct {
	// Refused counts events whose partition got no state because the store
	// held its maximum number of partitions.
	Refused    uint64
	Partitions []Partition    // in no particular order
	Events     [256]uint64    // events applied, by logparse.Type
	LastEvent  [256]time.Time // time of the last event, by logparse.Type
	// LogDirs are the log directories the broker's lines named as stopped,
	// sorted by broker, then path: offline until the broker started again.
	LogDirs []LogDir
	// Quorum is the KRaft metadata log as each node's lines told it, by node id.
	Quorum []QuorumNode
}

// LogDir is a log directory a broker said it stopped serving.
type LogDir struct {
	Broker  int32 // the broker the line named
	Path    string
	Offline bool // no start of the broker since
}

// Snapshot copies the state into snap, reusing its slices. The lock is held
// for the copy only: rendering happens outside it.
func (s *Store) Snapshot(snap *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap.Partitions = snap.Partitions[:0]
	if n := len(s.parts); cap(snap.Partitions) < n {
		snap.Partitions = make([]Partition, 0, n)
	}
	for k, p := range s.parts {
		snap.Partitions = append(snap.Partitions, Partition{
			PartitionKey:   k,
			Counters:       p.counters,
			HW:             p.hw,
			HasHW:          p.hasHW,
			ISRSize:        p.isrSize,
			HasISR:         p.leader && !p.isrAt.IsZero(),
			LeaderEpoch:    p.leaderEpoch,
			HasLeaderEpoch: p.leader && p.leaderEpoch >= 0,
		})
	}
	snap.Events, snap.LastEvent, snap.Refused = s.events, s.lastEvent, s.refused
	snap.LogDirs = snap.LogDirs[:0]
	for k, offline := range s.logDirs {
		k.Offline = offline
		snap.LogDirs = append(snap.LogDirs, k)
	}
	slices.SortFunc(snap.LogDirs, func(x, y LogDir) int { return cmp.Or(cmp.Compare(x.Broker, y.Broker), strings.Compare(x.Path, y.Path)) })
	s.snapshotQuorum(snap)
}
