package admin

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/logparse"
)

// caughtUp reports a group that keeps up with the partition: its committed
// offset is at the HW, or within the HW's last advance. The second matters
// for a stall: while the HW stands still the offsets topic is often under
// min ISR too (the same followers host it), so the group's last commits
// fail and its committed offset stays a few records behind the HW it has
// read up to.
func (b *builder) caughtUp(k logparse.PartitionKey, committed, hw int64) bool {
	if committed >= hw {
		return true
	}
	prev, ok := b.history.lastStep(k)
	return ok && committed >= prev && prev < hw
}

// buildGroups adds the consumer groups the refresh read to snap, whose
// partitions are built and sorted: each group's committed offsets on the
// exported partitions, split against the partition's HW and LEO.
func (b *builder) buildGroups(snap *Snapshot, p *refreshPlan, reads []groupRead, now time.Time) {
	if reads == nil {
		return
	}
	byKey := make(map[logparse.PartitionKey]*Partition)
	for t := range snap.Topics {
		for i := range snap.Topics[t].Partitions {
			s := &snap.Topics[t].Partitions[i]
			byKey[logparse.PartitionKey{Topic: s.Topic, Partition: s.Partition}] = s
		}
	}
	snap.Groups = make([]ConsumerGroup, 0, len(reads))
	for _, g := range reads {
		cg := ConsumerGroup{Name: g.name, State: g.state, Members: g.members, Partitions: make([]GroupPartition, 0, len(g.offsets))}
		for _, o := range g.offsets {
			key := p.parts[o.at].key
			s := byKey[key]
			if s == nil {
				continue
			}
			gp := GroupPartition{Topic: s.Topic, Partition: s.Partition, Committed: o.committed}
			if s.HWKnown {
				gp.HWKnown, gp.LagToHW = true, max(s.HW-o.committed, 0)
				gp.LagSeconds, gp.LagSecondsKnown = b.history.lagSeconds(key, o.committed, now)
				gp.Behind = gp.LagSecondsKnown && gp.LagSeconds >= b.tracker.stallAfter.Seconds()
			}
			if s.HWKnown && s.LEOKnown {
				gp.AboveHWKnown, gp.AboveHW = true, max(s.LEO-s.HW, 0)
				gp.StarvedByReplication = s.Stalled && b.caughtUp(key, o.committed, s.HW)
			}
			cg.Partitions = append(cg.Partitions, gp)
		}
		slices.SortFunc(cg.Partitions, func(x, y GroupPartition) int {
			return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
		})
		snap.Groups = append(snap.Groups, cg)
	}
	slices.SortFunc(snap.Groups, func(x, y ConsumerGroup) int { return strings.Compare(x.Name, y.Name) })
}
