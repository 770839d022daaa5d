package poller

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// leaderNow is the quorum leader's clock in the fake answers, in ms.
const leaderNow = 1_000_000

// healthyQuorum is three dedicated controllers, 3000 leading, and the three
// kfake brokers as observers, all caught up.
func healthyQuorum() *fakekafka.Quorum {
	q := &fakekafka.Quorum{LeaderID: 3000, LeaderEpoch: 7, HW: 1000}
	for _, id := range []int32{3000, 3001, 3002} {
		r := fakekafka.QuorumReplica{ID: id, LEO: 1000, LastFetch: leaderNow - 100, LastCaughtUp: leaderNow - 100}
		if id == 3000 {
			r.LastFetch, r.LastCaughtUp = -1, leaderNow
		}
		q.Voters = append(q.Voters, r)
	}
	for _, id := range []int32{2, 0, 1} {
		q.Observers = append(q.Observers, fakekafka.QuorumReplica{ID: id, LEO: 1000, LastFetch: leaderNow - 200, LastCaughtUp: leaderNow - 200})
	}
	return q
}

// quorumPoller is a poller of f in scope, logging to logs.
func quorumPoller(t *testing.T, f *fakekafka.Kafka, brokerID int32, scope string, logs *bytes.Buffer) *Poller {
	t.Helper()
	p, _ := newTestPoller(t, f.C.ListenAddrs(), brokerID, scope, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, nil)
	return p
}

// replicasOf renders a quorum's replicas as "role/node=leo,lag,lag_s,fetch_age"
// with "-" for an absent value.
func replicasOf(q *Quorum) string {
	var b strings.Builder
	for _, r := range q.Replicas {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s/%d=%s,%s,%s,%s", map[bool]string{false: "v", true: "o"}[r.Observer], r.Node,
			opt(r.LEOKnown, r.LogEndOffset), opt(r.LEOKnown, r.LagRecords), opt(r.LagKnown, r.LagSeconds), opt(r.FetchKnown, r.LastFetchAgeSeconds))
	}
	return b.String()
}

func opt(ok bool, v any) string {
	if !ok {
		return "-"
	}
	return fmt.Sprint(v)
}

// TestQuorumHealthy: a healthy quorum is read once per refresh and every
// field is the answer's, with the times on the leader's clock.
func TestQuorumHealthy(t *testing.T) {
	f := fakekafka.New(t)
	f.SetQuorum(healthyQuorum())
	var logs bytes.Buffer
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	f.RequestCounts()
	p.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeQuorum]; n != 1 {
		t.Fatalf("DescribeQuorum sent %d times in one refresh, want 1", n)
	}
	q := p.Snapshot().Quorum
	if q == nil || q.Unknown != QuorumKnown {
		t.Fatalf("quorum %+v, want known; logs:\n%s", q, logs.String())
	}
	if q.LeaderID != 3000 || q.LeaderEpoch != 7 || q.HighWatermark != 1000 || q.Voters != 3 || q.BrokersMissing != 0 || q.HWRegressions != 0 {
		t.Errorf("quorum %+v", q)
	}
	expect(t, "replicas", replicasOf(q),
		"v/3000=1000,0,0,- v/3001=1000,0,0.1,0.1 v/3002=1000,0,0.1,0.1 o/0=1000,0,0.2,0.2 o/1=1000,0,0.2,0.2 o/2=1000,0,0.2,0.2")
	if p.Snapshot().RequestErrors[RequestDescribeQuorum] != 0 {
		t.Error("request errors counted on a healthy quorum")
	}
}

// TestQuorumLaggingVoter: a voter behind in records and in time, and one
// that stopped fetching, each show in its own series.
func TestQuorumLaggingVoter(t *testing.T) {
	f := fakekafka.New(t)
	q := healthyQuorum()
	q.Voters[1] = fakekafka.QuorumReplica{ID: 3001, LEO: 900, LastFetch: leaderNow - 300, LastCaughtUp: leaderNow - 8000}
	q.Voters[2] = fakekafka.QuorumReplica{ID: 3002, LEO: 950, LastFetch: leaderNow - 12000, LastCaughtUp: leaderNow - 12000}
	f.SetQuorum(q)
	var logs bytes.Buffer
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	p.refresh(context.Background())
	got := p.Snapshot().Quorum
	if got == nil {
		t.Fatalf("no quorum; logs:\n%s", logs.String())
	}
	expect(t, "replicas", replicasOf(got),
		"v/3000=1000,0,0,- v/3001=900,100,8,0.3 v/3002=950,50,12,12 o/0=1000,0,0.2,0.2 o/1=1000,0,0.2,0.2 o/2=1000,0,0.2,0.2")
}

// TestQuorumV0HasNoTimes: DescribeQuorum v0 (before Kafka 3.3) has no
// timestamps, so no lag in seconds is made up from the defaults.
func TestQuorumV0HasNoTimes(t *testing.T) {
	f := fakekafka.New(t)
	f.SetQuorum(&fakekafka.Quorum{
		LeaderID: 3000, LeaderEpoch: 7, HW: 10, OnlyV0: true,
		Voters: []fakekafka.QuorumReplica{{ID: 3000, LEO: 10, LastFetch: -1, LastCaughtUp: -1}, {ID: 3001, LEO: 4, LastFetch: -1, LastCaughtUp: -1}},
	})
	var logs bytes.Buffer
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	p.refresh(context.Background())
	got := p.Snapshot().Quorum
	if got == nil || got.Unknown != QuorumKnown {
		t.Fatalf("quorum %+v; logs:\n%s", got, logs.String())
	}
	expect(t, "replicas", replicasOf(got), "v/3000=10,0,-,- v/3001=4,6,-,-")
}

// TestQuorumBrokerMissing: a broker in Metadata that the leader no longer
// lists as an observer is counted.
func TestQuorumBrokerMissing(t *testing.T) {
	f := fakekafka.New(t)
	q := healthyQuorum()
	q.Observers = q.Observers[:2] // brokers 2 and 0
	f.SetQuorum(q)
	var logs bytes.Buffer
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	p.refresh(context.Background())
	if got := p.Snapshot().Quorum; got == nil || got.BrokersMissing != 1 {
		t.Fatalf("quorum %+v, want 1 broker missing; logs:\n%s", got, logs.String())
	}
}

// TestQuorumHWRegressionCountedOnce: a high watermark that goes back is
// counted once, not again while it stays there or climbs back, and an
// unknown (-1) high watermark of a new leader is no regression.
func TestQuorumHWRegressionCountedOnce(t *testing.T) {
	f := fakekafka.New(t)
	var logs bytes.Buffer
	f.SetQuorum(healthyQuorum())
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	for i, hw := range []int64{1000, 900, 900, -1, 950, 1200} {
		q := healthyQuorum()
		q.HW = hw
		f.SetQuorum(q)
		p.refresh(context.Background())
		got := p.Snapshot().Quorum
		want := uint64(0)
		if i >= 1 {
			want = 1
		}
		if got == nil || got.HWRegressions != want || got.HighWatermark != hw {
			t.Fatalf("refresh %d (HW %d): quorum %+v, want %d regressions", i, hw, got, want)
		}
	}
}

// countLines counts the log lines at level that contain msg.
func countLines(logs, level, msg string) int {
	n := 0
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, "level="+level) && strings.Contains(line, msg) {
			n++
		}
	}
	return n
}

// TestQuorumUnknownStates: each unusable answer is its reason alone, with
// no stale field left; denied and failures WARN once per change of state,
// unsupported is one INFO; only failures count as request errors.
func TestQuorumUnknownStates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(f *fakekafka.Kafka)
		want    QuorumUnknown
		level   string // of the one line that tells it
		counted bool
	}{
		{"denied", func(f *fakekafka.Kafka) {
			q := healthyQuorum()
			q.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			f.SetQuorum(q)
		}, QuorumDenied, "WARN", false},
		{"unsupported", func(f *fakekafka.Kafka) { f.SetQuorum(nil) }, QuorumUnsupported, "INFO", false},
		{"unsupported_version", func(f *fakekafka.Kafka) {
			q := healthyQuorum()
			q.ErrorCode = kerr.UnsupportedVersion.Code
			f.SetQuorum(q)
		}, QuorumUnsupported, "INFO", false},
		{"no_leader", func(f *fakekafka.Kafka) {
			q := healthyQuorum()
			q.LeaderID = -1
			f.SetQuorum(q)
		}, QuorumNoLeader, "WARN", false},
		{"error", func(f *fakekafka.Kafka) {
			q := healthyQuorum()
			q.PartitionErrorCode = kerr.NotLeaderForPartition.Code
			f.SetQuorum(q)
		}, QuorumError, "WARN", true},
		{"connection_closed", func(f *fakekafka.Kafka) {
			f.FailRequests(func(key kmsg.Key, _ int32) bool { return key == kmsg.DescribeQuorum })
		}, QuorumError, "WARN", true},
		{"timeout", func(f *fakekafka.Kafka) {
			q := healthyQuorum()
			q.Delay = 3 * time.Second // beyond the 2 s request timeout
			f.SetQuorum(q)
		}, QuorumTimeout, "WARN", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakekafka.New(t)
			f.SetQuorum(healthyQuorum())
			var logs bytes.Buffer
			p := quorumPoller(t, f, -1, ScopeCluster, &logs)
			p.refresh(context.Background())
			if q := p.Snapshot().Quorum; q == nil || q.Unknown != QuorumKnown {
				t.Fatalf("healthy first: %+v; logs:\n%s", q, logs.String())
			}
			tc.set(f)
			for range 2 {
				p.refresh(context.Background())
			}
			s := p.Snapshot()
			if s.Quorum == nil || s.Quorum.Unknown != tc.want || s.Quorum.Replicas != nil || s.Quorum.LeaderID != 0 || s.Quorum.Voters != 0 {
				t.Fatalf("quorum %+v, want only unknown %s; logs:\n%s", s.Quorum, tc.want, logs.String())
			}
			msg := map[string]string{"WARN": "metadata quorum is unknown", "INFO": "no KRaft metadata quorum"}[tc.level]
			if n := countLines(logs.String(), tc.level, msg); n != 1 {
				t.Errorf("%d %s lines about the metadata quorum over two refreshes, want 1; logs:\n%s", n, tc.level, logs.String())
			}
			if tc.level == "INFO" && countLines(logs.String(), "WARN", "quorum") > 0 {
				t.Errorf("WARN about an unsupported quorum:\n%s", logs.String())
			}
			if errs := s.RequestErrors[RequestDescribeQuorum]; (errs == 2) != tc.counted || (errs != 0 && errs != 2) {
				t.Errorf("%d request errors over two refreshes, counted=%v", errs, tc.counted)
			}
		})
	}
}

// TestQuorumZooKeeperNeverWarns: a ZooKeeper cluster (no API 55 listed) is
// unsupported from the first refresh on, told once at INFO, never at WARN.
func TestQuorumZooKeeperNeverWarns(t *testing.T) {
	f := fakekafka.New(t) // kfake lists no DescribeQuorum, as a 3.9 broker in ZooKeeper mode
	var logs bytes.Buffer
	p := quorumPoller(t, f, -1, ScopeCluster, &logs)
	for range 3 {
		p.refresh(context.Background())
	}
	s := p.Snapshot()
	if s.Quorum == nil || s.Quorum.Unknown != QuorumUnsupported {
		t.Fatalf("quorum %+v, want unsupported; logs:\n%s", s.Quorum, logs.String())
	}
	if n := countLines(logs.String(), "INFO", "no KRaft metadata quorum"); n != 1 || countLines(logs.String(), "WARN", "quorum") != 0 {
		t.Errorf("want one INFO and no WARN about the quorum; logs:\n%s", logs.String())
	}
	if s.RequestErrors[RequestDescribeQuorum] != 0 {
		t.Error("unsupported counted as a request error")
	}
}

// TestQuorumOnlyLowestBrokerSpeaks: in leader scope two sidecars of one
// cluster, brokers 0 and 1: only broker 0's reads and exports the quorum;
// when Metadata no longer lists broker 0, broker 1's speaks.
func TestQuorumOnlyLowestBrokerSpeaks(t *testing.T) {
	f := fakekafka.New(t)
	f.SetQuorum(healthyQuorum())
	var logs0, logs1 bytes.Buffer
	p0 := quorumPoller(t, f, 0, ScopeLeader, &logs0)
	p1 := quorumPoller(t, f, 1, ScopeLeader, &logs1)
	f.RequestCounts()
	p1.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeQuorum]; n != 0 || p1.Snapshot().Quorum != nil {
		t.Fatalf("broker 1's sidecar sent %d DescribeQuorum and has quorum %+v, want none", n, p1.Snapshot().Quorum)
	}
	p0.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeQuorum]; n != 1 || p0.Snapshot().Quorum == nil {
		t.Fatalf("broker 0's sidecar sent %d DescribeQuorum, quorum %+v; logs:\n%s", n, p0.Snapshot().Quorum, logs0.String())
	}
	// Broker 0 leaves Metadata (it died): broker 1's sidecar speaks.
	f.RewriteMetadata(func(string, *kmsg.MetadataResponseTopicPartition) {})
	f.RewriteBrokers(func(b []kmsg.MetadataResponseBroker) []kmsg.MetadataResponseBroker { return b[1:] })
	p1.refresh(context.Background())
	if q := p1.Snapshot().Quorum; q == nil || q.Unknown != QuorumKnown || q.BrokersMissing != 0 {
		t.Fatalf("broker 1's sidecar after broker 0 left Metadata: quorum %+v; logs:\n%s", q, logs1.String())
	}
}
