package poller

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// syncBuffer is a log sink the test reads while the poller writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// describeConfigsAnswers makes f answer DescribeConfigs from topics (topic
// → value; a value starting with "!" is that error code's name; a topic
// absent from the map is left out of the answer) and broker (the BROKER
// resource's value, same rules; "" = left out).
func describeConfigsAnswers(f *fakekafka.Kafka, topics map[string]string, broker *string) {
	f.C.ControlKey(int16(kmsg.DescribeConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		req := kreq.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		resp.Version = req.Version
		for _, r := range req.Resources {
			v, ok := topics[r.ResourceName]
			if r.ResourceType == kmsg.ConfigResourceTypeBroker {
				v, ok = *broker, *broker != ""
			}
			if !ok {
				continue
			}
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			switch v {
			case "!TOPIC_AUTHORIZATION_FAILED":
				rr.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case "!CLUSTER_AUTHORIZATION_FAILED":
				rr.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			case "!UNKNOWN_TOPIC_OR_PARTITION":
				rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case "!none":
				// answered, without the config entry
			default:
				c := kmsg.NewDescribeConfigsResponseResourceConfig()
				c.Name, c.Value = minISRConfig, kmsg.StringPtr(v)
				rr.Configs = append(rr.Configs, c)
			}
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
}

// TestPollerMinISRUnusable: a topic whose min.insync.replicas cannot be used
// (no ACL, another error, garbage, left out) is counted by reason, its
// partitions keep every series but min ISR, and the WARN is said once per
// change; when the broker's own value is readable it stands in, and says so.
func TestPollerMinISRUnusable(t *testing.T) {
	f := fakekafka.New(t)
	answers := map[string]string{
		"ok":      "2",
		"denied":  "!TOPIC_AUTHORIZATION_FAILED",
		"gone":    "!UNKNOWN_TOPIC_OR_PARTITION",
		"abc":     "abc",
		"neg":     "-1",
		"empty":   "",
		"huge":    "1e23",
		"big":     "99999999999",
		"noentry": "!none",
	}
	for _, t := range []string{"ok", "denied", "gone", "abc", "neg", "empty", "huge", "big", "noentry", "silent"} {
		f.CreateTopic(t, nil, 0)
		f.SetOffsets(logparse.PartitionKey{Topic: t, Partition: 0}, fakekafka.Offsets{HW: 5, LEO: 7})
	}
	broker := "!CLUSTER_AUTHORIZATION_FAILED"
	describeConfigsAnswers(f, answers, &broker)
	var logs syncBuffer
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeCluster, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)

	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "min ISR", table(s, func(p *Partition) any { return p.MinISR }),
		"abc/0=0 big/0=0 denied/0=0 empty/0=0 gone/0=0 huge/0=0 neg/0=0 noentry/0=0 ok/0=2 silent/0=0")
	expect(t, "HW, LEO known", table(s, func(p *Partition) any { return fmt.Sprint(p.HW, p.HWKnown, p.LEO, p.LEOKnown) }),
		"abc/0=5 true 7 true big/0=5 true 7 true denied/0=5 true 7 true empty/0=5 true 7 true gone/0=5 true 7 true "+
			"huge/0=5 true 7 true neg/0=5 true 7 true noentry/0=5 true 7 true ok/0=5 true 7 true silent/0=5 true 7 true")
	want := [NumUnusable]int{UnusableAuthorization: 1, UnusableError: 1, UnusableValue: 5, UnusableMissing: 2}
	if s.MinISR.Unknown != want || s.MinISR.BrokerDefault != [NumUnusable]int{} {
		t.Errorf("unknown %v, broker default %v; want unknown %v", s.MinISR.Unknown, s.MinISR.BrokerDefault, want)
	}
	if got := s.MinISR.AnswerErrors; got != [NumUnusable]uint64{1, 1, 5, 2, 0} {
		t.Errorf("answer errors %v", got)
	}
	if n := strings.Count(logs.String(), "Cannot read min.insync.replicas"); n != 4 {
		t.Errorf("want 4 WARN lines (one per reason), got %d:\n%s", n, logs.String())
	}

	// The same state again: counted again, said no more.
	a.refresh(context.Background())
	if n := strings.Count(logs.String(), "Cannot read min.insync.replicas"); n != 4 {
		t.Errorf("the same state said again: %d lines:\n%s", n, logs.String())
	}
	if got := a.Snapshot().MinISR.AnswerErrors[UnusableValue]; got != 10 {
		t.Errorf("invalid values counted %d times, want 10", got)
	}

	// The broker's own value readable: it stands in, and the gauge says so.
	broker = "3"
	a.refresh(context.Background())
	s = a.Snapshot()
	expect(t, "min ISR from the broker default", table(s, func(p *Partition) any { return p.MinISR }),
		"abc/0=3 big/0=3 denied/0=3 empty/0=3 gone/0=3 huge/0=3 neg/0=3 noentry/0=3 ok/0=2 silent/0=3")
	if s.MinISR.Unknown != [NumUnusable]int{} || s.MinISR.BrokerDefault != want {
		t.Errorf("unknown %v, broker default %v; want broker default %v", s.MinISR.Unknown, s.MinISR.BrokerDefault, want)
	}
	for _, tp := range s.Topics {
		if wantSrc := MinISRSourceBrokerDefault; tp.Name != "ok" && (tp.MinISRSource != wantSrc || tp.MinISRConfig != 3) {
			t.Errorf("%s: source %v, config %d", tp.Name, tp.MinISRSource, tp.MinISRConfig)
		}
	}
	if !strings.Contains(logs.String(), "known again") || !strings.Contains(logs.String(), "using the broker's default") {
		t.Errorf("no INFO for known again, or no WARN for the broker default:\n%s", logs.String())
	}
}

// TestPollerMinISRRequestFailed: when DescribeConfigs fails as a whole, the
// value last read stands; a topic never read is unknown, request_failed.
func TestPollerMinISRRequestFailed(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("old", map[string]string{"min.insync.replicas": "2"}, 0)
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	f.CreateTopic("new", nil, 0)
	f.C.ControlKey(int16(kmsg.DescribeConfigs), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		return nil, fmt.Errorf("dropped"), true
	})
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "min ISR", table(s, func(p *Partition) any { return p.MinISR }), "new/0=0 old/0=2")
	if s.MinISR.Unknown != [NumUnusable]int{UnusableRequestFailed: 1} {
		t.Errorf("unknown %v", s.MinISR.Unknown)
	}
}
