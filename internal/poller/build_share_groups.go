package poller

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

// A share group's start offset cannot be read while its state partition of
// __share_group_state is under min ISR, which the followers that stall a data
// partition's HW usually cause too: Kafka 4.4.0 then answers
// DescribeShareGroupOffsets after a minute, with start offset -1. The
// starved verdict is kept through it by deduction, not as a stale value: a
// start offset never passes the HW, so a group caught up at a stalled HW is
// still caught up while that HW has not moved.

// positionKey names a group's position on a partition.
type positionKey struct {
	group string
	part  logparse.PartitionKey
}

// shareStarvedWatch remembers the share-group positions starved in the last
// refresh, with the HW they were starved at.
type shareStarvedWatch struct {
	at       map[positionKey]int64
	deducing bool // the last refresh deduced some, for the log once per change
}

// carryStarved adds to snap's share groups, as Deduced positions, those
// starved in the last refresh that this one could not read while their
// partition's HW is still stalled where it was; and remembers this
// refresh's starved positions.
func (b *builder) carryStarved(snap *Snapshot) {
	w := &b.shareStarved
	read := make(map[positionKey]bool)
	byName := make(map[string]int, len(snap.ShareGroups))
	for g := range snap.ShareGroups {
		byName[snap.ShareGroups[g].Name] = g
		for _, p := range snap.ShareGroups[g].Partitions {
			read[positionKey{snap.ShareGroups[g].Name, logparse.PartitionKey{Topic: p.Topic, Partition: p.Partition}}] = true
		}
	}
	deduced := 0
	for k, hw := range w.at {
		if read[k] {
			continue
		}
		t, i, ok := snapshotPartition(snap, k.part)
		if !ok {
			continue
		}
		s := &snap.Topics[t].Partitions[i]
		if !s.Stalled || !s.HWKnown || !s.LEOKnown || s.HW != hw {
			continue
		}
		g, ok := byName[k.group]
		if !ok {
			g = len(snap.ShareGroups)
			byName[k.group] = g
			snap.ShareGroups = append(snap.ShareGroups, ConsumerGroup{Name: k.group})
		}
		snap.ShareGroups[g].Partitions = append(snap.ShareGroups[g].Partitions, GroupPartition{
			Topic: s.Topic, Partition: s.Partition, Committed: hw, Deduced: true,
			AboveHW: max(s.LEO-s.HW, 0), AboveHWKnown: true, StarvedByReplication: true,
		})
		deduced++
	}
	if deduced > 0 {
		slices.SortFunc(snap.ShareGroups, func(x, y ConsumerGroup) int { return strings.Compare(x.Name, y.Name) })
		for g := range snap.ShareGroups {
			slices.SortFunc(snap.ShareGroups[g].Partitions, func(x, y GroupPartition) int {
				return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
			})
		}
	}
	switch {
	case deduced > 0 && !w.deducing:
		b.logger.Warn("Some share groups' start offsets cannot be read (their share state may be under min ISR); "+
			"their starved verdict is kept while the high watermark stays stalled where it was", "positions", deduced)
	case deduced == 0 && w.deducing:
		b.logger.Info("No share group's starved verdict is deduced any longer")
	}
	w.deducing = deduced > 0
	w.at = make(map[positionKey]int64, len(w.at))
	for _, g := range snap.ShareGroups {
		for _, p := range g.Partitions {
			if p.StarvedByReplication {
				k := logparse.PartitionKey{Topic: p.Topic, Partition: p.Partition}
				if t, i, ok := snapshotPartition(snap, k); ok {
					w.at[positionKey{g.Name, k}] = snap.Topics[t].Partitions[i].HW
				}
			}
		}
	}
}
