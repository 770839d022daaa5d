package elr

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A peer that answers DescribeTopicPartitions wrongly or hugely must cost an
// error, never a loop or unbounded memory.

func TestReadStopsAtACursorThatDoesNotMove(t *testing.T) {
	c := newCluster(t)
	c.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = kmsg.StringPtr("loop")
		rt.Partitions = append(rt.Partitions, kmsg.NewDescribeTopicPartitionsResponseTopicPartition())
		resp.Topics = append(resp.Topics, rt)
		next := kmsg.NewDescribeTopicPartitionsResponseNextCursor()
		next.Topic = "loop"
		resp.NextCursor = &next
		return resp, nil, true
	})
	r := newTestReader(t, c.Cluster, 2000)

	_, err := read(t, r)
	if err == nil || !strings.Contains(err.Error(), "page 2: cursor loop-0 does not move") {
		t.Fatalf("Read = %v, want a stop at page 2", err)
	}
}

func TestReadRefusesMorePartitionsThanItsBound(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(3, "alpha", "bravo", "charlie"))
	r := newTestReader(t, c.Cluster, 4)
	r.maxPartitions = 5

	_, err := read(t, r)
	if err == nil || !strings.Contains(err.Error(), "page 2: more than 5 partitions described") {
		t.Fatalf("Read = %v, want a refusal at page 2", err)
	}
}

func TestReadRefusesMoreReplicaIDsThanItsBound(t *testing.T) {
	c := newCluster(t)
	c.serveCanned([]fakePart{
		{topic: "orders", partition: 0, leader: 1, isr: []int32{1}, elr: []int32{2, 3}},
		{topic: "orders", partition: 1, leader: -1, elr: []int32{2, 3}, lastKnown: []int32{1}},
	})
	r := newTestReader(t, c.Cluster, 1)
	r.maxReplicaIDs = 4

	_, err := read(t, r)
	if err == nil || !strings.Contains(err.Error(), "page 2: more than 4 eligible leader replica ids described") {
		t.Fatalf("Read = %v, want a refusal at page 2", err)
	}
}

func TestReadRefusesATopicWithoutAName(t *testing.T) {
	c := newCluster(t)
	c.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		resp := kreq.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		resp.Topics = append(resp.Topics, kmsg.NewDescribeTopicPartitionsResponseTopic())
		return resp, nil, true
	})
	r := newTestReader(t, c.Cluster, 2000)

	if _, err := read(t, r); err == nil || !strings.Contains(err.Error(), "a topic without a name") {
		t.Fatalf("Read = %v, want a refusal", err)
	}
}

func TestReadRefusesAResponseOverTheReadBound(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(500, "wide"))
	r, err := newReader(Config{Seeds: c.ListenAddrs(), Timeout: 2 * time.Second}, 8<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	start := time.Now()
	_, err = read(t, r)
	if err == nil || !strings.Contains(err.Error(), "BrokerMaxReadBytes") {
		t.Fatalf("Read = %v, want the read bound to refuse a 500-partition page", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusal took %v", d)
	}
}

func TestReadGivesUpOnABrokerThatDoesNotAnswer(t *testing.T) {
	c := newCluster(t)
	c.ControlKey(int16(kmsg.DescribeTopicPartitions), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true // handled, and never answered
	})
	r, err := New(Config{Seeds: c.ListenAddrs(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	start := time.Now()
	_, err = r.Read(context.Background(), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read = %v, want the request timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Read took %v with a 300ms timeout", d)
	}
}
