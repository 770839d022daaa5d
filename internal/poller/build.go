package poller

import (
	"cmp"
	"encoding/base64"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// The last stage of a refresh: the snapshot, built from the plan and the
// fetchers' answers, joined with the HW history (track.go) and the log
// store (logstore.go).

// builder keeps what outlives one refresh's snapshot: the HW history, the
// join with the log store, the min ISR last read of each topic and the
// disagreements counted. Only the refresh goroutine uses it.
type builder struct {
	tracker       *hwTracker
	join          *sourceJoin
	minISR        minISRState // minisr.go
	leaderScope   bool
	logger        *slog.Logger
	gen           uint64 // refresh generation, for the tracker's pruning
	disagreements [NumFields]uint64
	refused       [NumRefusals]uint64 // Metadata entries the plans left out
	history       *hwHistory          // the HW readings behind lag in seconds; nil unless consumer groups or the LSO are read
	lso           *lsoTracker         // since when each LSO holds consumers back (build_lso.go); nil unless the LSO is read
	tiering       *tieringTracker     // since when each latest tiered offset stands (build_tiering.go); nil unless tiering is read
	logDirs       logDirWatch         // the log directories last answered (fetch_logdirs.go)
	reassign      reassignments       // the last refresh's reassignments (setReassignment)
	noTopicIDs    bool                // the last snapshot had topics without an id (warnTopicIDs)
}

func newBuilder(cfg *Config, logs LogStore, logger *slog.Logger) builder {
	return builder{
		tracker:     newHWTracker(cfg.StallThreshold),
		join:        newSourceJoin(logs, logger),
		minISR:      minISRState{logger: logger},
		leaderScope: cfg.Scope == ScopeLeader,
		logger:      logger,
		history:     newGroupHistory(cfg),
		lso:         newLSOTracker(cfg),
		tiering:     newTieringTracker(cfg),
		logDirs:     logDirWatch{logger: logger},
	}
}

// build turns one refresh's plan and answers into a snapshot (without the
// refresh's own fields: Up, Brokers, counters), feeding the HW tracker for
// every partition (exported or not) along the way. Metadata was read at
// mdAt; now is the time of the HW readings.
func (b *builder) build(p *refreshPlan, got *fetched, mdAt, now time.Time) *Snapshot {
	b.gen++
	defer b.tracker.forget(b.gen)
	defer b.history.forget(b.gen)
	b.minISR.resolve(p.configTopics, &got.minISR)
	for r, n := range p.refused {
		b.refused[r] += uint64(n)
	}
	count := func(f Field) { b.disagreements[f]++ }

	// The partitions and lags are two allocations, sized from the plan, that
	// the topics' slices share, rather than one growing slice per topic.
	snap := &Snapshot{MinISR: b.minISR.status, MetadataRefused: b.refused}
	topicOf := make(map[string]int)
	var perTopic []int
	lagCap := 0
	for i := range p.parts {
		pp := &p.parts[i]
		if !pp.export {
			continue
		}
		t, ok := topicOf[pp.key.Topic]
		if !ok {
			t = len(snap.Topics)
			topicOf[pp.key.Topic] = t
			m := b.minISR.minISROf(pp.key.Topic)
			snap.Topics = append(snap.Topics, Topic{
				Name: pp.key.Topic, ID: topicIDString(pp.topicID),
				MinISRConfig: m.value, MinISRSource: m.source, MinISRUnusable: m.unusable,
			})
			perTopic = append(perTopic, 0)
		}
		perTopic[t]++
		lagCap += max(len(pp.replicas)-1, 0)
	}
	all := make([]Partition, p.exported)
	off := 0
	for t, n := range perTopic {
		snap.Topics[t].Partitions = all[off : off : off+n]
		off += n
	}
	lags := make([]ReplicaLag, 0, lagCap)

	for i := range p.parts {
		pp := &p.parts[i]
		// The leader's LEO, read for exported partitions only.
		var leo offsetAnswer
		if l := pp.leoSlot(pp.leader); l >= 0 {
			leo = got.offsets.leoAt[l]
		}
		var (
			hw      hwVerdict
			hwKnown bool
		)
		if ans := got.offsets.hwAt[i]; ans.ok {
			epoch := pp.epoch
			if ans.leaderEpoch >= 0 {
				epoch = ans.leaderEpoch
			}
			hw = b.tracker.observe(pp.key, hwObservation{
				topicID: pp.topicID, hw: ans.offset, leaderEpoch: epoch,
				leo: leo.offset, leoKnown: leo.ok, leoAsked: pp.export,
			}, now, b.gen)
			if hw.regressed {
				b.logger.Debug("High watermark went backwards",
					"topic", pp.key.Topic, "partition", pp.key.Partition,
					"from", hw.prevHW, "to", ans.offset,
					"leader_epoch_before", hw.prevEpoch, "leader_epoch_after", epoch)
			}
			hwKnown = true
			if pp.export {
				b.history.observe(pp.key, pp.topicID, ans.offset, now, b.gen)
			}
		} else {
			// The leader did not answer (or there is none): the HW is
			// unknown, not the last one read, which could be stale for
			// ever; its history stays for when the leader answers again.
			b.tracker.touch(pp.key, b.gen)
			b.history.touch(pp.key, b.gen)
			hw.lastAdvance, hw.regressions, _ = b.tracker.lastAdvance(pp.key, pp.topicID)
		}
		if !pp.export {
			continue
		}

		ts := &snap.Topics[topicOf[pp.key.Topic]]
		if b.leaderScope {
			// The partitions this broker leads: its log is the one that
			// would have shown their ISR changes.
			b.join.observeISR(pp.key, int(pp.isr))
		}
		isr, epoch := b.join.join(pp.key, int(pp.isr), int64(pp.epoch), mdAt, count)
		s := Partition{
			Topic:       pp.key.Topic,
			Partition:   pp.key.Partition,
			Replicas:    len(pp.replicas),
			ISR:         isr,
			Leader:      pp.leader,
			LeaderEpoch: epoch,
			HWKnown:     hwKnown,
			LastAdvance: hw.lastAdvance,
			Regressions: hw.regressions,
		}
		if hwKnown {
			s.HW = got.offsets.hwAt[i].offset
		}
		if s.Leader < 0 {
			s.Leader = -1
		}
		if ts.MinISRConfig > 0 {
			s.MinISR = min(ts.MinISRConfig, s.Replicas)
		}
		from := len(lags)
		if leo.ok {
			s.LEO, s.LEOKnown = leo.offset, true
			for _, r := range pp.replicas {
				if r == pp.leader {
					continue
				}
				if f := pp.leoSlot(r); f >= 0 && got.offsets.leoAt[f].ok {
					// The follower is asked a moment apart from the leader
					// and can be ahead by then; lag is never negative.
					lags = append(lags, ReplicaLag{Replica: r, Lag: max(s.LEO-got.offsets.leoAt[f].offset, 0)})
				}
			}
		}
		// A replica in a failed log directory has no LEO to lag by: it is
		// exported as offline instead of going missing.
		for _, r := range pp.offlineDir {
			if r != pp.leader {
				lags = append(lags, ReplicaLag{Replica: r, Offline: true})
			}
		}
		if len(lags) > from {
			s.Lags = lags[from:len(lags):len(lags)]
		}
		if hwKnown && hw.stalled {
			s.Stalled, s.StallCause = true, b.stallCause(&s)
		}
		s.setELR(got.elr)
		s.setReassignment(got.reassign, b.reassign, p.outOfISR[int32(i)])
		ts.Partitions = append(ts.Partitions, s)
	}

	b.warnTopicIDs(snap.Topics)
	b.join.pruneOpen(func(k conflictKey) bool { _, ok := topicOf[k.Topic]; return ok })
	for i := range snap.Topics {
		slices.SortFunc(snap.Topics[i].Partitions, func(x, y Partition) int { return cmp.Compare(x.Partition, y.Partition) })
	}
	slices.SortFunc(snap.Topics, func(x, y Topic) int { return strings.Compare(x.Name, y.Name) })
	snap.StableOffsets = b.stableOffsets(p, got, now)
	markLSOStalled(snap)
	b.buildTiering(snap, p, got, now)
	b.buildGroups(snap, p, got, now)
	snap.LogDirs = b.logDirs.observe(got.logDirs)
	b.reassign = got.reassign
	return snap
}

// topicIDString is a topic id as Kafka prints it (Uuid.toString: unpadded
// URL-safe base64), "" for the zero id of a Metadata answer without ids.
func topicIDString(id [16]byte) string {
	if id == ([16]byte{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// warnTopicIDs says at WARN, once per change, that Metadata gave exported
// topics no id: the rules then tell a re-created topic apart by its leader
// epoch alone.
func (b *builder) warnTopicIDs(topics []Topic) {
	if len(topics) == 0 {
		return // nothing exported says nothing either way (a broker leading nothing)
	}
	without := 0
	for i := range topics {
		if topics[i].ID == "" {
			without++
		}
	}
	switch {
	case without > 0 && !b.noTopicIDs:
		b.logger.Warn("Metadata carries no topic ids (Kafka before 2.8, or --kafka.version below 2.8.0): kafka_replication_topic_info is absent for those topics, "+
			"and a topic re-created under its name whose leader then moves may page KafkaPartitionCommittedOffsetsLost.", "topics", without)
	case without == 0 && b.noTopicIDs:
		b.logger.Info("Metadata carries topic ids again.")
	}
	b.noTopicIDs = without > 0
}

// stallCause says why a stalled partition's HW does not move, from what the
// poller knows: the ISR against min ISR, then the leader's log.
func (b *builder) stallCause(p *Partition) StallCause {
	switch {
	case p.UnderMinISR():
		return StallUnderMinISR
	case b.join.pendingShrink(logparse.PartitionKey{Topic: p.Topic, Partition: p.Partition}):
		return StallISRShrinkPending
	}
	return StallUnknown
}
