package poller

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
)

// hostileMetadata makes f answer Metadata with topics, each with the
// partitions listed (by id, led by broker 0 with every broker a replica).
func hostileMetadata(t *testing.T, f *fakekafka.Kafka, topics []string, partitions [][]int32) {
	t.Helper()
	hostileMetadataFunc(t, f, func() ([]string, [][]int32) { return topics, partitions })
}

// hostileMetadataFunc is hostileMetadata with the topics of each answer
// from answer.
func hostileMetadataFunc(t *testing.T, f *fakekafka.Kafka, answer func() ([]string, [][]int32)) {
	t.Helper()
	var brokers []kmsg.MetadataResponseBroker
	for i, addr := range f.C.ListenAddrs() {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), host, int32(p)
		brokers = append(brokers, b)
	}
	f.C.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.MetadataResponse)
		resp.Version = kreq.GetVersion()
		resp.Brokers = brokers
		resp.ControllerID = 0
		topics, partitions := answer()
		for i, name := range topics {
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic = kmsg.StringPtr(name)
			for _, id := range partitions[i] {
				rp := kmsg.NewMetadataResponseTopicPartition()
				rp.Partition, rp.Leader, rp.LeaderEpoch = id, 0, 1
				rp.Replicas, rp.ISR = []int32{0, 1, 2}, []int32{0, 1, 2}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
}

// TestPlanRefusesHostileMetadata: a partition listed twice, a topic listed
// twice, an empty, a 100 kB and an illegal topic name never become series;
// each is counted by reason.
func TestPlanRefusesHostileMetadata(t *testing.T) {
	f := fakekafka.New(t)
	hostileMetadata(t, f,
		[]string{"orders", "", strings.Repeat("t", 100_000), "orders", "bad name", "audit"},
		[][]int32{{0, 1, 0, 1, 2}, {0}, {0}, {0, 1}, {0}, {7, 7}})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), 0, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	if !s.Up {
		t.Fatal("up=0")
	}
	expect(t, "partitions", table(s, func(p *Partition) any { return p.Replicas }), "audit/7=3 orders/0=3 orders/1=3 orders/2=3")
	want := [NumRefusals]uint64{RefusedDuplicatePartition: 3, RefusedDuplicateTopic: 1, RefusedTopicName: 3}
	if s.MetadataRefused != want {
		t.Errorf("refused %v, want %v", s.MetadataRefused, want)
	}
	a.refresh(context.Background())
	if got := a.Snapshot().MetadataRefused[RefusedTopicName]; got != 6 {
		t.Errorf("invalid names refused %d times after two refreshes, want 6", got)
	}
}
