package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestConsumerGroupKIP848: a consumer group of the KIP-848
// protocol (group.protocol=consumer, GA since Kafka 4.0: the coordinator
// assigns the partitions, members heartbeat with ConsumerGroupHeartbeat and
// never JoinGroup). Its committed offsets answer OffsetFetch as a classic
// group's do, so the leader's sidecar must export its committed offset and
// lag; its state and member count come from Kafka's ConsumerGroupDescribe
// and must match what Kafka says, or show as unknown.
//
// How: a franz-go consumer with ServerSideBalancer; Kafka lists the group with type consumer (ListGroups v5) and
// describes it Stable with 1 member (ConsumerGroupDescribe); the leader's sidecar exports its committed offset (>
// 50), lag to the HW (< 50), not starved, and the same state and member count. Kafka's DescribeGroups answers Dead
// with 0 members for such a group, which is what the exporter showed before it asked ConsumerGroupDescribe. 19 s.
func TestConsumerGroupKIP848(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	start := time.Now()
	defer func() { t.Logf("wall time %v", time.Since(start).Round(time.Second)) }()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const topic = "nextgen"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	const group = "nextgen-group"

	var wg sync.WaitGroup
	defer wg.Wait()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	produceSteadily(runCtx, t, &wg, c, topic, sarama.WaitForLocal, 50*time.Millisecond)
	// franz-go joins with the KIP-848 protocol given ServerSideBalancer and
	// a range or sticky balancer, on a broker with ConsumerGroupHeartbeat v1.
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(c.Bootstrap()...),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(200*time.Millisecond),
	)
	must(t, err)
	defer consumer.Close()
	wg.Go(func() {
		for runCtx.Err() == nil {
			consumer.PollFetches(runCtx)
		}
	})

	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--collector.consumer-groups")
	must(t, err)
	t.Cleanup(es.Close)
	s := &sidecars{t: t, es: es}

	// What Kafka says of the group: its type (ListGroups v5) and its state
	// and members (ConsumerGroupDescribe, the KIP-848 describe).
	typ, state, members := describeNextGen(ctx, t, c, group)
	t.Logf("Kafka: group %s type %q, state %q, %d member(s)", group, typ, state, members)
	if typ != "consumer" {
		t.Fatalf("group %s has type %q, want a KIP-848 consumer group", group, typ)
	}

	gp := map[string]string{"group": group, "topic": topic, "partition": "0"}
	s.eventually(ctx, 40*time.Second, "the KIP-848 group's offsets and lag exported", func(m map[int32]stack.Metrics) string {
		return expect(m[1],
			gauge("kafka_replication_consumer_group_committed_offset", gp, gt(50)),
			gauge("kafka_replication_consumer_group_lag_to_high_watermark", gp, lt(50)),
			gauge("kafka_replication_consumer_group_starved_by_replication", gp, eq(0)),
			gauge("kafka_replication_consumer_group_state", map[string]string{"group": group, "state": state}, eq(1)),
			gauge("kafka_replication_consumer_group_members", map[string]string{"group": group}, eq(float64(members))))
	})
}

// describeNextGen asks Kafka for a group's type (ListGroups v5) and, once it
// is a consumer group with members, its state and member count
// (ConsumerGroupDescribe), from the group's coordinator.
func describeNextGen(ctx context.Context, t *testing.T, c *harness.Cluster, group string) (typ, state string, members int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...))
	must(t, err)
	defer cl.Close()
	for ctx.Err() == nil {
		list := kmsg.NewPtrListGroupsRequest()
		shards := cl.RequestSharded(ctx, list)
		typ = ""
		for _, sh := range shards {
			if sh.Err != nil {
				continue
			}
			for _, g := range sh.Resp.(*kmsg.ListGroupsResponse).Groups {
				if g.Group == group {
					typ = g.GroupType
				}
			}
		}
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(ctx, cl)
		if err == nil && len(resp.Groups) == 1 && resp.Groups[0].ErrorCode == 0 && len(resp.Groups[0].Members) > 0 && typ != "" {
			g := resp.Groups[0]
			return typ, g.State, len(g.Members)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("group %s: no KIP-848 description from Kafka: %v", group, fmt.Sprint(ctx.Err()))
	return "", "", 0
}
