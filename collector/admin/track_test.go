package admin

import (
	"testing"
	"time"
)

func TestHWTrackerAdvanceStallRegression(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	k := partitionKey{"orders", 0}
	idA := [16]byte{1}
	tr := newHWTracker(2 * time.Minute)

	type step struct {
		at          time.Duration
		hw          int64
		leo         int64
		underMinISR bool
		// want
		regressed   bool
		regressions uint64
		lastAdvance time.Duration
		stalled     bool
	}
	steps := []step{
		{at: 0, hw: 10, leo: 10, lastAdvance: 0},
		{at: time.Minute, hw: 12, leo: 12, lastAdvance: time.Minute},
		// Under min ISR, records waiting, HW still: not yet for 2m.
		{at: 2 * time.Minute, hw: 12, leo: 20, underMinISR: true, lastAdvance: time.Minute},
		{at: 3*time.Minute - time.Second, hw: 12, leo: 25, underMinISR: true, lastAdvance: time.Minute},
		{at: 3 * time.Minute, hw: 12, leo: 25, underMinISR: true, lastAdvance: time.Minute, stalled: true},
		// Idle partition under min ISR: LEO == HW is never stalled.
		{at: 10 * time.Minute, hw: 12, leo: 12, underMinISR: true, lastAdvance: time.Minute},
		// Same lag but ISR healthy again: not stalled.
		{at: 11 * time.Minute, hw: 12, leo: 30, lastAdvance: time.Minute},
		// HW goes backwards: one regression, the clock restarts.
		{at: 12 * time.Minute, hw: 5, leo: 30, underMinISR: true, regressed: true, regressions: 1, lastAdvance: 12 * time.Minute},
		{at: 13 * time.Minute, hw: 5, leo: 30, underMinISR: true, regressions: 1, lastAdvance: 12 * time.Minute},
		{at: 14 * time.Minute, hw: 5, leo: 30, underMinISR: true, regressions: 1, lastAdvance: 12 * time.Minute, stalled: true},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		v := tr.observe(k, hwObservation{topicID: idA, hw: s.hw, leaderEpoch: int32(i)}, now, uint64(i+1))
		if v.regressed != s.regressed {
			t.Errorf("step %d: want regressed %v, got %v", i, s.regressed, v.regressed)
		}
		if v.regressions != s.regressions {
			t.Errorf("step %d: want regressions %d, got %d", i, s.regressions, v.regressions)
		}
		if want := t0.Add(s.lastAdvance); !v.lastAdvance.Equal(want) {
			t.Errorf("step %d: want last advance %v, got %v", i, want, v.lastAdvance)
		}
		if got := tr.stalled(s.underMinISR, s.hw, s.leo, v.lastAdvance, now); got != s.stalled {
			t.Errorf("step %d: want stalled %v, got %v", i, s.stalled, got)
		}
	}
}

func TestHWTrackerRegressionCarriesEpochs(t *testing.T) {
	tr := newHWTracker(time.Minute)
	k := partitionKey{"t", 3}
	now := time.Unix(1000, 0)
	tr.observe(k, hwObservation{topicID: [16]byte{9}, hw: 100, leaderEpoch: 4}, now, 1)
	v := tr.observe(k, hwObservation{topicID: [16]byte{9}, hw: 90, leaderEpoch: 5}, now.Add(time.Second), 2)
	if !v.regressed || v.prevHW != 100 || v.prevEpoch != 4 {
		t.Errorf("want regression from 100 at epoch 4, got %+v", v)
	}
}

func TestHWTrackerRecreatedTopicIsNotARegression(t *testing.T) {
	tr := newHWTracker(time.Minute)
	k := partitionKey{"t", 0}
	now := time.Unix(1000, 0)
	tr.observe(k, hwObservation{topicID: [16]byte{1}, hw: 500}, now, 1)
	tr.observe(k, hwObservation{topicID: [16]byte{1}, hw: 400}, now, 2) // a real regression
	v := tr.observe(k, hwObservation{topicID: [16]byte{2}, hw: 0}, now, 3)
	if v.regressed {
		t.Error("want no regression for a new topic id, got one")
	}
	if v.regressions != 1 {
		t.Errorf("want the counter kept at 1 across re-creation, got %d", v.regressions)
	}
	if _, ok := tr.last(k, [16]byte{1}); ok {
		t.Error("want no state for the old topic id")
	}
}

func TestHWTrackerForget(t *testing.T) {
	tr := newHWTracker(time.Minute)
	now := time.Unix(1000, 0)
	gone, kept, touched := partitionKey{"gone", 0}, partitionKey{"kept", 0}, partitionKey{"touched", 0}
	tr.observe(gone, hwObservation{hw: 1}, now, 1)
	tr.observe(kept, hwObservation{hw: 1}, now, 1)
	tr.observe(touched, hwObservation{hw: 7}, now, 1)
	tr.observe(kept, hwObservation{hw: 2}, now, 2)
	tr.touch(touched, 2)
	tr.forget(2)
	if _, ok := tr.last(gone, [16]byte{}); ok {
		t.Error("want partition not seen in generation 2 forgotten")
	}
	if s, ok := tr.last(touched, [16]byte{}); !ok || s.hw != 7 {
		t.Errorf("want touched partition kept with hw 7, got %+v %v", s, ok)
	}
	if _, ok := tr.last(kept, [16]byte{}); !ok {
		t.Error("want observed partition kept")
	}
}
