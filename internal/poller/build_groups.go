package poller

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// caughtUp reports a group that keeps up with the partition: its committed
// offset is at the HW, within the HW's last advance (from the partition's
// HW history r), or passed by the HW at most within (a refresh plus a
// commit interval) before that advance was read. The last two matter for a
// stall: while the HW stands still the offsets topic is often under min ISR
// too (the same followers host it), so the group's last commits fail and
// its committed offset stays behind the HW it has read up to — by more than
// the last advance when the HW froze just after a refresh (a step of 1
// record, seen with 2 records a second in the alert loop, where the group
// was then paged as stalled).
func caughtUp(r *hwReadings, within time.Duration, committed, hw int64) bool {
	if committed >= hw {
		return true
	}
	if prev, ok := r.lastStep(); ok && committed >= prev && prev < hw {
		return true
	}
	behind, ok := r.behindLastAdvance(committed)
	return ok && behind <= within.Seconds()
}

// groupedPartition is a partition some group committed on: its snapshot
// entry, its place in the snapshot's order and its HW history, looked up
// once however many groups read it.
type groupedPartition struct {
	s        *Partition // nil: not in the snapshot
	rank     int        // its index in the snapshot's order (topic, then partition)
	readings *hwReadings
	seen     bool
}

// rankedOffset is a group's committed offset on a partition of the snapshot.
type rankedOffset struct {
	rank      int
	p         *groupedPartition
	committed int64
}

// buildGroups adds the consumer groups and the share groups the refresh
// read to snap, whose partitions are built and sorted; and how many were
// listed and left unread.
func (b *builder) buildGroups(snap *Snapshot, p *refreshPlan, got *fetched, now time.Time) {
	if reads := got.groups.reads; reads != nil {
		snap.GroupsListed, snap.GroupsUnread = got.groups.listed, got.groups.unread
		snap.Groups = b.groupPositions(snap, p, reads, now)
	}
	if reads := got.shareGroups.reads; reads != nil {
		snap.ShareGroupsListed, snap.ShareGroupsUnread = got.shareGroups.listed, got.shareGroups.unread
		snap.ShareGroupBrokers = got.shareGroups.brokers
		snap.ShareGroups = b.groupPositions(snap, p, reads, now)
	}
}

// groupPositions are reads sorted by name, each with its offsets on the
// exported partitions, split against the partition's HW and LEO. A share
// group's start offset stands where a consumer group's committed offset
// does: the first record the group has not done with.
func (b *builder) groupPositions(snap *Snapshot, p *refreshPlan, reads []groupRead, now time.Time) []ConsumerGroup {
	starts := make([]int, len(snap.Topics)) // the rank of each topic's first partition
	for t := 1; t < len(snap.Topics); t++ {
		starts[t] = starts[t-1] + len(snap.Topics[t-1].Partitions)
	}
	byAt := make([]groupedPartition, len(p.parts)) // by plan index
	var offsets []rankedOffset
	groups := make([]ConsumerGroup, 0, len(reads))
	for _, g := range reads {
		offsets = offsets[:0]
		for _, o := range g.offsets {
			at := &byAt[o.at]
			if !at.seen {
				key := p.parts[o.at].key
				at.seen, at.readings = true, b.history.readings(key)
				if t, i, ok := snapshotPartition(snap, key); ok {
					at.s, at.rank = &snap.Topics[t].Partitions[i], starts[t]+i
				}
			}
			if at.s != nil {
				offsets = append(offsets, rankedOffset{at.rank, at, o.committed})
			}
		}
		slices.SortFunc(offsets, func(x, y rankedOffset) int { return cmp.Compare(x.rank, y.rank) })
		cg := ConsumerGroup{Name: g.name, State: g.state, Members: g.members, Partitions: make([]GroupPartition, 0, len(offsets))}
		for _, o := range offsets {
			at, s := o.p, o.p.s
			gp := GroupPartition{Topic: s.Topic, Partition: s.Partition, Committed: o.committed}
			if s.HWKnown {
				gp.HWKnown, gp.LagToHW = true, max(s.HW-o.committed, 0)
				gp.LagSeconds, gp.LagSecondsKnown = at.readings.lagSeconds(o.committed, now)
				gp.Behind = gp.LagSecondsKnown && gp.LagSeconds >= b.tracker.stallAfter.Seconds()
			}
			if s.HWKnown && s.LEOKnown {
				gp.AboveHWKnown, gp.AboveHW = true, max(s.LEO-s.HW, 0)
				gp.StarvedByReplication = s.Stalled && caughtUp(at.readings, b.history.caughtUpWithinOrZero(), o.committed, s.HW)
			}
			cg.Partitions = append(cg.Partitions, gp)
		}
		groups = append(groups, cg)
	}
	slices.SortFunc(groups, func(x, y ConsumerGroup) int { return strings.Compare(x.Name, y.Name) })
	return groups
}

// snapshotPartition finds k in snap, whose topics are sorted by name and
// partitions by number: snap.Topics[t].Partitions[i]; ok is false when it
// is not there.
func snapshotPartition(snap *Snapshot, k logparse.PartitionKey) (t, i int, ok bool) {
	t, ok = slices.BinarySearchFunc(snap.Topics, k.Topic, func(t Topic, name string) int { return strings.Compare(t.Name, name) })
	if ok {
		i, ok = slices.BinarySearchFunc(snap.Topics[t].Partitions, k.Partition, func(p Partition, n int32) int { return cmp.Compare(p.Partition, n) })
	}
	return t, i, ok
}
