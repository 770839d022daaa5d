package poller

import (
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// stallStep is one reading of a partition fed to the tracker and the
// verdict expected after it. leo < 0 means the LEO was not answered.
type stallStep struct {
	at      time.Duration
	hw, leo int64
	stalled bool
}

// runStallSteps feeds steps to a tracker with a 2m threshold and checks the
// verdict after each.
func runStallSteps(t *testing.T, steps []stallStep) {
	t.Helper()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tr := newHWTracker(2 * time.Minute)
	k := logparse.PartitionKey{Topic: "orders", Partition: 0}
	for i, s := range steps {
		o := hwObservation{topicID: [16]byte{1}, hw: s.hw, leo: s.leo, leoKnown: s.leo >= 0, leoAsked: true}
		if v := tr.observe(k, o, t0.Add(s.at), uint64(i+1)); v.stalled != s.stalled {
			t.Errorf("step %d (+%v hw %d leo %d): want stalled %v, got %v", i, s.at, s.hw, s.leo, s.stalled, v.stalled)
		}
	}
}

// TestStallIdleThenTraffic: a partition idle for hours (LEO == HW) that gets
// traffic shows LEO > HW in one reading with a last advance hours old; that
// is not a stall, because the previous reading looked healthy.
func TestStallIdleThenTraffic(t *testing.T) {
	runStallSteps(t, []stallStep{
		{at: 0, hw: 10, leo: 10},
		{at: time.Hour, hw: 10, leo: 10},
		{at: 3 * time.Hour, hw: 10, leo: 10},
		{at: 3*time.Hour + 15*time.Second, hw: 10, leo: 14},
		{at: 3*time.Hour + 30*time.Second, hw: 14, leo: 20},
	})
}

// TestStallFrozenHW: the HW stops while the LEO grows; the verdict comes at
// the first reading at least the threshold after the last healthy one (the
// reading where the HW last advanced), whatever the ISR says.
func TestStallFrozenHW(t *testing.T) {
	runStallSteps(t, []stallStep{
		{at: 0, hw: 10, leo: 12},
		{at: 15 * time.Second, hw: 20, leo: 25}, // last healthy: the HW advanced
		{at: 30 * time.Second, hw: 20, leo: 40},
		{at: 2*time.Minute + 14*time.Second, hw: 20, leo: 90},
		{at: 2*time.Minute + 15*time.Second, hw: 20, leo: 95, stalled: true},
		{at: 2*time.Minute + 30*time.Second, hw: 20, leo: 99, stalled: true},
		// It moves again: the clock restarts there.
		{at: 2*time.Minute + 45*time.Second, hw: 21, leo: 99},
		{at: 4*time.Minute + 44*time.Second, hw: 21, leo: 99},
		{at: 4*time.Minute + 45*time.Second, hw: 21, leo: 99, stalled: true},
		// Caught up (LEO == HW): never stalled, and healthy again.
		{at: 5 * time.Minute, hw: 99, leo: 99},
		{at: 10 * time.Minute, hw: 99, leo: 99},
	})
}

// TestStallStartsAtLastIdleReading: the last healthy reading can be one
// where nothing waited (LEO <= HW) rather than an advance.
func TestStallStartsAtLastIdleReading(t *testing.T) {
	runStallSteps(t, []stallStep{
		{at: 0, hw: 10, leo: 10},
		{at: time.Hour, hw: 10, leo: 10},
		{at: time.Hour + time.Minute, hw: 10, leo: 11},
		{at: time.Hour + 2*time.Minute - time.Second, hw: 10, leo: 12},
		{at: time.Hour + 2*time.Minute, hw: 10, leo: 13, stalled: true},
	})
}

// TestStallHWCreeping: an HW that advances by one every reading is slow but
// not stalled.
func TestStallHWCreeping(t *testing.T) {
	var steps []stallStep
	for i := range int64(40) {
		steps = append(steps, stallStep{at: time.Duration(i) * 15 * time.Second, hw: 100 + i, leo: 1000 + 10*i})
	}
	runStallSteps(t, steps)
}

// TestStallLEOUnknown: a reading without the LEO neither starts nor resets
// the stall clock, and gives no stall verdict.
func TestStallLEOUnknown(t *testing.T) {
	runStallSteps(t, []stallStep{
		{at: 0, hw: 10, leo: 10}, // last healthy
		{at: time.Minute, hw: 10, leo: -1},
		{at: 2 * time.Minute, hw: 10, leo: -1}, // no verdict without the LEO
		{at: 2*time.Minute + 15*time.Second, hw: 10, leo: 30, stalled: true},
		{at: 3 * time.Minute, hw: 10, leo: -1},
		{at: 3*time.Minute + 15*time.Second, hw: 10, leo: 31, stalled: true},
	})
}

// TestStallNotExportedUntilNow: a partition this sidecar did not export
// (its LEO was not asked) that becomes exported, busy, starts its stall
// clock at the last unexported reading, not at its last HW advance.
func TestStallNotExportedUntilNow(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tr := newHWTracker(2 * time.Minute)
	k := logparse.PartitionKey{Topic: "orders", Partition: 0}
	tr.observe(k, hwObservation{hw: 10}, t0, 1)
	tr.observe(k, hwObservation{hw: 10}, t0.Add(time.Hour), 2)
	if v := tr.observe(k, hwObservation{hw: 10, leo: 15, leoKnown: true, leoAsked: true}, t0.Add(time.Hour+15*time.Second), 3); v.stalled {
		t.Error("want no stall on the first exported reading")
	}
	if v := tr.observe(k, hwObservation{hw: 10, leo: 25, leoKnown: true, leoAsked: true}, t0.Add(time.Hour+2*time.Minute), 4); !v.stalled {
		t.Error("want a stall 2m after the last unexported reading")
	}
}

// TestHWTrackerRegression: a lower HW counts once and restarts the stall
// clock, like an advance.
func TestHWTrackerRegression(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tr := newHWTracker(2 * time.Minute)
	k := logparse.PartitionKey{Topic: "orders", Partition: 0}
	steps := []struct {
		at          time.Duration
		hw, leo     int64
		regressed   bool
		regressions uint64
		lastAdvance time.Duration
		stalled     bool
	}{
		{at: 0, hw: 10, leo: 10},
		{at: time.Minute, hw: 12, leo: 30, lastAdvance: time.Minute},
		{at: 12 * time.Minute, hw: 5, leo: 30, regressed: true, regressions: 1, lastAdvance: 12 * time.Minute},
		{at: 13 * time.Minute, hw: 5, leo: 30, regressions: 1, lastAdvance: 12 * time.Minute},
		{at: 14 * time.Minute, hw: 5, leo: 30, regressions: 1, lastAdvance: 12 * time.Minute, stalled: true},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		v := tr.observe(k, hwObservation{topicID: [16]byte{1}, hw: s.hw, leaderEpoch: int32(i), leo: s.leo, leoKnown: true, leoAsked: true}, now, uint64(i+1))
		if v.regressed != s.regressed || v.regressions != s.regressions || v.stalled != s.stalled {
			t.Errorf("step %d: want regressed %v regressions %d stalled %v, got %+v", i, s.regressed, s.regressions, s.stalled, v)
		}
		if want := t0.Add(s.lastAdvance); !v.lastAdvance.Equal(want) {
			t.Errorf("step %d: want last advance %v, got %v", i, want, v.lastAdvance)
		}
	}
}

func TestHWTrackerRegressionCarriesEpochs(t *testing.T) {
	tr := newHWTracker(time.Minute)
	k := logparse.PartitionKey{Topic: "t", Partition: 3}
	now := time.Unix(1000, 0)
	tr.observe(k, hwObservation{topicID: [16]byte{9}, hw: 100, leaderEpoch: 4}, now, 1)
	v := tr.observe(k, hwObservation{topicID: [16]byte{9}, hw: 90, leaderEpoch: 5}, now.Add(time.Second), 2)
	if !v.regressed || v.prevHW != 100 || v.prevEpoch != 4 {
		t.Errorf("want regression from 100 at epoch 4, got %+v", v)
	}
}

func TestHWTrackerRecreatedTopicIsNotARegression(t *testing.T) {
	tr := newHWTracker(time.Minute)
	k := logparse.PartitionKey{Topic: "t", Partition: 0}
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
	if _, _, ok := tr.lastAdvance(k, [16]byte{1}); ok {
		t.Error("want no state for the old topic id")
	}
}

// TestHWTrackerRecreatedTopicStallsAfresh: a topic re-created under its name
// while the old one was stalled starts its stall clock at its first reading.
func TestHWTrackerRecreatedTopicStallsAfresh(t *testing.T) {
	tr := newHWTracker(time.Minute)
	k := logparse.PartitionKey{Topic: "t", Partition: 0}
	t0 := time.Unix(1000, 0)
	tr.observe(k, hwObservation{topicID: [16]byte{1}, hw: 5, leo: 30, leoKnown: true, leoAsked: true}, t0, 1)
	if v := tr.observe(k, hwObservation{topicID: [16]byte{1}, hw: 5, leo: 30, leoKnown: true, leoAsked: true}, t0.Add(2*time.Minute), 2); !v.stalled {
		t.Fatal("want the old topic stalled after 2 minutes")
	}
	v := tr.observe(k, hwObservation{topicID: [16]byte{2}, hw: 0, leo: 10, leoKnown: true, leoAsked: true}, t0.Add(3*time.Minute), 3)
	if v.stalled || !v.lastAdvance.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("want the re-created topic not stalled, its clock started now, got %+v", v)
	}
}

func TestHWTrackerForget(t *testing.T) {
	tr := newHWTracker(time.Minute)
	now := time.Unix(1000, 0)
	gone, kept, touched := logparse.PartitionKey{Topic: "gone", Partition: 0}, logparse.PartitionKey{Topic: "kept", Partition: 0}, logparse.PartitionKey{Topic: "touched", Partition: 0}
	tr.observe(gone, hwObservation{hw: 1}, now, 1)
	tr.observe(kept, hwObservation{hw: 1}, now, 1)
	tr.observe(touched, hwObservation{hw: 7}, now, 1)
	tr.observe(kept, hwObservation{hw: 2}, now, 2)
	tr.touch(touched, 2)
	tr.forget(2)
	if _, _, ok := tr.lastAdvance(gone, [16]byte{}); ok {
		t.Error("want partition not seen in generation 2 forgotten")
	}
	if s, ok := tr.parts[touched]; !ok || s.hw != 7 {
		t.Errorf("want touched partition kept with hw 7, got %+v %v", s, ok)
	}
	if _, _, ok := tr.lastAdvance(kept, [16]byte{}); !ok {
		t.Error("want observed partition kept")
	}
}
