package poller

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// askLogDirs sends req with sarama to the first broker of f and returns the
// request as the broker decoded it.
func askLogDirs(t *testing.T, f *fakekafka.Kafka, req *sarama.DescribeLogDirsRequest) *kmsg.DescribeLogDirsRequest {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = sarama.V3_9_0_0
	b := sarama.NewBroker(f.C.ListenAddrs()[0])
	if err := b.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.DescribeLogDirs(req); err != nil {
		t.Fatal(err)
	}
	got := f.LogDirRequests()
	if len(got) != 1 {
		t.Fatalf("want 1 DescribeLogDirs, the broker saw %d", len(got))
	}
	return got[0]
}

// TestLogDirsRequestAsksForNoPartition: sarama writes a nil and an empty
// topic list alike, as null, which asks for every partition of every
// directory; the poller's request names one topic with no partition, which
// the broker reads as a list of no partition (KafkaApis: null topics =
// all partitions, else the partitions listed).
func TestLogDirsRequestAsksForNoPartition(t *testing.T) {
	f := fakekafka.New(t)
	f.SetLogDirs(map[int32]fakekafka.LogDirs{})
	for _, v := range []sarama.KafkaVersion{sarama.V1_1_0_0, sarama.V2_8_0_0, sarama.V3_2_0_0, sarama.V3_9_0_0} {
		t.Run(v.String(), func(t *testing.T) {
			version := describeLogDirsVersion(v)
			for _, all := range [][]sarama.DescribeLogDirsRequestTopic{nil, {}} {
				got := askLogDirs(t, f, &sarama.DescribeLogDirsRequest{Version: version, DescribeTopics: all})
				if got.Topics != nil {
					t.Errorf("v%d: sarama with topics %#v: the broker read %d topics, want null (all partitions)", version, all, len(got.Topics))
				}
			}
			got := askLogDirs(t, f, logDirsRequest(v))
			if got.Version != version || got.Topics == nil {
				t.Fatalf("v%d: the poller's request reads as version %d, topics %v: want a list, not null", version, got.Version, got.Topics)
			}
			for _, tp := range got.Topics {
				if len(tp.Partitions) != 0 {
					t.Errorf("v%d: the poller's request asks for %s partitions %v, want none", version, tp.Topic, tp.Partitions)
				}
			}
		})
	}
}

// logDirsOf renders a snapshot's log directories as "broker:path=offline".
func logDirsOf(s *Snapshot) string {
	var b strings.Builder
	for _, d := range s.LogDirs {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s=%v", d.Broker, d.Path, d.Offline)
	}
	return b.String()
}

// TestLogDirs: which brokers each scope asks, a directory answered
// KAFKA_STORAGE_ERROR is offline and the healthy ones are not, a broker
// whose answer is unusable has no directory and counts a request error, and
// each change is said once.
func TestLogDirs(t *testing.T) {
	storage := kerr.KafkaStorageError.Code
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 2)
	f.SetLogDirs(map[int32]fakekafka.LogDirs{
		0: {Dirs: map[string]int16{"/data/a": 0}},
		1: {Dirs: map[string]int16{"/data/a": 0, "/data/b": storage}},
		2: {Dirs: map[string]int16{"/data/a": 0, "/data/b": 0}},
	})
	on := func(c *Config) { c.LogDirs = true }

	var logs syncBuffer
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, on)
	a.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeLogDirs]; n != 3 {
		t.Errorf("cluster scope: want 1 DescribeLogDirs per broker, got %d", n)
	}
	s := a.Snapshot()
	expect(t, "cluster scope", logDirsOf(s), "0:/data/a=false 1:/data/a=false 1:/data/b=true 2:/data/a=false 2:/data/b=false")
	if s.RequestErrors[RequestDescribeLogDirs] != 0 || !s.Sent[RequestDescribeLogDirs] {
		t.Errorf("request errors %d, sent %v", s.RequestErrors[RequestDescribeLogDirs], s.Sent[RequestDescribeLogDirs])
	}
	for _, b := range s.Brokers {
		if !b.Responsive {
			t.Errorf("broker %d not responsive", b.ID)
		}
	}
	if n := strings.Count(logs.String(), "Kafka log directory offline"); n != 1 || !strings.Contains(logs.String(), "dir=/data/b") {
		t.Errorf("want one WARN naming /data/b, got %d:\n%s", n, logs.String())
	}

	// Broker 2 refuses the request, broker 1's directory comes back.
	f.SetLogDirs(map[int32]fakekafka.LogDirs{
		0: {Dirs: map[string]int16{"/data/a": 0}},
		1: {Dirs: map[string]int16{"/data/a": 0, "/data/b": 0}},
		2: {Err: kerr.ClusterAuthorizationFailed.Code},
	})
	for range 2 {
		a.refresh(context.Background())
	}
	s = a.Snapshot()
	expect(t, "broker 2 refused", logDirsOf(s), "0:/data/a=false 1:/data/a=false 1:/data/b=false")
	if got := s.RequestErrors[RequestDescribeLogDirs]; got != 2 {
		t.Errorf("want 2 request errors (one per refresh), got %d", got)
	}
	if n := strings.Count(logs.String(), "DescribeLogDirs failed"); n != 1 || !strings.Contains(logs.String(), "online again") {
		t.Errorf("want one WARN for broker 2 and the directory online again:\n%s", logs.String())
	}

	// A directory answered with another error says nothing of its disk.
	f.SetLogDirs(map[int32]fakekafka.LogDirs{
		0: {Dirs: map[string]int16{"/data/a": 0, "/data/c": kerr.UnknownServerError.Code}},
	})
	a, _ = newTestPoller(t, f.C.ListenAddrs(), 0, ScopeLeader, Options{}, on)
	f.RequestCounts()
	a.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeLogDirs]; n != 1 {
		t.Errorf("leader scope: want 1 DescribeLogDirs, to its own broker, got %d", n)
	}
	s = a.Snapshot()
	expect(t, "leader scope of broker 0", logDirsOf(s), "0:/data/a=false")
	if got := s.RequestErrors[RequestDescribeLogDirs]; got != 1 {
		t.Errorf("want the unusable directory counted, got %d errors", got)
	}

	// Off: no request, no directory.
	a, _ = newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	if n := f.RequestCounts()[kmsg.DescribeLogDirs]; n != 0 || a.Snapshot().LogDirs != nil {
		t.Errorf("off: want no request and no directory, got %d requests and %v", n, a.Snapshot().LogDirs)
	}
}

// TestLogDirsDroppedWhenMetadataFails: a refresh without Metadata asks no
// broker for its log directories, so none is exported, not the last answer
// ("online") for the grace period the partition series get.
func TestLogDirsDroppedWhenMetadataFails(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.SetLogDirs(map[int32]fakekafka.LogDirs{0: {Dirs: map[string]int16{"/data/a": 0}}})
	a, clock := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, func(c *Config) { c.LogDirs = true })
	a.refresh(context.Background())
	expect(t, "first refresh", logDirsOf(a.Snapshot()), "0:/data/a=false")
	f.C.Close()
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "within the grace period", logDirsOf(s), "")
	if len(s.Topics) == 0 || s.LogDirs == nil {
		t.Errorf("within the grace period: want the topics kept and the read still on, got %d topics, log dirs %v", len(s.Topics), s.LogDirs)
	}
	clock.Advance(time.Minute)
	a.refresh(context.Background())
	expect(t, "after it", logDirsOf(a.Snapshot()), "")
}
