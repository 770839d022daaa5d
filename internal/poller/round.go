package poller

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// round is one refresh's dealings with the brokers, shared by its stages
// (metadata.go, then the fetchers): whom to ask, and what came of asking.
// Its methods may be called from the fetchers' goroutines.
type round struct {
	pool   *brokerPool
	logger *slog.Logger
	// brokers are the advertised addresses: the last refresh's while
	// Metadata is asked, this refresh's from then on.
	brokers map[int32]string
	// metadataAddr is the address that answered Metadata: DescribeConfigs
	// and ListPartitionReassignments go there too.
	metadataAddr string
	// slow are the brokers that left a request of the last refresh
	// unanswered; probe is how long this round waits for them, and for
	// the answer to each consumer-group request (fetch_groups.go).
	slow  map[int32]bool
	probe time.Duration

	mu       sync.Mutex
	answered map[int32]bool      // by broker id: every request answered in time
	reached  map[int32]bool      // by broker id: some request answered
	errors   [NumRequests]uint64 // failed requests
	// unusable counts the partitions of answers that could not be used
	// (an error for the partition, or left out), by request and why.
	unusable [NumRequests][NumUnusable]uint64
	asked    [NumRequests]bool // requests sent whose answers count unusable partitions
}

func newRound(pool *brokerPool, brokers map[int32]string, last []BrokerStatus, probe time.Duration, logger *slog.Logger) *round {
	r := &round{
		pool: pool, logger: logger, brokers: brokers, slow: make(map[int32]bool), probe: probe,
		answered: make(map[int32]bool), reached: make(map[int32]bool),
	}
	for _, b := range last {
		if !b.Responsive {
			r.slow[b.ID] = true
		}
	}
	return r
}

// record notes whether broker id answered a request in time.
func (r *round) record(id int32, answered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, seen := r.answered[id]
	r.answered[id] = answered && (prev || !seen)
	if answered {
		r.reached[id] = true
	}
}

// reachedBroker reports whether broker id answered some request this round.
func (r *round) reachedBroker(id int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reached[id]
}

// recordAt is record for the broker advertised at addr, if it is known.
func (r *round) recordAt(addr string, answered bool) {
	if id, ok := r.brokerAt(addr); ok {
		r.record(id, answered)
	}
}

// fail counts a failed request of kind to broker (-1: not one broker's).
func (r *round) fail(kind Request, broker int32, err error) {
	r.mu.Lock()
	r.errors[kind]++
	r.mu.Unlock()
	r.logger.Debug("Kafka admin request failed", "request", kind.String(), "broker", broker, "err", err)
}

// unusableAnswer returns the function that counts a partition of a kind
// request's answer that could not be used.
func (r *round) unusableAnswer(kind Request) func(Unusable) {
	r.mu.Lock()
	r.asked[kind] = true
	r.mu.Unlock()
	return func(why Unusable) {
		r.mu.Lock()
		r.unusable[kind][why]++
		r.mu.Unlock()
	}
}

// deadline bounds a request to broker id: a broker that did not answer last
// time is probed briefly, so that a frozen broker does not hold every
// refresh to the deadline.
func (r *round) deadline(ctx context.Context, id int32) (context.Context, context.CancelFunc) {
	if r.slow[id] {
		return context.WithTimeout(ctx, r.probe)
	}
	return ctx, func() {}
}

// brokerAt returns the id of the broker advertised at addr, if known.
func (r *round) brokerAt(addr string) (int32, bool) {
	for id, at := range r.brokers {
		if strings.EqualFold(at, addr) {
			return id, true
		}
	}
	return -1, false
}

// statuses lists every broker asked this round, sorted by id.
func (r *round) statuses() []BrokerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]BrokerStatus, 0, len(r.answered))
	for id, ok := range r.answered {
		out = append(out, BrokerStatus{ID: id, Responsive: ok})
	}
	slices.SortFunc(out, func(x, y BrokerStatus) int { return cmp.Compare(x.ID, y.ID) })
	return out
}
