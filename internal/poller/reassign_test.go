package poller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

func reassignTable(s *Snapshot) string {
	return table(s, func(p *Partition) any {
		if !p.ReassignmentKnown {
			return "-"
		}
		return fmt.Sprintf("%v+%d-%d:%v", p.Reassigning, p.AddingReplicas, p.RemovingReplicas, p.UnderReplicatedByReassignment)
	})
}

// TestPollerReassignment: a partition whose only missing replicas are being
// added is under-replicated by the reassignment; one also missing a replica
// that is not being added, or missing one with no reassignment, is not.
func TestPollerReassignment(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0, 1, 2, 0, 1)
	// kfake places every partition on all three brokers.
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		switch p.Partition {
		case 0: // RF 2 -> 3: replica 2 is being added and catching up
			p.Replicas, p.ISR = []int32{0, 1, 2}, []int32{0, 1}
		case 1: // 0 is being added, but 2 fell out as well
			p.Replicas, p.ISR = []int32{1, 2, 0}, []int32{1}
		case 2: // a plain under-replicated partition
			p.Replicas, p.ISR = []int32{2, 0, 1}, []int32{2, 0}
		case 3: // moving 2 away: the ISR is full, 2 is being removed
			p.Replicas, p.ISR = []int32{0, 1, 2}, []int32{0, 1, 2}
		}
	})
	f.SetReassignments(map[logparse.PartitionKey]fakekafka.Reassignment{
		{Topic: "orders", Partition: 0}: {Replicas: []int32{0, 1, 2}, Adding: []int32{2}},
		{Topic: "orders", Partition: 1}: {Replicas: []int32{1, 2, 0}, Adding: []int32{0}},
		{Topic: "orders", Partition: 3}: {Replicas: []int32{0, 1, 2}, Removing: []int32{2}},
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "reassigning+adding-removing:by reassignment", reassignTable(s),
		"orders/0=true+1-0:true orders/1=true+1-0:false orders/2=false+0-0:false orders/3=true+0-1:false orders/4=false+0-0:false")
	expect(t, "under-replicated, at min ISR", table(s, func(p *Partition) any { return fmt.Sprint(p.UnderReplicated(), p.AtMinISR()) }),
		"orders/0=true true orders/1=true false orders/2=true true orders/3=false false orders/4=false false")
	if s.RequestErrors != [NumRequests]uint64{} {
		t.Errorf("want no request errors, got %v", s.RequestErrors)
	}
}

// TestPollerReassignmentFresherLogISR: when this broker's log saw the ISR
// shrink further than Metadata says, a replica Metadata does not name is
// missing, so the reassignment does not explain the under-replication.
func TestPollerReassignmentFresherLogISR(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		p.Replicas, p.ISR = []int32{0, 1, 2}, []int32{0, 1}
	})
	f.SetReassignments(map[logparse.PartitionKey]fakekafka.Reassignment{{Topic: "orders", Partition: 0}: {Replicas: []int32{0, 1, 2}, Adding: []int32{2}}})
	view := fakeLogStore{{Topic: "orders", Partition: 0}: {isr: 1, isrAt: testEpoch.Add(time.Hour)}}
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{LogStore: view}, nil)
	a.refresh(context.Background())
	expect(t, "reassignment with a fresher, smaller log ISR", reassignTable(a.Snapshot()), "orders/0=true+1-0:false")
}

// TestPollerReassignmentFinishedAfterMetadata: the controller completes a
// reassignment between this broker's Metadata (its cache still shows the
// added replica out of the ISR) and the reassignment read (none listed).
// The last refresh's reassignment explains the missing replica for that
// refresh; a refresh later, a replica still missing is missing.
func TestPollerReassignmentFinishedAfterMetadata(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", map[string]string{"min.insync.replicas": "2"}, 0)
	f.RewriteMetadata(func(topic string, p *kmsg.MetadataResponseTopicPartition) {
		p.Replicas, p.ISR = []int32{0, 1, 2}, []int32{0, 1}
	})
	f.SetReassignments(map[logparse.PartitionKey]fakekafka.Reassignment{{Topic: "orders", Partition: 0}: {Replicas: []int32{0, 1, 2}, Adding: []int32{2}}})
	a, _ := newTestPoller(t, f.C.ListenAddrs(), -1, ScopeCluster, Options{}, nil)
	for i, want := range []string{
		"orders/0=true+1-0:true",   // reassigning, 2 being added
		"orders/0=false+0-0:true",  // done at the controller, Metadata trails
		"orders/0=false+0-0:false", // still out a refresh later: under-replicated
	} {
		if i == 1 {
			f.SetReassignments(nil)
		}
		a.refresh(context.Background())
		expect(t, fmt.Sprintf("refresh %d", i+1), reassignTable(a.Snapshot()), want)
	}
}

// TestPollerReassignmentRequest: the request names exactly the partitions
// the sidecar exports, and is sent to its own broker.
func TestPollerReassignmentRequest(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 0, 1, 0, 2)
	f.CreateTopic("audit", nil, 2, 0)
	f.CreateTopic("elsewhere", nil, 1)
	type sent struct {
		node  int32
		parts string
	}
	var (
		mu   sync.Mutex
		reqs []sent
	)
	f.C.ControlKey(int16(kmsg.ListPartitionReassignments), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.C.KeepControl()
		var parts []string
		for _, rt := range kreq.(*kmsg.ListPartitionReassignmentsRequest).Topics {
			for _, p := range rt.Partitions {
				parts = append(parts, fmt.Sprintf("%s/%d", rt.Topic, p))
			}
		}
		slices.Sort(parts)
		mu.Lock()
		reqs = append(reqs, sent{f.C.CurrentNode(), fmt.Sprint(parts)})
		mu.Unlock()
		return nil, nil, false
	})
	a, _ := newTestPoller(t, f.C.ListenAddrs()[:1], 0, ScopeLeader, Options{}, nil)
	a.refresh(context.Background())
	expect(t, "reassignments of what broker 0 leads", reassignTable(a.Snapshot()),
		"audit/1=false+0-0:false orders/0=false+0-0:false orders/2=false+0-0:false")
	mu.Lock()
	defer mu.Unlock()
	want := []sent{{0, "[audit/1 orders/0 orders/2]"}}
	if !slices.Equal(reqs, want) {
		t.Errorf("want requests %v, got %v", want, reqs)
	}
}

// TestPollerReassignmentErrors: a refused request (no DESCRIBE on the
// cluster) is counted and leaves no reassignment values; NOT_CONTROLLER, a
// ZooKeeper-mode broker's answer, sends the request to the controller.
func TestPollerReassignmentErrors(t *testing.T) {
	f := fakekafka.New(t)
	f.CreateTopic("orders", nil, 1)
	controller := metadataController(t, f)
	refuse := func(code int16, unless int32) {
		f.C.ControlKey(int16(kmsg.ListPartitionReassignments), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			f.C.KeepControl()
			if f.C.CurrentNode() == unless {
				return nil, nil, false
			}
			resp := kreq.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
			resp.Version = kreq.GetVersion()
			resp.ErrorCode = code
			return resp, nil, true
		})
	}
	own := (controller + 1) % 3
	refuse(kerr.NotController.Code, controller)
	a, _ := newTestPoller(t, f.C.ListenAddrs()[own:own+1], own, ScopeCluster, Options{}, nil)
	a.refresh(context.Background())
	s := a.Snapshot()
	expect(t, "answered by the controller", reassignTable(s), "orders/0=false+0-0:false")
	if n := s.RequestErrors[RequestListPartitionReassignments]; n != 0 {
		t.Errorf("want no error when the controller answers, got %d", n)
	}

	refuse(kerr.ClusterAuthorizationFailed.Code, -1)
	a.refresh(context.Background())
	s = a.Snapshot()
	expect(t, "refused", reassignTable(s), "orders/0=-")
	if n := s.RequestErrors[RequestListPartitionReassignments]; n != 1 {
		t.Errorf("want 1 list_partition_reassignments error, got %d", n)
	}
}

// metadataController is the broker kfake names as controller.
func metadataController(t *testing.T, f *fakekafka.Kafka) int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.C.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return md.ControllerID
}
