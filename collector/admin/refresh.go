package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin/elr"
)

// One refresh, the stages in order: Metadata (metadata.go), which the log
// store is told of; the plan (plan.go); the fetchers (fetch.go); the
// snapshot (build.go).

// refresher is the state one refresh hands to the next. Only the refresh
// goroutine uses it.
type refresher struct {
	cfg    *Config
	filter func(topic string) bool // nil = every topic
	logger *slog.Logger
	now    func() time.Time // tests inject a clock

	pool     *brokerPool
	elr      *elr.Reader      // nil: ELR is not read (fetch_elr.go)
	groups   *groupCollector  // nil: consumer groups are not read (fetch_groups.go)
	brokers  map[int32]string // advertised addresses, from the last Metadata
	brokerID int32            // configured or detected; -1 = unknown
	noIDWarn bool
	build    builder
	errors   [NumRequests]uint64 // failed requests since start
}

// refresh runs one poll cycle and returns the snapshot to publish after
// last. It takes at most the refresh budget: what has not answered by then
// is left out of the snapshot.
func (f *refresher) refresh(ctx context.Context, last *Snapshot) *Snapshot {
	started := time.Now()
	if f.pool == nil {
		return f.failed(last, started, nil)
	}
	ctx, cancel := context.WithTimeout(ctx, f.budget())
	defer cancel()
	r := newRound(f.pool, f.brokers, last.Brokers, f.probeBudget(), f.logger)
	defer func() {
		for i, n := range r.errors {
			f.errors[i] += n
		}
	}()

	md, err := r.askMetadata(ctx, metadataCandidates(f.brokers, f.brokerID, f.cfg.Servers), f.budget()/2)
	if err != nil {
		f.logger.Warn("Kafka metadata refresh failed, up=0", "err", err)
		return f.failed(last, started, r.statuses())
	}
	mdAt := f.now()
	f.brokers = advertised(md)
	r.brokers = f.brokers
	f.detectBrokerID()
	f.build.join.retain(existing(md, f.brokerID))

	p := plan(md, f.brokers, f.brokerID, f.cfg.Scope == ScopeCluster, f.filter)
	got := fetch(ctx, r, &p, f.elr, f.groups, f.cfg.Groups.LastStableOffset)
	snap := f.build.build(&p, got, mdAt, f.now())
	snap.Up = true
	snap.LastSuccess = mdAt
	snap.Brokers = r.statuses()
	snap.Duration = time.Since(started)
	return snap
}

// budget is how long one refresh may wait for Kafka: never longer than a
// request timeout, and never into the next refresh's turn.
func (f *refresher) budget() time.Duration {
	return min(f.cfg.RequestTimeout, f.cfg.RefreshInterval)
}

// probeBudget is how long a refresh waits for a broker that did not answer
// the last one; once it answers within that, it gets the whole budget again.
func (f *refresher) probeBudget() time.Duration {
	return max(f.budget()/5, time.Second)
}

// staleAfter is how long the partition series outlive the last successful
// refresh: a few missed refreshes are a blip, more mean this sidecar's view
// is stale while other sidecars export the same partitions afresh.
func (f *refresher) staleAfter() time.Duration {
	return max(3*f.cfg.RefreshInterval, 30*time.Second)
}

// failed is the snapshot after a refresh without metadata. The last
// partition series are kept for a grace period (up=0 and the refresh
// timestamp say how stale), then dropped.
func (f *refresher) failed(last *Snapshot, started time.Time, brokers []BrokerStatus) *Snapshot {
	next := *last
	next.Up = false
	next.Duration = time.Since(started)
	next.Brokers = brokers
	if len(next.Topics) > 0 && f.now().Sub(next.LastSuccess) >= f.staleAfter() {
		f.logger.Warn("No successful Kafka admin refresh for a while; dropping the partition series until one succeeds",
			"last_success", next.LastSuccess, "grace", f.staleAfter())
		next.Topics = nil
		next.Groups, next.StableOffsets = nil, nil // their partitions go with the topics
	}
	return &next
}

// detectBrokerID finds this sidecar's broker among the advertised ones,
// unless --kafka.broker-id named it.
func (f *refresher) detectBrokerID() {
	if f.cfg.BrokerID >= 0 {
		return
	}
	if id, ok := brokerAtServer(f.brokers, f.cfg.Servers); ok {
		if f.brokerID != id {
			f.logger.Info("Detected this sidecar's broker id", "broker", id, "address", f.brokers[id])
		}
		f.brokerID = id
		return
	}
	if f.cfg.Scope == ScopeLeader && !f.noIDWarn {
		f.noIDWarn = true
		f.logger.Warn("No --kafka.server matches an advertised broker address; set --kafka.broker-id. Leader-scoped partition series stay empty until then.")
	}
}
