package poller

import (
	"math"
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

	// A busy partition's history stays bounded and keeps its oldest reading.
	for i := range 3 * hwSamples {
		h.observe(k, id, int64(1000+i), at(100+i), 3)
	}
	r := h.parts[k]
	if len(r.s) != hwSamples || cap(r.s) != hwSamples {
		t.Fatalf("want %d samples kept in as much room, got %d of %d", hwSamples, len(r.s), cap(r.s))
	}
	if got, _ := h.lagSeconds(k, 1000, at(100+3*hwSamples)); got != 3*hwSamples {
		t.Errorf("want the first reading, 1000, %ds ago, got %g", 3*hwSamples, got)
	}

	// A partition no refresh mentions is forgotten.
	h.forget(4)
	if len(h.parts) != 0 {
		t.Error("want the partition forgotten")
	}
}

// TestHWHistoryThinsWithAge follows a partition whose HW moves at every
// refresh (15s, the default) for a week and checks, every simulated hour,
// what the README says of lag in seconds: the history stays bounded and
// keeps its first reading; the last hwRecent refreshes are all kept; steady
// traffic is dated exactly however old; and a burst between two kept
// readings, misdated by at most their span, is misdated by no more than the
// newer one's age in the first day, 1.25 times it in the week.
func TestHWHistoryThinsWithAge(t *testing.T) {
	const refresh = 15 * time.Second
	h := newHWHistory()
	k := key("orders", 0)
	var id [16]byte
	worst := make([]float64, 8) // the largest span / age, by day
	defer func() { t.Logf("largest span between two readings / the newer one's age, by day: %.2f", worst) }()
	for i := 0; i <= 7*24*240; i++ {
		now := testEpoch.Add(time.Duration(i) * refresh)
		h.observe(k, id, int64(i)*100, now, 1) // 100 records per refresh
		if i%240 != 0 || i == 0 {
			continue
		}
		r := h.parts[k]
		hours := i / 240
		if len(r.s) > hwSamples || cap(r.s) > hwSamples || r.s[0].offset != 0 {
			t.Fatalf("after %dh: %d readings in room for %d, the oldest at %d", hours, len(r.s), cap(r.s), r.s[0].offset)
		}
		for back := 1; back < hwRecent; back++ {
			if got := r.s[len(r.s)-1-back].offset; got != int64(i-back)*100 {
				t.Fatalf("after %dh: the reading %d refreshes back is %d", hours, back, got)
			}
		}
		for _, ago := range []time.Duration{20 * time.Second, 7 * time.Minute, 50 * time.Minute, 5 * time.Hour, time.Duration(i) * refresh} {
			elapsed := time.Duration(i)*refresh - ago
			if elapsed < 0 {
				continue
			}
			committed := int64(elapsed) * 100 / int64(refresh)
			want := (time.Duration(i)*refresh - time.Duration(committed)*refresh/100).Seconds()
			if got, _ := h.lagSeconds(k, committed, now); math.Abs(got-want) > 1e-6 {
				t.Fatalf("after %dh, steady traffic: a group %v behind shows %gs", hours, ago, got)
			}
		}
		bound := 1.0
		if hours > 24 {
			bound = 1.25
		}
		for j := 1; j < len(r.s); j++ {
			span := time.Duration(r.s[j].first - r.s[j-1].last)
			age := now.Sub(time.Unix(0, r.s[j].first))
			if span <= refresh {
				continue
			}
			ratio := span.Seconds() / age.Seconds()
			worst[hours/24] = max(worst[hours/24], ratio)
			if ratio > bound {
				t.Fatalf("after %dh: %v between readings %v and %v old, more than %g× the newer one's age", hours, span, age+span, age, bound)
			}
		}
	}
}
