package admin

import (
	"testing"
	"time"
)

func TestHWHistoryLagSeconds(t *testing.T) {
	h := newHWHistory()
	k := key("orders", 0)
	var id [16]byte
	at := func(s int) time.Time { return testEpoch.Add(time.Duration(s) * time.Second) }
	if _, ok := h.lagSeconds(k, 0, at(0)); ok {
		t.Fatal("want no lag without a reading")
	}
	// HW 100 read at 0 and 10, 200 at 20, 200 at 30, 400 at 40.
	for _, r := range []struct {
		s  int
		hw int64
	}{{0, 100}, {10, 100}, {20, 200}, {30, 200}, {40, 400}} {
		h.observe(k, id, r.hw, at(r.s), 1)
	}
	for _, c := range []struct {
		committed int64
		want      float64
	}{
		{400, 0},  // caught up
		{500, 0},  // ahead (a reset topic): never negative
		{300, 25}, // half-way between 200 (last seen at 30) and 400 (first at 40): 35
		{200, 30}, // the HW was still 200 at 30
		{150, 45}, // half-way between 10 and 20: 15
		{100, 50}, // the HW was still 100 at 10
		{50, 60},  // older than the history: the age of its oldest reading, a lower bound
	} {
		got, ok := h.lagSeconds(k, c.committed, at(60))
		if !ok || got != c.want {
			t.Errorf("committed %d: want %gs, got %gs (%v)", c.committed, c.want, got, ok)
		}
	}

	// A regression starts the history afresh.
	h.observe(k, id, 10, at(70), 2)
	if got, _ := h.lagSeconds(k, 5, at(80)); got != 10 {
		t.Errorf("after a regression: want 10s (the new oldest reading), got %g", got)
	}

	// The history of a busy partition keeps the last hwSamples readings.
	for i := range 3 * hwSamples {
		h.observe(k, id, int64(1000+i), at(100+i), 3)
	}
	r := h.parts[k]
	if len(r.s) != hwSamples || r.n != hwSamples {
		t.Fatalf("want %d samples kept, got %d of %d", hwSamples, r.n, len(r.s))
	}
	oldest := int64(1000 + 3*hwSamples - hwSamples)
	if got, _ := h.lagSeconds(k, oldest, at(100+3*hwSamples)); got != float64(hwSamples) {
		t.Errorf("want the oldest kept reading %d %ds ago, got %g", oldest, hwSamples, got)
	}

	// A partition no refresh mentions is forgotten.
	h.forget(4)
	if len(h.parts) != 0 {
		t.Error("want the partition forgotten")
	}
}
