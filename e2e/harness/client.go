package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// saramaConfig is the client configuration used for every request. Retries
// are off so that each broker error reaches the caller as it happened.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kre-e2e"
	cfg.Version = sarama.V3_9_0_0 // clamped per request to what the broker supports
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 15 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 3
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	cfg.Admin.Timeout = 30 * time.Second
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 0
	cfg.Producer.Timeout = 10 * time.Second
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	return cfg
}

// Admin opens a cluster admin client on the running nodes. Close it.
func (c *Cluster) Admin() (sarama.ClusterAdmin, error) {
	return sarama.NewClusterAdmin(c.Bootstrap(), saramaConfig())
}

// withAdmin runs f with a fresh admin client: every call sees current
// metadata, which matters while nodes come and go.
func (c *Cluster) withAdmin(f func(sarama.ClusterAdmin) error) error {
	admin, err := c.Admin()
	if err != nil {
		return err
	}
	defer admin.Close()
	return f(admin)
}

// Topic describes a topic to create.
type Topic struct {
	Name       string
	Partitions int32             // default 1 (ignored with Assignment)
	RF         int16             // default 3 (ignored with Assignment)
	Assignment [][]int32         // optional replicas per partition; the first is the preferred leader
	Configs    map[string]string // topic configs, e.g. min.insync.replicas
}

// CreateTopic creates a topic and waits until every partition has a leader.
func (c *Cluster) CreateTopic(ctx context.Context, t Topic) error {
	detail := &sarama.TopicDetail{NumPartitions: t.Partitions, ReplicationFactor: t.RF}
	if detail.NumPartitions == 0 {
		detail.NumPartitions = 1
	}
	if detail.ReplicationFactor == 0 {
		detail.ReplicationFactor = 3
	}
	if t.Assignment != nil {
		detail.NumPartitions, detail.ReplicationFactor = -1, -1
		detail.ReplicaAssignment = map[int32][]int32{}
		for p, replicas := range t.Assignment {
			detail.ReplicaAssignment[int32(p)] = replicas
		}
	}
	if len(t.Configs) > 0 {
		detail.ConfigEntries = map[string]*string{}
		for k, v := range t.Configs {
			detail.ConfigEntries[k] = &v
		}
	}
	err := c.withAdmin(func(a sarama.ClusterAdmin) error { return a.CreateTopic(t.Name, detail, false) })
	if err != nil {
		return fmt.Errorf("create topic %s: %w", t.Name, err)
	}
	c.logf("created topic %s", t.Name)
	partitions := int(detail.NumPartitions)
	if t.Assignment != nil {
		partitions = len(t.Assignment)
	}
	for p := range partitions {
		leader, err := c.WaitLeader(ctx, t.Name, int32(p))
		if err != nil {
			return err
		}
		// Metadata can name the leader before that broker has applied it,
		// and a produce sent then is refused with NOT_LEADER (TestRotation,
		// one send in 300): wait until the leader answers for the partition.
		if err := c.poll(ctx, fmt.Sprintf("%s-%d: broker %d leading", t.Name, p, leader), func() (bool, error) {
			_, err := c.HighWatermarkOf(leader, t.Name, int32(p))
			return err == nil, err
		}); err != nil {
			return err
		}
	}
	return nil
}

// PartitionState is the cluster's current view of one partition.
type PartitionState struct {
	Leader      int32 // -1 when offline
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
	Offline     []int32
}

// metadata asks the running, unpaused nodes in turn for a Metadata response.
// Going to a node directly, rather than to sarama's "controller" (a random
// broker in KRaft, possibly a paused one), keeps each poll short.
func (c *Cluster) metadata(topics ...string) (*sarama.MetadataResponse, error) {
	cfg := saramaConfig()
	var errs []error
	for _, addr := range c.Bootstrap() {
		broker := sarama.NewBroker(addr)
		if err := broker.Open(cfg); err != nil {
			errs = append(errs, err)
			continue
		}
		md, err := broker.GetMetadata(sarama.NewMetadataRequest(cfg.Version, topics))
		broker.Close()
		if err == nil {
			return md, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return nil, fmt.Errorf("metadata: %w", errors.Join(errs...))
}

// Partition describes one partition as the first reachable node sees it.
func (c *Cluster) Partition(topic string, partition int32) (PartitionState, error) {
	md, err := c.metadata(topic)
	if err != nil {
		return PartitionState{}, err
	}
	for _, tm := range md.Topics {
		if tm.Name != topic {
			continue
		}
		if tm.Err != sarama.ErrNoError {
			return PartitionState{}, fmt.Errorf("topic %s: %w", topic, tm.Err)
		}
		for _, pm := range tm.Partitions {
			if pm.ID != partition {
				continue
			}
			switch pm.Err {
			case sarama.ErrNoError, sarama.ErrLeaderNotAvailable, sarama.ErrReplicaNotAvailable:
			default:
				return PartitionState{}, fmt.Errorf("%s-%d: %w", topic, partition, pm.Err)
			}
			return PartitionState{
				Leader: pm.Leader, LeaderEpoch: pm.LeaderEpoch,
				Replicas: pm.Replicas, ISR: pm.Isr, Offline: pm.OfflineReplicas,
			}, nil
		}
	}
	return PartitionState{}, fmt.Errorf("partition %s-%d not in metadata", topic, partition)
}

// Brokers lists the ids of the brokers in the metadata (registered and
// unfenced), sorted.
func (c *Cluster) Brokers() ([]int32, error) {
	md, err := c.metadata()
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range md.Brokers {
		ids = append(ids, b.ID())
	}
	slices.Sort(ids)
	return ids, nil
}

// SetLogLevel changes a logger's level on one broker at runtime
// (IncrementalAlterConfigs on the BROKER_LOGGER resource, like
// `kafka-configs --entity-type broker-loggers`). Kafka applies it in memory on
// the receiving broker only, so it is sent to that broker and lost on restart.
//
// A class logger such as kafka.cluster.Partition only exists once the broker
// has used it (it hosts a partition); until then Kafka answers "Logger … does
// not exist!", so that answer is retried until ctx ends.
func (c *Cluster) SetLogLevel(ctx context.Context, nodeID int32, logger, level string) error {
	entries := map[string]sarama.IncrementalAlterConfigsEntry{
		logger: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &level},
	}
	return c.poll(ctx, fmt.Sprintf("node %d: %s=%s", nodeID, logger, level), func() (bool, error) {
		err := c.withAdmin(func(a sarama.ClusterAdmin) error {
			return a.IncrementalAlterConfig(sarama.BrokerLoggerResource, fmt.Sprint(nodeID), entries, false)
		})
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			return false, permanent{err}
		}
		return err == nil, err
	})
}

// SetLogLevelAll sets a logger's level on every running node.
func (c *Cluster) SetLogLevelAll(ctx context.Context, logger, level string) error {
	var errs []error
	for _, n := range c.nodes {
		if n.Running() {
			errs = append(errs, c.SetLogLevel(ctx, n.ID, logger, level))
		}
	}
	return errors.Join(errs...)
}

// ElectLeaders asks the controller for an election of the given kind
// (sarama.PreferredElection or sarama.UncleanElection) on one partition.
func (c *Cluster) ElectLeaders(kind sarama.ElectionType, topic string, partition int32) error {
	return c.withAdmin(func(a sarama.ClusterAdmin) error {
		res, err := a.ElectLeaders(kind, map[string][]int32{topic: {partition}})
		if err != nil {
			return err
		}
		if r := res[topic][partition]; r != nil && r.ErrorCode != sarama.ErrNoError {
			msg := ""
			if r.ErrorMessage != nil {
				msg = *r.ErrorMessage
			}
			return fmt.Errorf("elect leader %s-%d: %w %s", topic, partition, r.ErrorCode, msg)
		}
		return nil
	})
}
