package harness

import (
	"fmt"

	"github.com/IBM/sarama"
)

// Reassign asks the controller to move one partition to the given replicas
// (AlterPartitionReassignments, KIP-455), as kafka-reassign-partitions
// --execute does; the first replica is the preferred leader.
func (c *Cluster) Reassign(topic string, partition int32, replicas []int32) error {
	assignment := make([][]int32, partition+1) // nil entries are left alone
	assignment[partition] = replicas
	return c.withAdmin(func(a sarama.ClusterAdmin) error {
		if err := a.AlterPartitionReassignments(topic, assignment); err != nil {
			return fmt.Errorf("reassign %s-%d to %v: %w", topic, partition, replicas, err)
		}
		return nil
	})
}

// Reassignment returns the partition's reassignment in progress
// (ListPartitionReassignments), or nil when there is none.
func (c *Cluster) Reassignment(topic string, partition int32) (*sarama.PartitionReplicaReassignmentsStatus, error) {
	var st *sarama.PartitionReplicaReassignmentsStatus
	err := c.withAdmin(func(a sarama.ClusterAdmin) error {
		res, err := a.ListPartitionReassignments(topic, []int32{partition})
		if err != nil {
			return fmt.Errorf("list reassignments of %s-%d: %w", topic, partition, err)
		}
		st = res[topic][partition]
		return nil
	})
	return st, err
}

// SetReplicationThrottle throttles the replication of every replica of topic
// to bytesPerSecond on each running broker, leader and follower side, as
// kafka-reassign-partitions --throttle does; 0 removes the throttle. Kafka
// throttles only replicas outside the ISR, so the ISR is not slowed.
func (c *Cluster) SetReplicationThrottle(topic string, bytesPerSecond int64) error {
	op, rate, replicas := sarama.IncrementalAlterConfigsOperationSet, fmt.Sprint(bytesPerSecond), "*"
	if bytesPerSecond <= 0 {
		op = sarama.IncrementalAlterConfigsOperationDelete
	}
	return c.withAdmin(func(a sarama.ClusterAdmin) error {
		for _, n := range c.nodes {
			if !n.Running() {
				continue
			}
			err := a.IncrementalAlterConfig(sarama.BrokerResource, fmt.Sprint(n.ID), map[string]sarama.IncrementalAlterConfigsEntry{
				"leader.replication.throttled.rate":   {Operation: op, Value: &rate},
				"follower.replication.throttled.rate": {Operation: op, Value: &rate},
			}, false)
			if err != nil {
				return fmt.Errorf("node %d: replication throttle %s: %w", n.ID, rate, err)
			}
		}
		err := a.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
			"leader.replication.throttled.replicas":   {Operation: op, Value: &replicas},
			"follower.replication.throttled.replicas": {Operation: op, Value: &replicas},
		}, false)
		if err != nil {
			return fmt.Errorf("topic %s: throttled replicas: %w", topic, err)
		}
		return nil
	})
}
