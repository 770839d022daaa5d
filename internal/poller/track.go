package poller

import (
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// hwTracker remembers, per partition, the last high watermark the admin API
// reported, when it last moved, and when the partition last looked healthy.
// It is pure (time is passed in) so stall and regression rules are tested
// without Kafka or sleeps.
type hwTracker struct {
	stallAfter time.Duration
	parts      map[logparse.PartitionKey]*hwState
}

type hwState struct {
	topicID     [16]byte
	hw          int64
	leaderEpoch int32
	lastAdvance time.Time
	// lastHealthy is the last reading where the HW advanced or the LEO was
	// not ahead of it: the stall clock starts there, not at lastAdvance,
	// because HW and LEO come from separate requests and one reading of a
	// busy (or long idle, just woken) partition can show LEO > HW.
	lastHealthy time.Time
	regressions uint64
	seen        uint64 // refresh generation of the last observation, for pruning
}

// hwObservation is what one refresh learnt about a partition.
type hwObservation struct {
	topicID     [16]byte
	hw          int64
	leaderEpoch int32
	leo         int64
	leoKnown    bool // the leader answered its LEO in this refresh
	// leoAsked is false for a partition this sidecar does not export: its
	// LEO is not read, so there is nothing to judge, and the stall clock
	// starts afresh when the partition becomes exported (leadership moved here).
	leoAsked bool
}

// hwVerdict is what the tracker concludes after an observation.
type hwVerdict struct {
	lastAdvance time.Time
	regressions uint64
	// stalled: LEO > HW and no healthy reading for the stall threshold.
	stalled bool
	// regressed is set when this observation moved the HW backwards:
	// from prevHW at prevEpoch to the observed HW and epoch.
	regressed bool
	prevHW    int64
	prevEpoch int32
}

func newHWTracker(stallAfter time.Duration) *hwTracker {
	return &hwTracker{stallAfter: stallAfter, parts: make(map[logparse.PartitionKey]*hwState)}
}

// observe records an HW reading taken at now during refresh generation gen.
// A reading for a new topic id (the topic was deleted and re-created) starts
// afresh: the new log's small HW is not a regression.
func (t *hwTracker) observe(k logparse.PartitionKey, o hwObservation, now time.Time, gen uint64) hwVerdict {
	s, ok := t.parts[k]
	if !ok || s.topicID != o.topicID {
		var regressions uint64
		if ok {
			// Same series name, so the counter must not go backwards.
			regressions = s.regressions
		}
		s = &hwState{topicID: o.topicID, hw: o.hw, leaderEpoch: o.leaderEpoch, lastAdvance: now, lastHealthy: now, regressions: regressions}
		t.parts[k] = s
		s.seen = gen
		return hwVerdict{lastAdvance: now, regressions: regressions}
	}
	v := hwVerdict{prevHW: s.hw, prevEpoch: s.leaderEpoch}
	switch {
	case o.hw > s.hw:
		s.lastAdvance, s.lastHealthy = now, now
	case o.hw < s.hw:
		// Committed data went away (unclean election, a bug): count it,
		// and treat the move as activity so the stall clock restarts.
		s.regressions++
		s.lastAdvance, s.lastHealthy = now, now
		v.regressed = true
	case !o.leoAsked, o.leoKnown && o.leo <= o.hw:
		s.lastHealthy = now // idle (nothing waits to be replicated), or not watched
	}
	s.hw, s.leaderEpoch, s.seen = o.hw, o.leaderEpoch, gen
	v.lastAdvance, v.regressions = s.lastAdvance, s.regressions
	v.stalled = o.leoKnown && o.leo > o.hw && now.Sub(s.lastHealthy) >= t.stallAfter
	return v
}

// forget drops partitions that no refresh has mentioned since generation
// keepFrom, so deleted topics do not leak memory.
func (t *hwTracker) forget(keepFrom uint64) {
	for k, s := range t.parts {
		if s.seen < keepFrom {
			delete(t.parts, k)
		}
	}
}

// touch marks a partition as still present without a new HW reading.
func (t *hwTracker) touch(k logparse.PartitionKey, gen uint64) {
	if s, ok := t.parts[k]; ok {
		s.seen = gen
	}
}

// lastAdvance returns when the HW of a partition not read in this refresh
// last moved; ok is false when there is no history for this topic id.
func (t *hwTracker) lastAdvance(k logparse.PartitionKey, topicID [16]byte) (time.Time, uint64, bool) {
	s, ok := t.parts[k]
	if !ok || s.topicID != topicID {
		return time.Time{}, 0, false
	}
	return s.lastAdvance, s.regressions, true
}
