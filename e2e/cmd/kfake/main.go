// Command kfake serves an in-memory Kafka (franz-go's kfake) with many
// partitions in its own process, so bench/admin-cost.sh and
// bench/groups-cost.sh can measure the exporter's admin half alone: its CPU,
// its RSS and its refresh time, none of them mixed with the fake cluster's
// own (the in-process benchmarks cannot separate them).
//
//	go run ./e2e/cmd/kfake --topics 100 --partitions 1000
//	go run ./e2e/cmd/kfake --topics 100 --partitions 1000 --records 1 --groups 20 --group-partitions 10000
//	go run ./e2e/cmd/kfake --topics 10 --partitions 1000 --produce-every 2s
//
// It prints the brokers' addresses, comma-separated, on one line once the
// records and offsets are in, and serves until SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func main() {
	var s setup
	flag.IntVar(&s.topics, "topics", 100, "topics to create")
	flag.IntVar(&s.partitions, "partitions", 1000, "partitions per topic")
	flag.IntVar(&s.brokers, "brokers", 3, "brokers (the replication factor too)")
	flag.IntVar(&s.records, "records", 0, "records to produce to every partition")
	flag.IntVar(&s.groups, "groups", 0, "consumer groups to commit offsets for")
	flag.IntVar(&s.groupPartitions, "group-partitions", 0, "partitions each group commits an offset on")
	flag.DurationVar(&s.produceEvery, "produce-every", 0, "produce one more record to every partition this often (0: never), so that every HW moves")
	flag.Parse()
	if err := run(s); err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
}

// setup is the cluster to serve.
type setup struct {
	topics, partitions, brokers int
	records                     int
	groups, groupPartitions     int
	produceEvery                time.Duration
}

// run serves the fake cluster until SIGINT or SIGTERM.
func run(s setup) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(s.brokers))
	if err != nil {
		return err
	}
	defer c.Close()
	for i := range s.topics {
		if err := c.CreateTopic(topicName(i), int32(s.partitions), map[string]string{"min.insync.replicas": "2"}); err != nil {
			return err
		}
	}
	if s.records > 0 || s.groups > 0 {
		if err := fill(c, s); err != nil {
			return err
		}
	}
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	if s.produceEvery <= 0 {
		<-stop
		return nil
	}
	tick := time.NewTicker(s.produceEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
			if err := produce(c, s, 1); err != nil {
				return err
			}
		}
	}
}

// produce writes n records to every partition.
func produce(c *kfake.Cluster, s setup, n int) error {
	if n == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 0, s.topics*s.partitions*n)
	for t := range s.topics {
		for p := range s.partitions {
			for range n {
				recs = append(recs, &kgo.Record{Topic: topicName(t), Partition: int32(p), Value: []byte("x")})
			}
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

func topicName(i int) string { return fmt.Sprintf("topic-%03d", i) }

// fill produces s.records records to every partition, then commits offsets
// for s.groups groups named group-00, group-01, …, as an admin tool does (no
// member). Group g commits on s.groupPartitions consecutive partitions (in
// topic, then partition order, wrapping) starting at g/s.groups of the way
// through, so the groups overlap evenly; its offsets run 0, 1, …, s.records,
// 0, … so that some partitions lag and some are caught up.
func fill(c *kfake.Cluster, s setup) error {
	ctx := context.Background()
	// OffsetCommit v10 names topics by id; v9 and below by name.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		return err
	}
	defer cl.Close()
	total := s.topics * s.partitions
	if err := produce(c, s, s.records); err != nil {
		return err
	}
	for g := range s.groups {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group = fmt.Sprintf("group-%02d", g)
		req.Generation = -1
		start := g * total / s.groups
		for i := range min(s.groupPartitions, total) {
			at := (start + i) % total
			topic := topicName(at / s.partitions)
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != topic {
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = topic
				req.Topics = append(req.Topics, rt)
			}
			p := kmsg.NewOffsetCommitRequestTopicPartition()
			p.Partition, p.Offset = int32(at%s.partitions), int64(i%(s.records+1))
			rt := &req.Topics[len(req.Topics)-1]
			rt.Partitions = append(rt.Partitions, p)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("commit %s: %w", req.Group, err)
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					return fmt.Errorf("commit %s %s/%d: error %d", req.Group, rt.Topic, rp.Partition, rp.ErrorCode)
				}
			}
		}
	}
	return nil
}
