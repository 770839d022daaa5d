package admin

import "time"

// hwTracker remembers, per partition, the last high watermark the admin API
// reported and when it last moved. It is pure (time is passed in) so stall
// and regression rules are tested without Kafka or sleeps.
type hwTracker struct {
	stallAfter time.Duration
	parts      map[partitionKey]*hwState
}

type partitionKey struct {
	topic     string
	partition int32
}

type hwState struct {
	topicID     [16]byte
	hw          int64
	leaderEpoch int32
	lastAdvance time.Time
	regressions uint64
	seen        uint64 // refresh generation of the last observation, for pruning
}

// hwObservation is what one refresh learnt about a partition.
type hwObservation struct {
	topicID     [16]byte
	hw          int64
	leaderEpoch int32
}

// hwVerdict is what the tracker concludes after an observation.
type hwVerdict struct {
	lastAdvance time.Time
	regressions uint64
	// regressed is set when this observation moved the HW backwards:
	// from prevHW at prevEpoch to the observed HW and epoch.
	regressed bool
	prevHW    int64
	prevEpoch int32
}

func newHWTracker(stallAfter time.Duration) *hwTracker {
	return &hwTracker{stallAfter: stallAfter, parts: make(map[partitionKey]*hwState)}
}

// observe records an HW reading taken at now during refresh generation gen.
// A reading for a new topic id (the topic was deleted and re-created) starts
// afresh: the new log's small HW is not a regression.
func (t *hwTracker) observe(k partitionKey, o hwObservation, now time.Time, gen uint64) hwVerdict {
	s, ok := t.parts[k]
	if !ok || s.topicID != o.topicID {
		var regressions uint64
		if ok {
			// Same series name, so the counter must not go backwards.
			regressions = s.regressions
		}
		s = &hwState{topicID: o.topicID, hw: o.hw, leaderEpoch: o.leaderEpoch, lastAdvance: now, regressions: regressions}
		t.parts[k] = s
		s.seen = gen
		return hwVerdict{lastAdvance: now, regressions: regressions}
	}
	v := hwVerdict{prevHW: s.hw, prevEpoch: s.leaderEpoch}
	switch {
	case o.hw > s.hw:
		s.lastAdvance = now
	case o.hw < s.hw:
		// Committed data went away (unclean election, a bug): count it,
		// and treat the move as activity so the stall clock restarts.
		s.regressions++
		s.lastAdvance = now
		v.regressed = true
	}
	s.hw, s.leaderEpoch, s.seen = o.hw, o.leaderEpoch, gen
	v.lastAdvance, v.regressions = s.lastAdvance, s.regressions
	return v
}

// last returns the state of a partition not observed in this refresh (its
// leader did not answer), so its last good values can still be shown.
func (t *hwTracker) last(k partitionKey, topicID [16]byte) (hwState, bool) {
	s, ok := t.parts[k]
	if !ok || s.topicID != topicID {
		return hwState{}, false
	}
	return *s, true
}

// stalled reports whether a partition counts as stalled: under min ISR, with
// records beyond the HW waiting to be replicated (LEO > HW), and the HW still
// for at least the threshold. An idle partition (LEO == HW) never stalls.
func (t *hwTracker) stalled(underMinISR bool, hw, leo int64, lastAdvance, now time.Time) bool {
	return underMinISR && leo > hw && now.Sub(lastAdvance) >= t.stallAfter
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
func (t *hwTracker) touch(k partitionKey, gen uint64) {
	if s, ok := t.parts[k]; ok {
		s.seen = gen
	}
}
