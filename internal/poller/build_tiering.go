package poller

import (
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// Stage 4 for --collector.tiered-storage: each tiered partition's offsets
// (fetch_tiering.go) against its HW or LSO, and whether tiering is stalled.
// The broker copies a segment only once it is entirely below the LSO, and
// deletes a local segment only once it is copied, so a stuck HW or LSO stops
// tiering and local retention with it: the leader's disk fills.

// tieringTracker remembers, per partition, the latest tiered offset and
// since when it has stood still. It is pure (time is passed in), like
// hwTracker and lsoTracker.
type tieringTracker struct {
	stallAfter time.Duration
	parts      map[logparse.PartitionKey]*tieringState
}

type tieringState struct {
	topicID [16]byte
	tiered  int64
	// since is when tiered was last seen to change (unix nanoseconds), and
	// hwThen the HW read then: records arrived since if the HW is past it.
	since, hwThen int64
	cause         TieringCause // the last verdict, to log its changes once
	seen          uint64       // refresh generation of the last reading, for pruning
}

// tieringReading is one refresh's reading of a partition.
type tieringReading struct {
	tiered int64 // the latest tiered offset, -1: nothing yet
	lag    int64 // offsets below the bound not tiered
	hw     int64
	// hwStalled, lsoStuck: the partition's HW stall and LSO verdicts.
	hwStalled, lsoStuck bool
}

// tieringVerdict is what the tracker concludes from one reading.
type tieringVerdict struct {
	cause   TieringCause // TieringNotStalled unless stalled
	changed bool         // cause differs from the last verdict
}

// newTieringTracker is the tracker when tiering is read, else nil.
func newTieringTracker(cfg *Config) *tieringTracker {
	if !cfg.Tiering.Enabled {
		return nil
	}
	return &tieringTracker{stallAfter: cfg.Tiering.StallThreshold, parts: make(map[logparse.PartitionKey]*tieringState)}
}

// observe records a reading at now. Tiering is stalled when the latest
// tiered offset has not changed for the threshold while offsets wait below
// the bound and either replication is stuck (the HW stalled, the LSO held
// by a transaction) or the HW moved on meanwhile: a partition that receives
// nothing keeps its last records in the active segment, which is never
// copied, and that is not a stall. A re-created topic (a new id) starts
// afresh.
func (t *tieringTracker) observe(k logparse.PartitionKey, topicID [16]byte, r tieringReading, now time.Time, gen uint64) tieringVerdict {
	at := now.UnixNano()
	s, ok := t.parts[k]
	if !ok || s.topicID != topicID || s.tiered != r.tiered {
		if !ok || s.topicID != topicID {
			s = &tieringState{topicID: topicID}
			t.parts[k] = s
		}
		s.tiered, s.since, s.hwThen = r.tiered, at, r.hw
	}
	s.seen = gen
	cause := TieringNotStalled
	if r.lag > 0 && time.Duration(at-s.since) >= t.stallAfter {
		switch {
		case r.hwStalled:
			cause = TieringHWStalled
		case r.lsoStuck:
			cause = TieringLSOStuck
		case r.hw > s.hwThen:
			cause = TieringRemote
		}
	}
	v := tieringVerdict{cause: cause, changed: cause != s.cause}
	s.cause = cause
	return v
}

// touch keeps a partition whose tiering this refresh did not read: its
// clock goes on from where it was when the leader answers again.
func (t *tieringTracker) touch(k logparse.PartitionKey, gen uint64) {
	if s, ok := t.parts[k]; ok {
		s.seen = gen
	}
}

// forget drops partitions not read since generation keepFrom: deleted, no
// longer tiered, or no longer exported.
func (t *tieringTracker) forget(keepFrom uint64) {
	for k, s := range t.parts {
		if s.seen < keepFrom {
			delete(t.parts, k)
		}
	}
}

// buildTiering sets the tiering of the snapshot's partitions of tiered
// topics and counts the unknown ones; a no-op when the read is off. It runs
// after the HW and LSO verdicts are set.
func (b *builder) buildTiering(snap *Snapshot, p *refreshPlan, got *fetched, now time.Time) {
	if got.tiering == nil || b.tiering == nil {
		return
	}
	snap.TieringRead = true
	defer b.tiering.forget(b.gen)
	at := make(map[logparse.PartitionKey]int32)
	for i := range got.tiering {
		if got.tiering[i].asked {
			at[p.parts[i].key] = int32(i)
		}
	}
	if len(at) == 0 {
		return
	}
	all := make([]PartitionTiering, 0, len(at))
	for t := range snap.Topics {
		for j := range snap.Topics[t].Partitions {
			sp := &snap.Topics[t].Partitions[j]
			k := logparse.PartitionKey{Topic: sp.Topic, Partition: sp.Partition}
			i, ok := at[k]
			if !ok {
				continue
			}
			all = append(all, b.partitionTiering(sp, &p.parts[i], got, i, now))
			sp.Tiering = &all[len(all)-1]
			snap.TieringUnknown[sp.Tiering.Unknown]++
		}
	}
}

// partitionTiering is the tiering of sp, planned as pp at plan index i.
func (b *builder) partitionTiering(sp *Partition, pp *plannedPartition, got *fetched, i int32, now time.Time) PartitionTiering {
	ans := &got.tiering[i]
	pt := PartitionTiering{Unknown: ans.unknown, LatestTiered: -1, LocalStart: -1}
	if !ans.asked || ans.unknown != TieringKnown {
		b.tiering.touch(pp.key, b.gen)
		return pt
	}
	pt.LatestTiered, pt.LocalStart = ans.tiered, ans.local
	// What the broker could copy: up to the LSO where it is read, else the HW.
	bound, known := sp.HW, sp.HWKnown
	if got.lso != nil {
		bound, known = got.lso[i].offset, got.lso[i].ok
	}
	if !known {
		b.tiering.touch(pp.key, b.gen)
		return pt
	}
	pt.Lag, pt.LagKnown = max(bound-(ans.tiered+1), 0), true
	v := b.tiering.observe(pp.key, pp.topicID, tieringReading{
		tiered: ans.tiered, lag: pt.Lag, hw: sp.HW, hwStalled: sp.Stalled, lsoStuck: sp.LSOStalled,
	}, now, b.gen)
	pt.Stalled, pt.Cause = v.cause != TieringNotStalled, v.cause
	b.logTieringChange(sp, &pt, v)
	return pt
}

// logTieringChange logs a stalled tiering once when it is found, once when
// its cause changes and once when it moves again.
func (b *builder) logTieringChange(sp *Partition, pt *PartitionTiering, v tieringVerdict) {
	switch {
	case !v.changed:
	case pt.Stalled:
		b.logger.Warn("Tiering of the partition is stalled: nothing was copied to remote storage for longer than the threshold, "+
			"local retention waits for it and the leader's disk fills",
			"topic", sp.Topic, "partition", sp.Partition, "cause", pt.Cause.String(), "latest_tiered_offset", pt.LatestTiered,
			"tiering_lag_offsets", pt.Lag, "high_watermark", sp.HW, "threshold", b.tiering.stallAfter)
	default:
		b.logger.Info("Tiering of the partition moves again", "topic", sp.Topic, "partition", sp.Partition, "latest_tiered_offset", pt.LatestTiered)
	}
}
