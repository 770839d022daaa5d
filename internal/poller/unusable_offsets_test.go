package poller

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// TestUnusableOffsetAnswersAreCounted: a leader that answers ListOffsets
// for a partition with an error leaves that partition's HW and LEO out; the
// exporter counts it (by request and why, the request itself not failed)
// and says so at WARN once, and once more when it answers again.
func TestUnusableOffsetAnswersAreCounted(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.CreateTopic("audit", nil, 1)
	f.SetOffsets(key("audit", 0), fakekafka.Offsets{HW: 7, LEO: 7})
	var logs strings.Builder
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{Logger: slogTo(&logs)}, func(c *Config) {
		c.Groups.LastStableOffset = true
	})
	// orders/0 has no offsets: the leader answers UNKNOWN_TOPIC_OR_PARTITION.
	a.refresh(context.Background())
	a.refresh(context.Background())
	s := a.Snapshot()
	// Per refresh: the HW and LSO once (the leader's), the LEO once per replica.
	for req, want := range map[Request]uint64{RequestListOffsets: 2, RequestListOffsetsLEO: 6, RequestListOffsetsLSO: 2} {
		if n := s.UnusableAnswers[req][UnusableError]; n != want {
			t.Errorf("%s: want %d unusable answers of orders/0, got %d", req, want, n)
		}
		if n := s.RequestErrors[req]; n != 0 {
			t.Errorf("%s: want no failed request (the leader answered), got %d", req, n)
		}
	}
	expect(t, "HW known", table(s, func(p *Partition) any { return p.HWKnown }), "audit/0=true orders/0=false")
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 3, LEO: 3, LSOError: kerr.NotLeaderForPartition.Code})
	a.refresh(context.Background())
	f.SetOffsets(key("orders", 0), fakekafka.Offsets{HW: 3, LEO: 3})
	a.refresh(context.Background())
	s = a.Snapshot()
	if n := s.UnusableAnswers[RequestListOffsetsLSO][UnusableError]; n != 3 {
		t.Errorf("list_offsets_lso: want 3 unusable answers, got %d", n)
	}
	text := logs.String()
	if n := strings.Count(text, "level=WARN msg=\"Kafka answered some partitions with an error"); n != 3 {
		t.Errorf("want one WARN per request when it began (3), got %d:\n%s", n, text)
	}
	if n := strings.Count(text, "msg=\"Kafka answers every partition again\""); n != 3 {
		t.Errorf("want one line per request when it ended (3), got %d:\n%s", n, text)
	}
}
