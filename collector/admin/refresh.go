package admin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin/elr"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// One refresh costs O(brokers) requests, never O(partitions):
//
//	1 Metadata (all topics, asked of this sidecar's own broker when known;
//	   one more, to a bootstrap server, when that broker is silent for half
//	   the refresh's time)
//	1 DescribeConfigs (min.insync.replicas of every exported topic, batched)
//	≤1 ListOffsets LATEST per leader broker (HW of every partition it leads)
//	≤1 ListOffsets LATEST with replica id -2 per replica broker (its LEO of
//	   every exported partition it hosts)
//	1 ListPartitionReassignments (the exported partitions, named)
//	1 ApiVersions and 1 DescribeTopicPartitions per 2000 described partitions
//	   (ELR of the exported topics; elr_fetch.go)
//
// HW is read for every partition, not only exported ones, so that the HW
// history survives a leadership move: a regression is most likely exactly
// when the leader changes.

// plannedPartition is one partition of the Metadata answer that passed the
// topic filter.
type plannedPartition struct {
	key      logparse.PartitionKey
	topicID  [16]byte
	replicas []int32
	leader   int32
	epoch    int32
	isr      int32 // ISR size: the ISR and offline replica lists are read by plan only
	export   bool
	// leoBase is the first of this partition's LEO answer slots, one per
	// entry of replicas (fetched.leoAt); -1 when it is not exported.
	leoBase int32
}

// leoSlot is the slot of replica r's LEO answer, -1 when there is none.
// A replica listed twice answers in its first slot.
func (pp *plannedPartition) leoSlot(r int32) int {
	if pp.leoBase < 0 {
		return -1
	}
	j := slices.Index(pp.replicas, r)
	if j < 0 {
		return -1
	}
	return int(pp.leoBase) + j
}

// refreshPlan is what to ask whom. The per-broker lists hold indexes into
// parts.
type refreshPlan struct {
	parts        []plannedPartition
	hwByBroker   map[int32][]int32
	leoByBroker  map[int32][]int32
	leoSlots     int // LEO answer slots of the exported partitions
	exported     int
	configTopics []string
	controller   int32             // the controller Metadata named, for ListPartitionReassignments
	outOfISR     map[int32][]int32 // replicas missing from the ISR of exported partitions, by parts index
}

// fetched is what the per-broker requests returned, by plan index rather
// than in maps keyed by partition, which made most of a large refresh's garbage.
type fetched struct {
	hwAt   []offsetAnswer // by plan.parts index
	leoAt  []offsetAnswer // by LEO slot (plannedPartition.leoSlot)
	minISR map[string]int // nil when DescribeConfigs failed

	elr      *elr.Result   // nil: no ELR series this refresh (elr_fetch.go)
	reassign reassignments // nil when ListPartitionReassignments failed
}

// refresh runs one poll cycle and publishes a new snapshot. It is only ever
// called from one goroutine at a time. It takes at most the refresh budget:
// what has not answered by then is left out of the snapshot.
func (a *Poller) refresh(ctx context.Context) {
	started := time.Now()
	defer a.ready.Store(true)
	a.gen++
	if a.pool == nil {
		a.publishFailure(started, nil)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, a.refreshBudget())
	defer cancel()
	asked := &brokerAnswers{byID: make(map[int32]bool)}

	md, mdAddr, err := a.fetchMetadata(ctx, asked)
	if err != nil {
		a.logger.Warn("Kafka metadata refresh failed, up=0", "err", err)
		a.publishFailure(started, asked.list())
		return
	}
	mdAt := a.now()
	a.brokers = make(map[int32]string, len(md.Brokers))
	for _, b := range md.Brokers {
		a.brokers[b.ID()] = b.Addr()
	}
	a.detectBrokerID()
	if a.opts.OnMetadata != nil {
		a.reportMetadata(md)
	}

	plan := a.plan(md)
	got := a.fetch(ctx, &plan, mdAddr, asked)
	if got.minISR != nil {
		for t, v := range got.minISR {
			a.minISR[t] = v
		}
	}
	snap := a.build(plan, got, mdAt)
	a.tracker.forget(a.gen)
	snap.Up = true
	snap.LastSuccess = mdAt
	snap.Brokers = asked.list()
	snap.Duration = time.Since(started)
	a.publishCounts(snap)
	a.snap.Store(snap)
}

// refreshBudget is how long one refresh may wait for Kafka: never longer
// than a request timeout, and never into the next refresh's turn.
func (a *Poller) refreshBudget() time.Duration {
	return min(a.cfg.RequestTimeout, a.cfg.RefreshInterval)
}

// probeBudget is how long a refresh waits for a broker that did not answer
// the last one; once it answers within that, it gets the whole budget again.
func (a *Poller) probeBudget() time.Duration {
	return max(a.refreshBudget()/5, time.Second)
}

// staleAfter is how long the partition series outlive the last successful
// refresh: a few missed refreshes are a blip, more mean this sidecar's view
// is stale while other sidecars export the same partitions afresh.
func (a *Poller) staleAfter() time.Duration {
	return max(3*a.cfg.RefreshInterval, 30*time.Second)
}

// reportMetadata tells OnMetadata which topics exist and which partitions
// this sidecar's broker hosts (is a replica of).
func (a *Poller) reportMetadata(md *sarama.MetadataResponse) {
	exists := make(map[string]struct{}, len(md.Topics))
	var hosted map[logparse.PartitionKey]struct{}
	if a.brokerID >= 0 {
		hosted = make(map[logparse.PartitionKey]struct{})
	}
	for _, t := range md.Topics {
		if t == nil || t.Err != sarama.ErrNoError {
			continue
		}
		exists[t.Name] = struct{}{}
		for _, pm := range t.Partitions {
			if pm != nil && hosted != nil && slices.Contains(pm.Replicas, a.brokerID) {
				hosted[logparse.PartitionKey{Topic: t.Name, Partition: pm.ID}] = struct{}{}
			}
		}
	}
	var hostedFn func(string, int32) bool
	if hosted != nil {
		hostedFn = func(topic string, partition int32) bool {
			_, ok := hosted[logparse.PartitionKey{Topic: topic, Partition: partition}]
			return ok
		}
	}
	a.opts.OnMetadata(func(topic string) bool { _, ok := exists[topic]; return ok }, hostedFn)
}

// publishFailure reports a refresh without metadata. The last partition
// series are kept for a grace period (up=0 and the refresh timestamp say how
// stale), then dropped.
func (a *Poller) publishFailure(started time.Time, brokers []BrokerStatus) {
	next := *a.snap.Load()
	next.Up = false
	next.Duration = time.Since(started)
	next.Brokers = brokers
	if len(next.Topics) > 0 && a.now().Sub(next.LastSuccess) >= a.staleAfter() {
		a.logger.Warn("No successful Kafka admin refresh for a while; dropping the partition series until one succeeds",
			"last_success", next.LastSuccess, "grace", a.staleAfter())
		next.Topics = nil
	}
	a.publishCounts(&next)
	a.snap.Store(&next)
}

// publishCounts copies the poller's counters into a snapshot about to be published.
func (a *Poller) publishCounts(s *Snapshot) {
	s.RequestErrors = a.counts.requestErrors
	s.Disagreements = a.counts.disagreements
}

// fetchMetadata asks this sidecar's own broker first (its metadata image is
// what its logs describe), then each bootstrap server. A candidate that has
// not answered within half the budget is not waited for: the next one is
// asked beside it and the first answer wins, so a frozen own broker leaves
// the other half of the budget to the offset requests.
func (a *Poller) fetchMetadata(ctx context.Context, asked *brokerAnswers) (*sarama.MetadataResponse, string, error) {
	var candidates []string
	if addr, ok := a.brokers[a.brokerID]; ok && a.brokerID >= 0 {
		candidates = append(candidates, addr)
	}
	for _, s := range a.cfg.Servers {
		if !slices.Contains(candidates, s) {
			candidates = append(candidates, s)
		}
	}
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
			md, err := a.pool.metadata(ctx, addr)
			answers <- answer{md, addr, err}
		}()
	}
	hedge := time.NewTimer(a.refreshBudget() / 2)
	defer hedge.Stop()
	var errs []error
	for next < len(candidates) || pending > 0 {
		if pending == 0 {
			ask()
			hedge.Reset(a.refreshBudget() / 2)
		}
		select {
		case ans := <-answers:
			pending--
			if id, known := a.brokerAt(ans.addr); known {
				asked.record(id, ans.err == nil)
			}
			if ans.err == nil {
				for _, addr := range candidates[:next] {
					if id, known := a.brokerAt(addr); known && addr != ans.addr {
						asked.record(id, false) // still asking, or failed
					}
				}
				// The candidates still asking give up at once and close
				// their connections; waiting for that keeps the offset
				// requests off a connection about to be closed.
				cancel()
				for ; pending > 0; pending-- {
					<-answers
				}
				return ans.md, ans.addr, nil
			}
			a.counts.requestErrors[RequestMetadata]++
			errs = append(errs, ans.err)
		case <-hedge.C:
			if next < len(candidates) {
				ask()
				hedge.Reset(a.refreshBudget() / 2)
			}
		}
	}
	return nil, "", errors.Join(errs...)
}

// detectBrokerID finds this sidecar's broker by matching a --kafka.server
// address to the advertised broker addresses.
func (a *Poller) detectBrokerID() {
	if a.cfg.BrokerID >= 0 {
		return
	}
	for id, addr := range a.brokers {
		for _, s := range a.cfg.Servers {
			if strings.EqualFold(addr, s) {
				if a.brokerID != id {
					a.logger.Info("Detected this sidecar's broker id", "broker", id, "address", addr)
				}
				a.brokerID = id
				return
			}
		}
	}
	if a.cfg.Scope == ScopeLeader && !a.noIDWarn {
		a.noIDWarn = true
		a.logger.Warn("No --kafka.server matches an advertised broker address; set --kafka.broker-id. Leader-scoped partition series stay empty until then.")
	}
}

// plan applies the topic filter and the scope, and groups the offset
// requests by broker.
func (a *Poller) plan(md *sarama.MetadataResponse) refreshPlan {
	total := 0
	for _, t := range md.Topics {
		if t != nil {
			total += len(t.Partitions)
		}
	}
	// Sized up front: at 100k partitions, growing these by doubling was
	// most of a refresh's garbage.
	p := refreshPlan{
		parts:       make([]plannedPartition, 0, total),
		hwByBroker:  make(map[int32][]int32, len(a.brokers)),
		leoByBroker: make(map[int32][]int32, len(a.brokers)),
		controller:  md.ControllerID,
		outOfISR:    make(map[int32][]int32),
	}
	perBroker := total/max(len(a.brokers), 1) + 1
	for id := range a.brokers {
		p.hwByBroker[id] = make([]int32, 0, perBroker)
	}
	// Offline partitions are exported by exactly one sidecar: the one of the
	// lowest live broker id.
	lowest := int32(-1)
	for id := range a.brokers {
		if lowest < 0 || id < lowest {
			lowest = id
		}
	}
	cluster := a.cfg.Scope == ScopeCluster
	for _, t := range md.Topics {
		if t == nil || t.Err != sarama.ErrNoError && len(t.Partitions) == 0 {
			continue
		}
		if a.opts.TopicFilter != nil && !a.opts.TopicFilter(t.Name) {
			continue
		}
		exportedTopic := false
		for _, pm := range t.Partitions {
			if pm == nil {
				continue
			}
			pp := plannedPartition{
				key:      logparse.PartitionKey{Topic: t.Name, Partition: pm.ID},
				topicID:  t.Uuid,
				leader:   pm.Leader,
				epoch:    pm.LeaderEpoch,
				replicas: pm.Replicas,
				isr:      int32(len(pm.Isr)),
				leoBase:  -1,
			}
			idx := int32(len(p.parts))
			_, leaderLive := a.brokers[pm.Leader]
			online := pm.Leader >= 0 && leaderLive
			switch {
			case cluster:
				pp.export = true
			case online:
				pp.export = a.brokerID >= 0 && pm.Leader == a.brokerID
			default:
				pp.export = a.brokerID >= 0 && a.brokerID == lowest
			}
			if online {
				p.hwByBroker[pm.Leader] = append(p.hwByBroker[pm.Leader], idx)
			}
			if pp.export {
				exportedTopic = true
				p.exported++
				pp.leoBase = int32(p.leoSlots)
				p.leoSlots += len(pm.Replicas)
				if missing := outOfISR(pm.Replicas, pm.Isr); missing != nil {
					p.outOfISR[idx] = missing
				}
				if online {
					for _, r := range pm.Replicas {
						if _, live := a.brokers[r]; live && !slices.Contains(pm.OfflineReplicas, r) {
							if p.leoByBroker[r] == nil {
								p.leoByBroker[r] = make([]int32, 0, perBroker*len(pm.Replicas))
							}
							p.leoByBroker[r] = append(p.leoByBroker[r], idx)
						}
					}
				}
			}
			p.parts = append(p.parts, pp)
		}
		if exportedTopic {
			p.configTopics = append(p.configTopics, t.Name)
		}
	}
	return p
}

// fetch sends the plan's requests concurrently: one goroutine per broker
// (HW then LEO on the same connection) plus one for DescribeConfigs, so a
// broker that does not answer delays nobody else. Every request gives up
// when ctx is done, and what had not answered by then is left unknown. Each
// answer is copied into the plan-indexed slices as it arrives and sarama's
// response dropped, so no more than one decoded response per broker is live
// at a time; the brokers write disjoint elements (a partition's HW comes
// from its leader only, and each replica has its own LEO slot), so no lock
// guards them.
func (a *Poller) fetch(ctx context.Context, p *refreshPlan, configAddr string, asked *brokerAnswers) fetched {
	got := fetched{
		hwAt:  make([]offsetAnswer, len(p.parts)),
		leoAt: make([]offsetAnswer, p.leoSlots),
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	fail := func(kind Request, broker int32, err error) {
		mu.Lock()
		a.counts.requestErrors[kind]++
		mu.Unlock()
		a.logger.Debug("Kafka admin request failed", "request", kind.String(), "broker", broker, "err", err)
	}
	ids := make(map[int32]struct{})
	for id := range p.hwByBroker {
		ids[id] = struct{}{}
	}
	for id := range p.leoByBroker {
		ids[id] = struct{}{}
	}
	for id := range ids {
		addr := a.brokers[id]
		wg.Go(func() {
			ctx := ctx
			if a.unresponsive(id) {
				// It did not answer last time: probe it briefly, so that a
				// frozen broker does not hold every refresh to the deadline.
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, a.probeBudget())
				defer cancel()
			}
			if idx := p.hwByBroker[id]; len(idx) > 0 {
				err := a.pool.listOffsetsLatest(ctx, addr, -1, p.parts, idx, func(i int32, ans offsetAnswer) {
					got.hwAt[i] = ans
				})
				asked.record(id, err == nil)
				if err != nil {
					// Likely a dead broker: do not spend a second
					// timeout on its LEO request.
					fail(RequestListOffsets, id, err)
					return
				}
			}
			if idx := p.leoByBroker[id]; len(idx) > 0 {
				err := a.pool.listOffsetsLatest(ctx, addr, debugReplicaID, p.parts, idx, func(i int32, ans offsetAnswer) {
					if slot := p.parts[i].leoSlot(id); slot >= 0 {
						got.leoAt[slot] = ans
					}
				})
				asked.record(id, err == nil)
				if err != nil {
					fail(RequestListOffsetsLEO, id, err)
					return
				}
			}
		})
	}
	// The ELR and reassignment reads run beside the others, bounded by
	// the same deadline.
	wg.Go(func() { got.elr = a.readELR(ctx, p, fail) })
	if p.exported > 0 {
		wg.Go(func() { got.reassign = a.readReassignments(ctx, p, configAddr, fail) })
	}
	if len(p.configTopics) > 0 {
		wg.Go(func() {
			m, err := a.pool.describeMinISR(ctx, configAddr, p.configTopics)
			if id, known := a.brokerAt(configAddr); known {
				asked.record(id, err == nil)
			}
			if err != nil {
				fail(RequestDescribeConfigs, -1, err)
				return
			}
			mu.Lock()
			got.minISR = m
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}
