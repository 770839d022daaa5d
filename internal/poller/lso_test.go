package poller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// lsoTable renders the snapshot's LSOs as "topic/partition=lso", followed
// by " held Ns" (and " stalled") where the HW was answered too.
func lsoTable(s *Snapshot) string {
	var b strings.Builder
	for _, o := range s.StableOffsets {
		if b.Len() > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s/%d=%d", o.Topic, o.Partition, o.LSO)
		if o.HWKnown {
			fmt.Fprintf(&b, " held %gs", o.LagSeconds)
		}
		if o.Stalled {
			b.WriteString(" stalled")
		}
	}
	return b.String()
}

// TestLastStableOffset: off, no read_committed request and no LSO; on, one
// per leader of an exported partition, and each partition's LSO.
func TestLastStableOffset(t *testing.T) {
	open := int64(40)
	for _, on := range []bool{false, true} {
		f := fakekafka.New(t)
		f.CreateTopic("orders", nil, 0, 1, 2)
		f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 100, LEO: 100, LSO: &open})
		f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 50, LEO: 50})
		f.SetOffsets(key("orders", 2), fakekafka.Offsets{HW: 7, LEO: 7})
		a, _ := newTestPoller(t, f.C.ListenAddrs(), 1, ScopeLeader, Options{}, func(c *Config) { c.Groups.LastStableOffset = on })
		a.refresh(context.Background())
		f.RequestCounts()
		a.refresh(context.Background())
		// Leader scope of broker 1: 3 ListOffsets LATEST for the HWs, 3 LEO
		// reads of orders/1's replicas, and the read_committed one.
		committed := f.RequestCounts()[kmsg.ListOffsets] - 6
		s := a.Snapshot()
		got := lsoTable(s)
		switch {
		case !on && (committed != 0 || s.StableOffsets != nil || s.Sent[RequestListOffsetsLSO]):
			t.Errorf("off: want no read_committed request and no LSO, got %d requests and %s", committed, got)
		case on && (committed != 1 || got != "orders/1=50 held 0s" || !s.Sent[RequestListOffsetsLSO]):
			t.Errorf("on, leader scope of broker 1: want 1 read_committed request and orders/1=50, got %d and %s", committed, got)
		}
		if on {
			a, _ = newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Groups.LastStableOffset = true })
			a.refresh(context.Background())
			// orders/0's LSO is below its HW from the first reading: held
			// since that reading, as far as the exporter knows.
			expect(t, "cluster scope", lsoTable(a.Snapshot()), "orders/0=40 held 0s | orders/1=50 held 0s | orders/2=7 held 0s")
		}
	}
}

// TestLSOTracker: an LSO below a moving HW is held since the HW passed it,
// stalled from the threshold on, and clears when it reaches the HW. A new
// LSO that the HW passed long ago (the next of two open transactions) is
// held since then with the HW history (consumer groups read), and at least
// since the last reading without it.
func TestLSOTracker(t *testing.T) {
	k := key("orders", 0)
	for _, withHistory := range []bool{true, false} {
		var id [16]byte
		var h *hwHistory
		if withHistory {
			h = newHWHistory()
		}
		tr := &lsoTracker{stallAfter: 5 * time.Minute, parts: make(map[logparse.PartitionKey]*lsoState)}
		at := func(s int) time.Time { return testEpoch.Add(time.Duration(s) * time.Second) }
		var gen uint64
		read := func(s int, lso, hw int64) string {
			gen++
			h.observe(k, id, hw, at(s), gen)
			v := tr.observe(k, id, lso, hw, at(s), gen, h)
			return fmt.Sprintf("held %gs stalled %v changed %v", v.lagSeconds, v.stalled, v.changed)
		}
		for _, r := range []struct {
			s                 int
			lso, hw           int64
			want, withoutHist string
		}{
			{0, 100, 100, "held 0s stalled false changed false", ""},   // no open transaction
			{15, 100, 120, "held 15s stalled false changed false", ""}, // one begins at 100: the HW was still 100 at 0
			{240, 100, 500, "held 240s stalled false changed false", ""},
			{300, 100, 520, "held 300s stalled true changed true", ""}, // the threshold
			{360, 100, 600, "held 360s stalled true changed false", ""},
			// Aborted; the next open one began at 310, which the HW passed
			// at 127.5 (half-way from 120 at 15 to 500 at 240); without the
			// history, before the last reading at 360.
			{375, 310, 620, "held 247.5s stalled false changed true", "held 15s stalled false changed true"},
			{435, 310, 700, "held 307.5s stalled true changed true", "held 75s stalled false changed false"},
			{450, 700, 700, "held 0s stalled false changed true", "held 0s stalled false changed false"}, // all committed or aborted
			{465, 701, 700, "held 0s stalled false changed false", ""},                                   // the LSO read a moment after the HW
			{480, 710, 720, "held 7.5s stalled false changed false", ""},                                 // the HW passed 710 half-way from 465 (700) to 480 (720)
		} {
			want := r.want
			if !withHistory && r.withoutHist != "" {
				want = r.withoutHist
			}
			if got := read(r.s, r.lso, r.hw); got != want {
				t.Errorf("history %v, at %ds, LSO %d HW %d: want %s, got %s", withHistory, r.s, r.lso, r.hw, want, got)
			}
		}

		// A re-created topic starts afresh; a partition no refresh mentions
		// is forgotten.
		id[0] = 1
		if got := read(495, 5, 9); got != "held 0s stalled false changed false" {
			t.Errorf("history %v, re-created topic: want held since this reading, got %s", withHistory, got)
		}
		tr.forget(gen + 1)
		if len(tr.parts) != 0 {
			t.Errorf("history %v: want the partition forgotten", withHistory)
		}
	}
}

// TestLastStableOffsetStalled: a transaction left open on orders/0 while
// the HW moves on. Its LSO stalls after the threshold; a refresh whose LSO
// read fails exports no LSO series for it and does not restart the clock;
// the transaction's end clears it.
func TestLastStableOffsetStalled(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1)
	open := int64(40)
	f.SetOffsets(key("orders", 1), fakekafka.Offsets{HW: 7, LEO: 7})
	var logs strings.Builder
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{Logger: slogTo(&logs)}, func(c *Config) {
		c.Groups.LastStableOffset = true
		c.Groups.LSOStallThreshold = time.Minute
	})
	if a.build.history != nil {
		t.Fatal("want no HW history without consumer groups: the LSO tracker keeps the last HW read")
	}
	refresh := func(hw int64, o fakekafka.Offsets) string {
		o.HW, o.LEO = hw, hw
		f.SetOffsets(key("orders", 0), o)
		clock.Advance(15 * time.Second)
		a.refresh(context.Background())
		return lsoTable(a.Snapshot())
	}
	// Idle at 40, then the transaction begins at 40 and records follow it.
	refresh(40, fakekafka.Offsets{})
	expect(t, "open", refresh(60, fakekafka.Offsets{LSO: &open}), "orders/0=40 held 15s | orders/1=7 held 0s")
	refresh(80, fakekafka.Offsets{LSO: &open})
	refresh(100, fakekafka.Offsets{LSO: &open})
	expect(t, "after the threshold", refresh(120, fakekafka.Offsets{LSO: &open}), "orders/0=40 held 60s stalled | orders/1=7 held 0s")
	lsoStalled := func(p *Partition) any { return p.LSOStalled }
	expect(t, "the partition unhealthy", table(a.Snapshot(), lsoStalled), "orders/0=true orders/1=false")
	// The leader answers the LSO with an error: no LSO series, and the
	// request does not count as failed (the leader answered).
	expect(t, "unanswered", refresh(140, fakekafka.Offsets{LSOError: kerr.NotLeaderForPartition.Code}), "orders/1=7 held 0s")
	expect(t, "answered again", refresh(160, fakekafka.Offsets{LSO: &open}), "orders/0=40 held 90s stalled | orders/1=7 held 0s")
	if n := a.Snapshot().RequestErrors[RequestListOffsetsLSO]; n != 0 {
		t.Errorf("want no list_offsets_lso request error, got %d", n)
	}
	expect(t, "aborted", refresh(160, fakekafka.Offsets{}), "orders/0=160 held 0s | orders/1=7 held 0s")
	expect(t, "the partition healthy again", table(a.Snapshot(), lsoStalled), "orders/0=false orders/1=false")
	// One WARN when it stalled, one line when it moved again.
	if n, m := strings.Count(logs.String(), "hanging transaction"), strings.Count(logs.String(), "moves again"); n != 1 || m != 1 {
		t.Errorf("want the stall logged once and its end once, got %d and %d:\n%s", n, m, logs.String())
	}
}
