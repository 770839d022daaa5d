// Package collector keeps the sidecar's replication state — fed by the broker's
// logs and, optionally, the Kafka admin API — and renders it as Prometheus
// metrics. A scrape only reads memory: it never waits on a file or on Kafka.
package collector

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// PartitionKey names a partition.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// partitionCounters are the log-derived counters of one partition, in the order
// of counterDescs.
type partitionCounters [numCounters]uint64

const (
	cHWUpdates = iota
	cHWViolations
	cHWBlocked
	cISRShrinks
	cISRExpands
	cEpochRegressions
	cNotEnoughReplicas
	cTruncations
	cTruncationsBelowHW
	cUnclean
	cLeaderTransitions
	cFollowerTransitions
	cAlterPartitionFailures
	numCounters
)

// logPartition is what this broker's logs said about one partition.
//
// What an HW update touches comes first, with times as nanoseconds: with 10k
// partitions every update finds its partition out of cache, and a line or
// two per update costs less than the four the time.Time layout spread over.
type logPartition struct {
	hw   int64 // last HW seen in the log; valid when hasHW
	hwT  int64 // log time (logNanos) of the line hw came from
	seen int64 // wall time (UnixNano) of the last event

	// Log time (logNanos) of the last leadership / ISR line: the files are
	// followed by separate goroutines (and read from the start after a
	// restart), so a gauge only takes a value from a line at least as new as
	// its current one.
	roleT, isrT int64

	hasHW   bool
	leader  bool // Leader-only view (ISR, leader epoch): this broker's log speaks for the partition only while it leads it.
	dropped bool // no longer in Store.parts: a Result.Slot that still holds it is stale

	counters partitionCounters

	labels      []*dto.LabelPair // {partition, topic}, built once: a scrape reuses them
	isrSize     int
	isrAt       time.Time
	leaderEpoch int64
	epochAt     time.Time
}

func newLogPartition(topic string, partition int32) *logPartition {
	return &logPartition{
		hwT: math.MinInt64, roleT: math.MinInt64, isrT: math.MinInt64, leaderEpoch: -1,
		labels: labelPairs("partition", string(appendInt(nil, int64(partition))), "topic", topic),
	}
}

// logNanos orders log times as int64; a line without a timestamp (zero time)
// sorts before every other, as time.Time's Before did.
func logNanos(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

// Store is the sidecar's partition state built from log events. It is safe for
// concurrent use: one goroutine per followed file applies events, scrapes read.
type Store struct {
	mu      sync.Mutex
	checker *logparse.Checker
	res     logparse.Result // the last event's, reused: apply runs under mu
	parts   map[PartitionKey]*logPartition
	filter  func(topic string) bool
	admit   map[string]bool // filter answers by topic
	now     func() time.Time
	// tick is a coarse wall clock (unix ns) the followers set once per poll:
	// time.Now for every event was a tenth of the cost of a busy log.
	tick atomic.Int64

	events    [256]uint64    // by logparse.Type
	lastEvent [256]time.Time // by logparse.Type

	// Unclean elections seen before the topic's name: the active controller's
	// "Setting new leader … using an unclean election" names the topic only by id;
	// the replayed "UNCLEAN partition change" line that follows names both.
	pendingUnclean map[PartitionKey]uint64 // keyed by topic id

	// The last partition applied: consecutive lines of a busy log are mostly
	// about one partition, and the map lookup was a large part of Apply.
	lastKey  PartitionKey
	lastPart *logPartition
}

// NewStore returns an empty store. filter (nil = all) decides which topics get
// per-partition state; events of other topics still count in the event totals.
func NewStore(filter func(topic string) bool) *Store {
	return &Store{
		checker:        logparse.NewChecker(),
		parts:          make(map[PartitionKey]*logPartition),
		filter:         filter,
		admit:          make(map[string]bool),
		pendingUnclean: make(map[PartitionKey]uint64),
		now:            time.Now,
	}
}

// maxAdmitted bounds the topic filter's memo (a cluster has far fewer topics).
const maxAdmitted = 1 << 16

// admitted reports whether the topic filter lets the topic in, remembering
// the answer: the filter is a regexp, and running it for every event was a
// fifth of the sidecar's CPU beside a busy broker.
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

// storeBatch holds the store's lock across a few records of one poll: taking
// it for every event was a tenth of the sidecar's CPU beside a busy broker.
// The hold is bounded in records (parsed or not), so a scrape waits at most
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
	wall := s.wallNow()
	at := ev.Time
	if at.IsZero() {
		at = wall
	}
	s.lastEvent[ev.Type] = at
	switch ev.Type {
	case logparse.HWSkip, logparse.ISRAckProgress, logparse.ReplicaLEO:
		// Counted by type only (kafka_replication_log_events_total): two thirds
		// of a TRACE log, and looking up their partition's state was the
		// largest cost left in a busy sidecar. The checker keeps no state for
		// them either (it only counts complete acks for verify's report), and
		// the follower's parser reads ack lines shallowly (ShallowAcks). The
		// partition appears with its first HW update, ISR line or HW
		// increment refused under min ISR.
		return
	}
	res := &s.res
	s.checker.Observe(ev, res)

	if ev.Topic == "" && ev.TopicID != "" && ev.Partition >= 0 {
		if res.NewUnclean {
			s.pendingUnclean[PartitionKey{ev.TopicID, ev.Partition}]++
		}
		return
	}
	if ev.Topic == "" || ev.Partition < 0 {
		return
	}
	p := s.partition(ev, res.Slot)
	if p == nil {
		return // a topic the filter leaves out
	}
	c := &p.counters
	if ev.TopicID != "" {
		idKey := PartitionKey{ev.TopicID, ev.Partition}
		if n := s.pendingUnclean[idKey]; n > 0 {
			c[cUnclean] += n
			delete(s.pendingUnclean, idKey)
		}
	}
	if res.Violated.Has(logparse.HWMonotonic) {
		c[cHWViolations]++
	}
	if res.Violated.Has(logparse.PartitionEpochMonotonic) {
		c[cEpochRegressions]++
	}
	if res.ISRShrink {
		c[cISRShrinks]++
	}
	if res.ISRExpand {
		c[cISRExpands]++
	}
	if res.BelowHW {
		c[cTruncationsBelowHW]++
	}
	if res.NewUnclean {
		c[cUnclean]++
	}
	p.seen = wall.UnixNano()
	t := logNanos(ev.Time)
	switch ev.Type {
	case logparse.HWUpdate:
		c[cHWUpdates]++
		p.setHW(ev.To, t)
		p.setRole(true, t)
	case logparse.HWBlockedUnderMinISR:
		c[cHWBlocked]++
	case logparse.ProduceRejectedMinISR:
		c[cNotEnoughReplicas]++
	case logparse.LogTruncation:
		// Only "Truncating to offset N" removes data; the fetcher's "Truncating
		// partition …" line precedes it whether or not anything is removed.
		if !ev.NoEffect {
			c[cTruncations]++
		}
	case logparse.AlterPartitionFailed:
		c[cAlterPartitionFailures]++
	case logparse.LogLoaded:
		p.setHW(ev.HW, t)
	case logparse.HWNonMonotonic:
		p.setHW(ev.To, t) // a follower's HW lowered by truncation
	case logparse.ISRUpdate:
		p.setRole(true, t)
		if t >= p.isrT {
			p.isrT, p.isrSize, p.isrAt = t, len(ev.ISR), wall
		}
	case logparse.ISRExpand:
		// Logged by the leader; on KRaft often its only line for the new ISR.
		p.setRole(true, t)
		if t >= p.isrT {
			p.isrT, p.isrSize, p.isrAt = t, len(ev.ToISR), wall
		}
	case logparse.LeaderStart:
		c[cLeaderTransitions]++
		p.setHW(ev.HW, t)
		if p.setRole(true, t) {
			p.leaderEpoch, p.epochAt = ev.LeaderEpoch, wall
		}
		if t >= p.isrT {
			p.isrT, p.isrSize, p.isrAt = t, len(ev.ISR), wall
		}
	case logparse.FollowerStart:
		c[cFollowerTransitions]++
		p.setHW(ev.HW, t)
		if p.setRole(false, t) {
			p.leaderEpoch, p.epochAt = ev.LeaderEpoch, wall
		}
	}
}

// partition finds (or makes) ev's partition state: through the slot the
// checker keeps for it when it has one, else through the map. nil means the
// topic filter leaves the topic out.
func (s *Store) partition(ev *logparse.Event, slot *any) *logPartition {
	if slot != nil {
		if p, _ := (*slot).(*logPartition); p != nil && !p.dropped {
			return p
		}
	}
	k := PartitionKey{ev.Topic, ev.Partition}
	p := s.lastPart
	if p == nil || k != s.lastKey {
		if !s.admitted(ev.Topic) {
			return nil
		}
		if p = s.parts[k]; p == nil {
			p = newLogPartition(ev.Topic, ev.Partition)
			s.parts[k] = p
		}
	}
	s.lastKey, s.lastPart = k, p
	if slot != nil {
		*slot = p
	}
	return p
}

// setHW keeps the HW of the newest line (t: logNanos).
func (p *logPartition) setHW(hw int64, t int64) {
	if !p.hasHW || t >= p.hwT {
		p.hw, p.hasHW, p.hwT = hw, true, t
	}
}

// setRole records leadership from a line at least as new as the last role line;
// it reports whether it did.
func (p *logPartition) setRole(leader bool, t int64) bool {
	if t < p.roleT {
		return false
	}
	p.leader, p.roleT = leader, t
	return true
}

// LogPartitionState implements admin.LogView: the ISR size and leader epoch this
// broker's log last showed for a partition it leads.
func (s *Store) LogPartitionState(topic string, partition int32) (isrSize int, isrAt time.Time, leaderEpoch int64, epochAt time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parts[PartitionKey{topic, partition}]
	if p == nil || !p.leader || p.isrAt.IsZero() {
		return 0, time.Time{}, 0, time.Time{}, false
	}
	return p.isrSize, p.isrAt, p.leaderEpoch, p.epochAt, true
}

// PendingISRShrink implements admin.LogView. The log state does not track
// shrinks awaiting the controller yet, so a stall it could explain is
// reported with cause "unknown".
func (s *Store) PendingISRShrink(topic string, partition int32) bool { return false }

// retainGrace keeps a partition whose topic the metadata does not list yet: a
// topic created just after the metadata request logs before the next refresh.
const retainGrace = time.Minute

// RetainTopics drops the state of topics that no longer exist, so that their
// series disappear. Called with the admin API's topic list after a refresh.
func (s *Store) RetainTopics(exists func(topic string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastPart = nil
	cutoff := s.now().Add(-retainGrace).UnixNano()
	for k, p := range s.parts {
		if !exists(k.Topic) && p.seen < cutoff {
			p.dropped = true
			delete(s.parts, k)
		}
	}
}
