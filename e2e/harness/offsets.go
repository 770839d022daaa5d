package harness

import (
	"fmt"

	"github.com/IBM/sarama"
)

// HighWatermark returns the partition's high watermark: ListOffsets LATEST
// (read_uncommitted, consumer replica id) answered by the current leader.
func (c *Cluster) HighWatermark(topic string, partition int32) (int64, error) {
	client, err := sarama.NewClient(c.Bootstrap(), saramaConfig())
	if err != nil {
		return 0, err
	}
	defer client.Close()
	return client.GetOffset(topic, partition, sarama.OffsetNewest)
}

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID: a ListOffsets request with
// it is answered by any replica (not only the leader) without the isolation
// level cap, i.e. LATEST is that replica's log end offset.
const debugReplicaID = -2

// LogEndOffset returns the log end offset of the replica of topic-partition
// held by node id, asking that node directly with replica id -2.
func (c *Cluster) LogEndOffset(id int32, topic string, partition int32) (int64, error) {
	return c.listOffsets(id, debugReplicaID, topic, partition)
}

// HighWatermarkOf asks node id, the partition's leader, for its high
// watermark (ListOffsets LATEST as a consumer) without a client's metadata
// round trip: cheap enough to poll every few hundred milliseconds.
func (c *Cluster) HighWatermarkOf(id int32, topic string, partition int32) (int64, error) {
	return c.listOffsets(id, -1, topic, partition)
}

// listOffsets sends ListOffsets LATEST for one partition to node id with the
// given replica id (-1: a consumer, -2: the debug replica id).
func (c *Cluster) listOffsets(id, replicaID int32, topic string, partition int32) (int64, error) {
	cfg := saramaConfig()
	broker := sarama.NewBroker(c.Node(id).BrokerAddr)
	if err := broker.Open(cfg); err != nil {
		return 0, err
	}
	defer broker.Close()
	req := sarama.NewOffsetRequest(cfg.Version)
	req.SetReplicaID(replicaID)
	req.AddBlock(topic, partition, sarama.OffsetNewest, 1)
	resp, err := broker.GetAvailableOffsets(req)
	if err != nil {
		return 0, fmt.Errorf("node %d: ListOffsets: %w", id, err)
	}
	block := resp.GetBlock(topic, partition)
	if block == nil {
		return 0, fmt.Errorf("node %d: no answer for %s-%d", id, topic, partition)
	}
	if block.Err != sarama.ErrNoError {
		return 0, fmt.Errorf("node %d: %s-%d: %w", id, topic, partition, block.Err)
	}
	if len(block.Offsets) > 0 && block.Offset == 0 {
		return block.Offsets[0], nil // ListOffsets v0 answers in Offsets
	}
	return block.Offset, nil
}
