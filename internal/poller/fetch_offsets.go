package poller

import (
	"context"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
)

// A fetcher: the high watermark of every partition, from its leader, and the
// log end offset of every replica of the exported partitions, from the
// replica's broker.

// debugReplicaID is Kafka's DEBUGGING_REPLICA_ID: a ListOffsets request that
// carries it is answered by any replica, from its own log, without the
// isolation level, i.e. LATEST = that replica's log end offset.
const debugReplicaID = -2

// offsets are the HW and LEO answers of one refresh, by plan index rather
// than in maps keyed by partition, which made most of a large refresh's
// garbage.
type offsets struct {
	hwAt  []offsetAnswer // by plan.parts index
	leoAt []offsetAnswer // by LEO slot (plannedPartition.leoSlot)
}

// fetchOffsets sends one goroutine per broker (HW, then LEO on the same
// connection), so a broker that does not answer delays nobody else. Each
// answer is copied into the plan-indexed slices as it arrives and sarama's
// response dropped, so no more than one decoded response per broker is live
// at a time; the brokers write disjoint elements (a partition's HW comes
// from its leader only, and each replica has its own LEO slot), so no lock
// guards them.
func fetchOffsets(ctx context.Context, r *round, p *refreshPlan) offsets {
	got := offsets{
		hwAt:  make([]offsetAnswer, len(p.parts)),
		leoAt: make([]offsetAnswer, p.leoSlots),
	}
	ids := make(map[int32]struct{})
	for id := range p.hwByBroker {
		ids[id] = struct{}{}
	}
	for id := range p.leoByBroker {
		ids[id] = struct{}{}
	}
	var wg sync.WaitGroup
	for id := range ids {
		addr := r.brokers[id]
		wg.Go(func() {
			ctx, cancel := r.deadline(ctx, id)
			defer cancel()
			if idx := p.hwByBroker[id]; len(idx) > 0 {
				err := r.pool.listOffsetsLatest(ctx, addr, -1, p.parts, idx, func(i int32, ans offsetAnswer) {
					got.hwAt[i] = ans
				}, r.unusableAnswer(RequestListOffsets))
				r.record(id, err == nil)
				if err != nil {
					// Likely a dead broker: do not spend a second
					// timeout on its LEO request.
					r.fail(RequestListOffsets, id, err)
					return
				}
			}
			if idx := p.leoByBroker[id]; len(idx) > 0 {
				err := r.pool.listOffsetsLatest(ctx, addr, debugReplicaID, p.parts, idx, func(i int32, ans offsetAnswer) {
					if slot := p.parts[i].leoSlot(id); slot >= 0 {
						got.leoAt[slot] = ans
					}
				}, r.unusableAnswer(RequestListOffsetsLEO))
				r.record(id, err == nil)
				if err != nil {
					r.fail(RequestListOffsetsLEO, id, err)
				}
			}
		})
	}
	wg.Wait()
	return got
}

// offsetAnswer is one partition's answer to a ListOffsets LATEST.
type offsetAnswer struct {
	offset      int64
	leaderEpoch int32
	ok          bool // answered without error
}

// listOffsetsLatest sends one ListOffsets LATEST to addr for the partitions
// parts[i] of idx, and hands each answer to put(i, answer) before returning:
// the decoded response is garbage by then. With replicaID -1 (a consumer,
// read_uncommitted) the leader answers its high watermark; with
// debugReplicaID the broker answers its own log end offset. Partitions
// answered with an error (or not at all) are not put but told to miss.
func (p *brokerPool) listOffsetsLatest(ctx context.Context, addr string, replicaID int32, parts []plannedPartition, idx []int32,
	put func(i int32, ans offsetAnswer), miss func(Unusable),
) error {
	req := sarama.NewOffsetRequest(p.conf.Version)
	if replicaID != -1 {
		req.SetReplicaID(replicaID)
	}
	req.IsolationLevel = sarama.ReadUncommitted
	for _, i := range idx {
		k := &parts[i].key
		req.AddBlock(k.Topic, k.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
	if err != nil {
		return fmt.Errorf("list offsets from %s: %w", addr, err)
	}
	putOffsets(resp, parts, idx, put, miss)
	return nil
}

// putOffsets hands each partition's answer in resp to put, and tells miss
// why a partition's answer could not be used.
func putOffsets(resp *sarama.OffsetResponse, parts []plannedPartition, idx []int32, put func(i int32, ans offsetAnswer), miss func(Unusable)) {
	for _, i := range idx {
		k := &parts[i].key
		switch blk := resp.GetBlock(k.Topic, k.Partition); {
		case blk == nil:
			miss(UnusableMissing)
		case blk.Err == sarama.ErrTopicAuthorizationFailed:
			miss(UnusableAuthorization)
		case blk.Err != sarama.ErrNoError:
			miss(UnusableError)
		default:
			put(i, offsetAnswer{offset: blk.Offset, leaderEpoch: blk.LeaderEpoch, ok: true})
		}
	}
}
