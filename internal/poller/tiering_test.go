package poller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// tieringTable renders the tiered partitions as "topic/partition=tiered
// local lag", or "=reason" where unknown, with " stalled(cause)".
func tieringTable(s *Snapshot) string {
	var b strings.Builder
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			p := &s.Topics[i].Partitions[j]
			t := p.Tiering
			if t == nil {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "%s/%d=", p.Topic, p.Partition)
			if !t.Known() {
				b.WriteString(t.Unknown.String())
				continue
			}
			fmt.Fprintf(&b, "%d %d", t.LatestTiered, t.LocalStart)
			if t.LagKnown {
				fmt.Fprintf(&b, " lag %d", t.Lag)
			}
			if t.Stalled {
				fmt.Fprintf(&b, " stalled(%s)", t.Cause)
			}
		}
	}
	return b.String()
}

func ptr(v int64) *int64 { return &v }

// TestTieringRequests: off, the refresh sends exactly what it sent before
// and the snapshot has no tiering; on, DescribeConfigs stays one request,
// a topic without remote.storage.enable costs nothing, and each leader of a
// tiered partition gets two ListOffsets (-5 and -4).
func TestTieringRequests(t *testing.T) {
	counts := func(on bool) (map[kmsg.Key]int, *Snapshot) {
		f := fakekafka.New(t)
		f.CreateTopic("plain", nil, 0, 1)
		f.CreateTopic("tiered", map[string]string{"remote.storage.enable": "true"}, 0, 1, 2)
		for p := range int32(2) {
			f.SetOffsets(key("plain", p), fakekafka.Offsets{HW: 10, LEO: 10})
		}
		f.SetOffsets(key("tiered", 0), fakekafka.Offsets{HW: 100, LEO: 100, Tiered: ptr(59), LocalStart: 40})
		f.SetOffsets(key("tiered", 1), fakekafka.Offsets{HW: 7, LEO: 7})
		f.SetOffsets(key("tiered", 2), fakekafka.Offsets{HW: 50, LEO: 50, Tiered: ptr(49), LocalStart: 0})
		a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Tiering.Enabled = on })
		a.refresh(context.Background())
		f.RequestCounts()
		a.refresh(context.Background())
		return f.RequestCounts(), a.Snapshot()
	}
	off, offSnap := counts(false)
	on, onSnap := counts(true)
	if got := tieringTable(offSnap); got != "" || offSnap.TieringRead || offSnap.Sent[RequestListOffsetsTiered] {
		t.Errorf("off: want no tiering, got %q (read %v)", got, offSnap.TieringRead)
	}
	// On: 3 leaders of tiered partitions, 2 ListOffsets each; ApiVersions
	// only on the tiering client's first refresh.
	for k, n := range off {
		want := n
		if k == kmsg.ListOffsets {
			want += 6
		}
		if on[k] != want && k != kmsg.Metadata {
			t.Errorf("%s: want %d requests with tiering on, got %d (off: %d)", kmsg.NameForKey(int16(k)), want, on[k], n)
		}
	}
	expect(t, "on", tieringTable(onSnap), "tiered/0=59 40 lag 40 | tiered/1=-1 0 lag 7 | tiered/2=49 0 lag 0")
	if !onSnap.TieringRead || onSnap.TieringUnknown[TieringKnown] != 3 || !onSnap.Sent[RequestListOffsetsTiered] {
		t.Errorf("on: want 3 known, got %v", onSnap.TieringUnknown)
	}
}

// TestTieringUnsupported: a broker below ListOffsets v9 is a state, not an
// error: no ListOffsets -5 is sent and no request error counted.
func TestTieringUnsupported(t *testing.T) {
	f := fakekafka.New(t, kfake.MaxVersions(kversion.V3_8_0()))
	f.CreateTopic("tiered", map[string]string{"remote.storage.enable": "true"}, 0)
	f.SetOffsets(key("tiered", 0), fakekafka.Offsets{HW: 100, LEO: 100, Tiered: ptr(59)})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Tiering.Enabled = true })
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "3.8", tieringTable(s), "tiered/0=unsupported")
	if s.RequestErrors[RequestListOffsetsTiered] != 0 || s.TieringUnknown[TieringUnsupported] != 1 {
		t.Errorf("want 1 unsupported and no error, got %d errors, %v", s.RequestErrors[RequestListOffsetsTiered], s.TieringUnknown)
	}
}

// TestTieringPartitionError: a partition answered with an error is unusable,
// counted per partition; the others of its leader are read.
func TestTieringPartitionError(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("tiered", map[string]string{"remote.storage.enable": "true"}, 0, 0)
	f.SetOffsets(key("tiered", 0), fakekafka.Offsets{HW: 100, LEO: 100, TieredError: 29}) // TOPIC_AUTHORIZATION_FAILED
	f.SetOffsets(key("tiered", 1), fakekafka.Offsets{HW: 10, LEO: 10, Tiered: ptr(4), LocalStart: 5})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.Tiering.Enabled = true })
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "error", tieringTable(s), "tiered/0=unusable | tiered/1=4 5 lag 5")
	if n := s.UnusableAnswers[RequestListOffsetsTiered][UnusableAuthorization]; n != 1 {
		t.Errorf("want 1 authorization_failed answer, got %d", n)
	}
}

// TestTieringTracker: stalled once the latest tiered offset stands for the
// threshold with offsets waiting, with the cause; an idle partition (HW
// still, not stalled) is not; a moving tiered offset clears it; a
// re-created topic starts afresh.
func TestTieringTracker(t *testing.T) {
	k := logparse.PartitionKey{Topic: "orders", Partition: 0}
	tr := &tieringTracker{stallAfter: 10 * time.Minute, parts: make(map[logparse.PartitionKey]*tieringState)}
	at := func(m int) time.Time { return testEpoch.Add(time.Duration(m) * time.Minute) }
	var gen uint64
	read := func(m int, id byte, r tieringReading) string {
		gen++
		v := tr.observe(k, [16]byte{id}, r, at(m), gen)
		return fmt.Sprintf("%s changed %v", v.cause, v.changed)
	}
	for _, c := range []struct {
		m    int
		id   byte
		r    tieringReading
		want string
	}{
		{0, 1, tieringReading{tiered: 99, lag: 50, hw: 150}, " changed false"},
		{15, 1, tieringReading{tiered: 99, lag: 50, hw: 150}, " changed false"}, // idle: the active segment
		{16, 1, tieringReading{tiered: 99, lag: 60, hw: 160}, "remote changed true"},
		{17, 1, tieringReading{tiered: 99, lag: 60, hw: 160, hwStalled: true}, "hw_stalled changed true"},
		{18, 1, tieringReading{tiered: 99, lag: 60, hw: 160, lsoStuck: true}, "lso_stuck changed true"},
		{19, 1, tieringReading{tiered: 149, lag: 10, hw: 160, lsoStuck: true}, " changed true"}, // tiered moved
		{28, 1, tieringReading{tiered: 149, lag: 10, hw: 160, hwStalled: true}, " changed false"},
		{29, 1, tieringReading{tiered: 149, lag: 10, hw: 160, hwStalled: true}, "hw_stalled changed true"},
		{30, 1, tieringReading{tiered: 149, lag: 0, hw: 150, hwStalled: true}, " changed true"},   // nothing waits
		{31, 2, tieringReading{tiered: 149, lag: 10, hw: 160, hwStalled: true}, " changed false"}, // re-created
	} {
		if got := read(c.m, c.id, c.r); got != c.want {
			t.Errorf("at %dm %+v: want %q, got %q", c.m, c.r, c.want, got)
		}
	}
	tr.forget(gen + 1)
	if len(tr.parts) != 0 {
		t.Errorf("forget: %d partitions left", len(tr.parts))
	}
}
