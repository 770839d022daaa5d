package poller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// The first stage of a refresh: Metadata, which says what exists, who leads
// it and where the brokers are. Without it there is nothing to plan.

// metadata asks addr for every topic, never creating one.
func (p *brokerPool) metadata(ctx context.Context, addr string) (*sarama.MetadataResponse, error) {
	req := sarama.NewMetadataRequest(p.conf.Version, nil) // nil = all topics
	req.AllowAutoTopicCreation = false
	resp, err := call(ctx, p, addr, func(b *sarama.Broker) (*sarama.MetadataResponse, error) { return b.GetMetadata(req) })
	if err != nil {
		return nil, fmt.Errorf("metadata from %s: %w", addr, err)
	}
	return resp, nil
}

// askMetadata asks candidates (this sidecar's own broker first: its
// metadata image is what its logs describe, then each bootstrap server). A
// candidate that has not answered within hedge is not waited for: the next
// one is asked beside it and the first answer wins, so a frozen own broker
// leaves the rest of the budget to the fetchers. It sets r.metadataAddr.
func (r *round) askMetadata(ctx context.Context, candidates []string, hedge time.Duration) (*sarama.MetadataResponse, error) {
	type answer struct {
		md   *sarama.MetadataResponse
		addr string
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make(chan answer, len(candidates))
	next, pending := 0, 0
	ask := func() {
		addr := candidates[next]
		next++
		pending++
		go func() {
			md, err := r.pool.metadata(ctx, addr)
			answers <- answer{md, addr, err}
		}()
	}
	timer := time.NewTimer(hedge)
	defer timer.Stop()
	var errs []error
	for next < len(candidates) || pending > 0 {
		if pending == 0 {
			ask()
			timer.Reset(hedge)
		}
		select {
		case ans := <-answers:
			pending--
			r.recordAt(ans.addr, ans.err == nil)
			if ans.err == nil {
				for _, addr := range candidates[:next] {
					if addr != ans.addr {
						r.recordAt(addr, false) // still asking, or failed
					}
				}
				// The candidates still asking give up at once and close
				// their connections; waiting for that keeps the fetchers'
				// requests off a connection about to be closed.
				cancel()
				for ; pending > 0; pending-- {
					<-answers
				}
				r.metadataAddr = ans.addr
				return ans.md, nil
			}
			r.mu.Lock()
			r.errors[RequestMetadata]++
			r.mu.Unlock()
			errs = append(errs, ans.err)
		case <-timer.C:
			if next < len(candidates) {
				ask()
				timer.Reset(hedge)
			}
		}
	}
	return nil, errors.Join(errs...)
}

// metadataCandidates are the addresses to ask Metadata of, in order: the
// broker's own (when known), then the bootstrap servers.
func metadataCandidates(brokers map[int32]string, brokerID int32, servers []string) []string {
	var candidates []string
	if addr, ok := brokers[brokerID]; ok && brokerID >= 0 {
		candidates = append(candidates, addr)
	}
	for _, s := range servers {
		if !slices.Contains(candidates, s) {
			candidates = append(candidates, s)
		}
	}
	return candidates
}

// advertised returns the broker addresses of a Metadata answer, by id.
func advertised(md *sarama.MetadataResponse) map[int32]string {
	brokers := make(map[int32]string, len(md.Brokers))
	for _, b := range md.Brokers {
		brokers[b.ID()] = b.Addr()
	}
	return brokers
}

// existing returns which topics a Metadata answer lists and which
// partitions broker id hosts (is a replica of); hosted is nil when id < 0.
func existing(md *sarama.MetadataResponse, id int32) (exists func(string) bool, hosted func(logparse.PartitionKey) bool) {
	topics := make(map[string]struct{}, len(md.Topics))
	var here map[logparse.PartitionKey]struct{}
	if id >= 0 {
		here = make(map[logparse.PartitionKey]struct{})
	}
	for _, t := range md.Topics {
		if t == nil || t.Err != sarama.ErrNoError {
			continue
		}
		topics[t.Name] = struct{}{}
		for _, pm := range t.Partitions {
			if pm != nil && here != nil && slices.Contains(pm.Replicas, id) {
				here[logparse.PartitionKey{Topic: t.Name, Partition: pm.ID}] = struct{}{}
			}
		}
	}
	exists = func(topic string) bool { _, ok := topics[topic]; return ok }
	if here != nil {
		hosted = func(k logparse.PartitionKey) bool { _, ok := here[k]; return ok }
	}
	return exists, hosted
}
