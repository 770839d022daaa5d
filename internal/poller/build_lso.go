package poller

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Stage 4 for --collector.last-stable-offset: each exported partition's LSO
// (fetch_lso.go) against its HW, and since when the LSO has held
// read_committed consumers back. An LSO below the HW for longer than any
// transaction may last is a transaction left open (a hanging transaction:
// KIP-664 counts them per broker, PartitionsWithLateTransactionsCount).

// lsoTracker remembers, per partition, the last LSO read and since when the
// HW has been past it. It is pure (time is passed in), like hwTracker.
type lsoTracker struct {
	stallAfter time.Duration
	parts      map[logparse.PartitionKey]*lsoState
}

type lsoState struct {
	topicID [16]byte
	lso     int64
	// heldSince is when the HW passed lso, in unix nanoseconds: since then
	// read_committed consumers have seen nothing past it. 0 while the LSO
	// is at the HW.
	heldSince int64
	// The HW of the last reading and when (unix nanoseconds; 0: none yet),
	// to date an LSO without the HW history.
	lastHW, lastAt int64
	stalled        bool   // the last verdict, to log its changes once
	seen           uint64 // refresh generation of the last reading, for pruning
}

// lsoVerdict is what the tracker concludes from one reading.
type lsoVerdict struct {
	// lagSeconds is how long the HW has been past the LSO; 0 at the HW.
	lagSeconds float64
	// stalled: the LSO is below the HW and has been for the stall threshold.
	stalled bool
	// changed: stalled differs from the last verdict.
	changed bool
}

// newLSOTracker is the tracker when the LSO is read, else nil.
func newLSOTracker(cfg *Config) *lsoTracker {
	if !cfg.Groups.LastStableOffset {
		return nil
	}
	return &lsoTracker{stallAfter: cfg.Groups.LSOStallThreshold, parts: make(map[logparse.PartitionKey]*lsoState)}
}

// observe records the LSO and HW read at now. When the LSO is new (or the
// HW has just passed it), it is dated: held since the HW passed it. With
// the HW history (h, kept while consumer groups are read), from that; a new
// LSO that the HW passed long ago (the next of several transactions left
// open) has held consumers back since then, not since this reading. Without
// it, between the last reading and this one when the last reading's HW was
// not past the LSO yet; else since the last reading at least (a lower
// bound: the HW passed it before), and since now on the first reading.
func (t *lsoTracker) observe(k logparse.PartitionKey, topicID [16]byte, lso, hw int64, now time.Time, gen uint64, h *hwHistory) lsoVerdict {
	s, ok := t.parts[k]
	if !ok || s.topicID != topicID {
		s = &lsoState{topicID: topicID, lso: -1}
		t.parts[k] = s
	}
	s.seen = gen
	at := now.UnixNano()
	var v lsoVerdict
	if lso >= hw {
		// Read a moment apart, the LSO can be past the HW read before it.
		s.lso, s.heldSince = lso, 0
	} else {
		if lso != s.lso || s.heldSince == 0 {
			s.lso, s.heldSince = lso, at
			if age, ok := h.lagSeconds(k, lso, now); ok {
				s.heldSince = at - int64(age*1e9)
			} else if s.lastAt != 0 {
				s.heldSince = s.lastAt
				if s.lastHW <= lso {
					frac := float64(lso-s.lastHW) / float64(hw-s.lastHW)
					s.heldSince += int64(frac * float64(at-s.lastAt))
				}
			}
		}
		held := time.Duration(at - s.heldSince)
		v.lagSeconds, v.stalled = max(held.Seconds(), 0), held >= t.stallAfter
	}
	s.lastHW, s.lastAt = hw, at
	v.changed, s.stalled = v.stalled != s.stalled, v.stalled
	return v
}

// touch keeps a partition whose LSO or HW this refresh did not read: the
// clock goes on from where it was when the leader answers again.
func (t *lsoTracker) touch(k logparse.PartitionKey, gen uint64) {
	if s, ok := t.parts[k]; ok {
		s.seen = gen
	}
}

// forget drops partitions not read since generation keepFrom: deleted, or
// no longer exported (leadership moved to another sidecar's broker).
func (t *lsoTracker) forget(keepFrom uint64) {
	for k, s := range t.parts {
		if s.seen < keepFrom {
			delete(t.parts, k)
		}
	}
}

// stableOffsets are the LSOs answered, each judged against the HW its
// leader answered in the same refresh, sorted by topic, then partition; nil
// when the read is off. The HW history, when consumer groups keep one,
// must hold this refresh's HWs.
func (b *builder) stableOffsets(p *refreshPlan, got *fetched, now time.Time) []StableOffset {
	if got.lso == nil || b.lso == nil {
		return nil
	}
	defer b.lso.forget(b.gen)
	out := []StableOffset{}
	for i, ans := range got.lso {
		pp := &p.parts[i]
		if !ans.ok {
			if pp.export {
				b.lso.touch(pp.key, b.gen) // its leader did not answer
			}
			continue
		}
		o := StableOffset{Topic: pp.key.Topic, Partition: pp.key.Partition, LSO: ans.offset}
		if hw := got.offsets.hwAt[i]; hw.ok {
			v := b.lso.observe(pp.key, pp.topicID, ans.offset, hw.offset, now, b.gen, b.history)
			o.HWKnown, o.LagSeconds, o.Stalled = true, v.lagSeconds, v.stalled
			b.logLSOChange(&o, hw.offset, v)
		} else {
			b.lso.touch(pp.key, b.gen)
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y StableOffset) int {
		return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
	return out
}

// markLSOStalled sets LSOStalled on the snapshot's partitions whose LSO is
// stalled, so that they count as unhealthy (Partition.Unhealthy).
func markLSOStalled(snap *Snapshot) {
	var stalled map[logparse.PartitionKey]bool
	for _, o := range snap.StableOffsets {
		if o.Stalled {
			if stalled == nil {
				stalled = make(map[logparse.PartitionKey]bool)
			}
			stalled[logparse.PartitionKey{Topic: o.Topic, Partition: o.Partition}] = true
		}
	}
	if stalled == nil {
		return
	}
	for t := range snap.Topics {
		for i := range snap.Topics[t].Partitions {
			p := &snap.Topics[t].Partitions[i]
			p.LSOStalled = stalled[logparse.PartitionKey{Topic: p.Topic, Partition: p.Partition}]
		}
	}
}

// logLSOChange logs a stuck LSO once when it is found and once when it
// moves again.
func (b *builder) logLSOChange(o *StableOffset, hw int64, v lsoVerdict) {
	switch {
	case !v.changed:
	case v.stalled:
		b.logger.Warn("A transaction has held the last stable offset below the high watermark for longer than the threshold: "+
			"read_committed consumers see nothing past it (a hanging transaction?)",
			"topic", o.Topic, "partition", o.Partition, "last_stable_offset", o.LSO, "high_watermark", hw,
			"held_for", time.Duration(o.LagSeconds*float64(time.Second)).Round(time.Second), "threshold", b.lso.stallAfter)
	default:
		b.logger.Info("The last stable offset moves again", "topic", o.Topic, "partition", o.Partition, "last_stable_offset", o.LSO, "high_watermark", hw)
	}
}
