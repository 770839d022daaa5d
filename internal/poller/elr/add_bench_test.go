package elr

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// syntheticPage is a full page as a 4.x broker sends it: 2000 partitions of
// RF 3 over 20 topics, empty lists where a set is empty, and one partition in
// a hundred under min ISR with an ELR.
func syntheticPage(page int) *kmsg.DescribeTopicPartitionsResponse {
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	for t := range 20 {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = kmsg.StringPtr(fmt.Sprintf("topic-%04d", page*20+t))
		for p := range int32(100) {
			rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			rp.Partition = p
			rp.Replicas = []int32{1, 2, 3}
			rp.ISR = []int32{1, 2, 3}
			rp.EligibleLeaderReplicas = []int32{}
			rp.LastKnownELR = []int32{}
			if p%100 == 7 {
				rp.ISR = []int32{1}
				rp.EligibleLeaderReplicas = []int32{2, 3}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// BenchmarkAddPage is the client-side cost of one 2000-partition page after
// decoding.
func BenchmarkAddPage(b *testing.B) {
	page := syntheticPage(0)
	b.ReportAllocs()
	for b.Loop() {
		res := &Result{Partitions: make(map[logparse.PartitionKey]Partition), Described: make(map[string]int32)}
		var budget pageBudget
		if _, err := res.add(page, &budget, maxPartitions, maxReplicaIDs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestResultHeapFor100kPartitions checks that a Result keeps only the
// partitions with a set: a map entry for each of 100,000 partitions was
// 10 MiB a poll for nothing.
func TestResultHeapFor100kPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	pages := make([]*kmsg.DescribeTopicPartitionsResponse, 50)
	for i := range pages {
		pages[i] = syntheticPage(i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := &Result{Partitions: make(map[logparse.PartitionKey]Partition), Described: make(map[string]int32)}
	var budget pageBudget
	for _, p := range pages {
		if _, err := res.add(p, &budget, maxPartitions, maxReplicaIDs); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(res.Partitions) != 1000 || len(res.Described) != 1000 {
		t.Fatalf("%d partitions with a set over %d topics, want 1000 and 1000", len(res.Partitions), len(res.Described))
	}
	live := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	t.Logf("Result of 100,000 partitions (1%% with an ELR) over 1000 topics: %.2f MiB live heap", live)
	if live > 2 {
		t.Errorf("a Result of 100,000 partitions keeps %.2f MiB live, want under 2", live)
	}
	runtime.KeepAlive(pages)
	runtime.KeepAlive(res)
}
