package poller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// A fetcher: the reassignments in progress. A partition reassignment
// (KIP-455: Cruise Control, kafka-reassign-partitions) adds the target
// replicas to the replica set and keeps them out of the ISR until they have
// caught up, so the partition is under-replicated by design. The poller
// reads ListPartitionReassignments every refresh so that the alerts can tell
// that apart from a replica that fell out.

// reassignment is one partition's reassignment in progress.
type reassignment struct {
	adding, removing []int32
}

// reassignments are the exported partitions being reassigned; nil when the
// refresh could not read them, empty when none is.
type reassignments map[logparse.PartitionKey]reassignment

// fetchReassignments lists the reassignments of the exported partitions,
// nil when none is exported or the read failed. A KRaft broker forwards the
// request to the active controller, so the broker that answered Metadata
// answers it; a ZooKeeper-mode broker answers NOT_CONTROLLER unless it is
// the controller, which then gets asked.
func fetchReassignments(ctx context.Context, r *round, p *refreshPlan) reassignments {
	if p.exported == 0 {
		return nil
	}
	addr := r.metadataAddr
	rs, err := r.pool.listReassignments(ctx, addr, p.parts)
	if errors.Is(err, sarama.ErrNotController) {
		if ctrl, ok := r.brokers[p.controller]; ok && ctrl != addr {
			rs, err = r.pool.listReassignments(ctx, ctrl, p.parts)
		}
	}
	if err != nil {
		r.fail(RequestListPartitionReassignments, -1, err)
		return nil
	}
	return rs
}

// listReassignments sends one ListPartitionReassignments for the exported
// partitions of parts. sarama cannot send the null topic list that means
// "every reassignment", so the partitions are named; the answer lists only
// those being reassigned.
func (p *brokerPool) listReassignments(ctx context.Context, addr string, parts []plannedPartition) (reassignments, error) {
	req := &sarama.ListPartitionReassignmentsRequest{TimeoutMs: int32(p.conf.Admin.Timeout.Milliseconds())}
	// parts lists each topic's partitions together, so one pass groups them.
	var ids []int32
	for i := range parts {
		pp := &parts[i]
		if pp.export {
			ids = append(ids, pp.key.Partition)
		}
		if len(ids) > 0 && (i+1 == len(parts) || parts[i+1].key.Topic != pp.key.Topic) {
			req.AddBlock(pp.key.Topic, ids)
			ids = nil
		}
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.ListPartitionReassignmentsResponse, error) {
		return b.ListPartitionReassignments(req)
	})
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments from %s: %w", addr, err)
	}
	if resp.ErrorCode != sarama.ErrNoError {
		return nil, fmt.Errorf("list partition reassignments from %s: %w", addr, resp.ErrorCode)
	}
	out := make(reassignments)
	for topic, byPartition := range resp.TopicStatus {
		for id, st := range byPartition {
			if st == nil {
				continue
			}
			out[logparse.PartitionKey{Topic: topic, Partition: id}] = reassignment{adding: st.AddingReplicas, removing: st.RemovingReplicas}
		}
	}
	return out, nil
}

// setReassignment copies a partition's reassignment state from the refresh's
// read, if it read one, and decides whether the reassignment explains the
// under-replication: every replica missing from the ISR is one being added.
// missing are the replicas Metadata left out of the ISR; when the exported
// ISR (joined with the log view) is smaller still, a replica Metadata does not
// name is missing too, and the verdict is no.
//
// prev is the previous refresh's read. Metadata is read before the
// reassignments, from this broker's metadata cache, which trails the
// controller: when the controller completes a reassignment in between (the
// added replicas joined the ISR), Metadata still shows them out of it and the
// read lists no reassignment. The last refresh's reassignment then still
// explains them, for this refresh only (seen in TestReassignment: its alerts'
// condition held for a refresh at the end of a move).
func (s *Partition) setReassignment(rs, prev reassignments, missing []int32) {
	if rs == nil {
		return
	}
	s.ReassignmentKnown = true
	key := logparse.PartitionKey{Topic: s.Topic, Partition: s.Partition}
	r, ok := rs[key]
	if ok {
		s.Reassigning = true
		s.AddingReplicas, s.RemovingReplicas = int32(len(r.adding)), int32(len(r.removing))
	} else if r, ok = prev[key]; !ok {
		return
	}
	if !s.UnderReplicated() || len(missing) != s.Replicas-s.ISR {
		return
	}
	for _, m := range missing {
		if !slices.Contains(r.adding, m) {
			return
		}
	}
	s.UnderReplicatedByReassignment = true
}
