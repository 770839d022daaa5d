package poller

import (
	"context"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
)

// A fetcher, opt-in (--collector.last-stable-offset): the last stable
// offset of every exported partition, from its leader. read_committed
// consumers (Kafka Streams, exactly-once pipelines) read only up to the
// LSO, so a transaction left open holds them back while the HW moves on.
// One ListOffsets LATEST with isolation level READ_COMMITTED per leader of
// an exported partition.

// fetchLSO reads the LSO of the exported partitions, by plan index; nil
// when the read is off: no request at all.
func fetchLSO(ctx context.Context, r *round, p *refreshPlan, enabled bool) []offsetAnswer {
	if !enabled || p.exported == 0 {
		return nil
	}
	got := make([]offsetAnswer, len(p.parts))
	var wg sync.WaitGroup
	for id, led := range p.hwByBroker {
		idx := make([]int32, 0, len(led))
		for _, i := range led {
			if p.parts[i].export {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		addr := r.brokers[id]
		wg.Go(func() {
			ctx, cancel := r.deadline(ctx, id)
			defer cancel()
			// The brokers write disjoint elements: a partition's LSO comes
			// from its leader only.
			err := r.pool.listStableOffsets(ctx, addr, p.parts, idx, func(i int32, ans offsetAnswer) { got[i] = ans },
				r.unusableAnswer(RequestListOffsetsLSO))
			r.record(id, err == nil)
			if err != nil {
				r.fail(RequestListOffsetsLSO, id, err)
			}
		})
	}
	wg.Wait()
	return got
}

// listStableOffsets sends one ListOffsets LATEST, read_committed, to addr
// for the partitions parts[i] of idx: the leader answers each one's LSO.
func (p *brokerPool) listStableOffsets(ctx context.Context, addr string, parts []plannedPartition, idx []int32,
	put func(i int32, ans offsetAnswer), miss func(Unusable),
) error {
	req := sarama.NewOffsetRequest(p.conf.Version)
	req.IsolationLevel = sarama.ReadCommitted
	if req.Version < 2 {
		req.Version = 2 // the first version with an isolation level
	}
	for _, i := range idx {
		k := &parts[i].key
		req.AddBlock(k.Topic, k.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.OffsetResponse, error) { return b.GetAvailableOffsets(req) })
	if err != nil {
		return fmt.Errorf("list stable offsets from %s: %w", addr, err)
	}
	putOffsets(resp, parts, idx, put, miss)
	return nil
}
