package poller

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
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
	elr      *elr.Reader   // nil: ELR is not read (fetch_elr.go)
	quorum   *quorumReader // nil: the metadata quorum is not read (quorum.go)
	quorumW  quorumWatch
	groups   *groupCollector   // nil: consumer groups are not read (fetch_groups.go)
	tiering  *tieringReader    // nil: tiered storage is not read (fetch_tiering.go)
	shares   *shareGroupReader // nil: share groups are not read (fetch_share_groups.go)
	brokers  map[int32]string  // advertised addresses, from the last Metadata
	brokerID int32             // configured or detected; -1 = unknown
	idAddr   string            // the address brokerID was matched by; "" = not by address
	idWarned bool              // the WARN that it is unknown was logged
	lookup   lookupFunc        // host name resolution (whoami.go); tests inject one
	host     hostAddrs         // this host's addresses, read once
	// ownSilent: the last refresh did not reach this sidecar's broker;
	// rejoinAt: when it answers again, its partitions are exported from then.
	ownSilent bool
	rejoinAt  time.Time
	build     builder
	errors    [NumRequests]uint64 // failed requests since start
	// unusable counts the partitions of answers that could not be used since
	// start; unusableNow says which requests had some in the last refresh.
	unusable    [NumRequests][NumUnusable]uint64
	unusableNow [NumRequests]bool
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
		f.countUnusable(r)
	}()

	md, err := r.askMetadata(ctx, metadataCandidates(f.brokers, f.brokerID, f.cfg.Servers), f.budget()/2)
	if err != nil {
		f.logger.Warn("Kafka metadata refresh failed, up=0", "err", err)
		snap := f.failed(last, started, r.statuses())
		if f.ownBrokerSilent(r) {
			return f.dropOwn(snap)
		}
		return snap
	}
	mdAt := f.now()
	f.brokers = advertised(md)
	r.brokers = f.brokers
	// On the first refresh the answer could not be told by broker yet.
	r.recordAt(r.metadataAddr, true)
	f.detectBrokerID(ctx)
	f.build.join.retain(existing(md, f.brokerID))

	p := plan(md, f.brokers, f.brokerID, f.cfg.Scope == ScopeCluster, f.filter)
	if f.cfg.LogDirs {
		p.logDirBrokers = logDirBrokers(f.brokers, f.brokerID, f.cfg.Scope == ScopeCluster)
	}
	p.quorumBroker, p.quorumSpeaks = quorumSpeaker(f.brokers, f.brokerID, f.cfg.Scope == ScopeCluster)
	got := fetch(ctx, r, &p, f.elr, f.quorum, f.groups, f.cfg.Groups.LastStableOffset, f.tiering, f.shares)
	snap := f.build.build(&p, got, mdAt, f.now())
	snap.Quorum = f.quorumW.observe(got.quorum, f.brokers)
	snap.Up = true
	snap.LastSuccess = mdAt
	snap.Brokers = r.statuses()
	snap.Duration = time.Since(started)
	// Metadata may have come from a bootstrap server while this sidecar's
	// own broker is dead or frozen and still named leader.
	if f.ownBrokerSilent(r) {
		return f.dropOwn(snap)
	}
	if f.ownSilent {
		// The first answers after a freeze can come from the broker's
		// metadata image of before it (a SIGCONT'd broker answered as leader
		// of partitions moved away while it was stopped, until it caught up
		// with the controller): its partitions come back after rejoinHold.
		f.ownSilent = false
		f.rejoinAt = f.now().Add(f.rejoinHold())
		f.logger.Info("This sidecar's broker answers again; exporting its partitions once it has caught up", "broker", f.brokerID, "after", f.rejoinHold())
	}
	if f.now().Before(f.rejoinAt) {
		dropPartitions(snap)
	}
	return snap
}

// rejoinHold is how long a broker that answers again after a silence is
// not trusted to lead: two refreshes, and at least the few heartbeats a
// resumed broker takes to catch up with the controller's metadata.
func (f *refresher) rejoinHold() time.Duration {
	return max(2*f.cfg.RefreshInterval, 5*time.Second)
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
// timestamp say how stale), then dropped. The log directories go at once:
// no broker was asked, and an old "online" must not stand for an answer.
func (f *refresher) failed(last *Snapshot, started time.Time, brokers []BrokerStatus) *Snapshot {
	next := *last
	next.Up = false
	next.Duration = time.Since(started)
	next.Brokers = brokers
	// Without Metadata this sidecar cannot tell whether it speaks for the
	// cluster, and an old quorum is not the current one.
	next.Quorum = nil
	if next.LogDirs != nil {
		next.LogDirs = []LogDir{} // the read is on: none, rather than off
	}
	if len(next.Topics) > 0 && f.now().Sub(next.LastSuccess) >= f.staleAfter() {
		f.logger.Warn("No successful Kafka admin refresh for a while; dropping the partition series until one succeeds",
			"last_success", next.LastSuccess, "grace", f.staleAfter())
		next.Topics = nil
		next.Groups, next.StableOffsets = nil, nil // their partitions go with the topics
		next.ShareGroups = nil
	}
	return &next
}

// detectBrokerID finds this sidecar's broker among the advertised ones,
// unless --kafka.broker-id named it: the id its own log lines carry, else
// the broker advertised at a --kafka.server (whoami.go). The address match
// is made again only while it is unknown or when its address changed.
func (f *refresher) detectBrokerID(ctx context.Context) {
	if f.cfg.BrokerID >= 0 {
		return
	}
	if id, ok := f.build.join.logBroker(); ok {
		if _, advertised := f.brokers[id]; advertised {
			if f.brokerID != id {
				f.logger.Info("Detected this sidecar's broker id from its log lines", "broker", id, "address", f.brokers[id])
				if f.brokerID >= 0 {
					f.logger.Warn("This broker's log lines name another broker id than its --kafka.server address; the log lines win",
						"log_broker", id, "address_broker", f.brokerID)
				}
			}
			f.brokerID, f.idAddr, f.idWarned = id, "", false
			return
		}
	}
	if f.brokerID >= 0 && f.idAddr != "" && f.brokers[f.brokerID] == f.idAddr {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, max(f.budget()/4, 100*time.Millisecond))
	defer cancel()
	m := brokerAtServer(ctx, f.brokers, f.cfg.Servers, f.lookup, f.host)
	if m.id >= 0 {
		if f.brokerID != m.id {
			f.logger.Info("Detected this sidecar's broker id", "broker", m.id, "address", f.brokers[m.id], "server", strings.Join(f.cfg.Servers, ","), "match", m.how)
		}
		f.brokerID, f.idAddr, f.idWarned = m.id, f.brokers[m.id], false
		return
	}
	f.brokerID, f.idAddr = -1, ""
	if !f.idWarned {
		f.idWarned = true
		msg := "No --kafka.server matches an advertised broker address and the log lines name no broker; " +
			"set --kafka.broker-id. kafka_replication_broker_identified is 0"
		if f.cfg.Scope == ScopeLeader {
			msg += " and leader-scoped partition series stay empty until then"
		}
		f.logger.Warn(msg+".", "server", strings.Join(f.cfg.Servers, ","), "advertised", advertisedList(f.brokers), "matching_equally", m.ambiguous)
	}
}

// advertisedList renders the broker addresses as "id=host:port …", by id.
func advertisedList(brokers map[int32]string) string {
	ids := slices.Sorted(maps.Keys(brokers))
	var b strings.Builder
	for _, id := range ids {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d=%s", id, brokers[id])
	}
	return b.String()
}

// ownBrokerSilent reports whether, in leader scope, this sidecar's broker
// answered nothing this refresh: it then cannot be leading anything
// current, and the new leaders' sidecars export its partitions.
func (f *refresher) ownBrokerSilent(r *round) bool {
	return f.cfg.Scope == ScopeLeader && f.brokerID >= 0 && !r.reachedBroker(f.brokerID)
}

// dropOwn is snap without its partition series, for a refresh in which this
// sidecar's own broker did not answer (leader scope), and the next one; the
// WARN comes once per outage.
func (f *refresher) dropOwn(snap *Snapshot) *Snapshot {
	if !f.ownSilent {
		f.ownSilent = true
		f.logger.Warn("This sidecar's broker did not answer; dropping its leader-scope partition series until it does",
			"broker", f.brokerID, "address", f.brokers[f.brokerID])
	}
	dropPartitions(snap)
	return snap
}

// dropPartitions takes every partition series out of snap: the partitions,
// their LSOs and the consumer groups' positions on them (a group's state and
// members stay: they come from its coordinator). The groups are copied
// first: after a failed refresh they are the published snapshot's, which
// scrapes may be reading.
func dropPartitions(snap *Snapshot) {
	snap.Topics, snap.StableOffsets = nil, nil
	snap.Groups = withoutPositions(snap.Groups)
	snap.ShareGroups = withoutPositions(snap.ShareGroups)
}

// withoutPositions is a copy of groups without their partitions; nil stays
// nil (the read off).
func withoutPositions(groups []ConsumerGroup) []ConsumerGroup {
	groups = slices.Clone(groups)
	for i := range groups {
		groups[i].Partitions = nil
	}
	return groups
}

// countUnusable adds the round's unusable partition answers to the totals and
// logs, once per change, that a request's answers left partitions out: their
// HW, LEO or LSO series are absent until it stops.
func (f *refresher) countUnusable(r *round) {
	for kind := range NumRequests {
		n, by := uint64(0), make([]any, 0, 2*int(NumUnusable))
		for why, c := range r.unusable[kind] {
			f.unusable[kind][why] += c
			if n += c; c > 0 {
				by = append(by, Unusable(why).String(), c)
			}
		}
		if !r.asked[kind] || n == 0 && r.errors[kind] > 0 {
			continue // not asked, or not answered: the state is unchanged
		}
		switch now := n > 0; {
		case now && !f.unusableNow[kind]:
			f.logger.Warn("Kafka answered some partitions with an error or left them out; their series are absent until it answers them",
				append([]any{"request", kind.String(), "partitions", n}, by...)...)
		case !now && f.unusableNow[kind]:
			f.logger.Info("Kafka answers every partition again", "request", kind.String())
		}
		f.unusableNow[kind] = n > 0
	}
}
