package metrics

import (
	"cmp"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// groupTables are the per-group tables: the groups listed and unread, each
// group's state, and its members and starved partitions. Empty when the
// collector is off.
func groupTables(s *poller.Snapshot) []*exposition.Table {
	groups := s.Groups
	state := &exposition.Table{
		Rows: len(groups),
		Labels: func(row int, values []string) {
			values[0], values[1] = groups[row].Name, cmp.Or(groups[row].State, "Unknown")
		},
		Columns: []exposition.Column{{Family: groupStateFamily, Value: func(int) (float64, bool) { return 1, true }}},
	}
	return []*exposition.Table{listedTable(groupsListedFamily, s.GroupsListed), unreadTable(groupsUnreadFamily, &s.GroupsUnread), state, {
		Rows:   len(groups),
		Labels: func(row int, values []string) { values[0] = groups[row].Name },
		Columns: []exposition.Column{
			// No member count where the state is unknown: 0 would say Empty.
			{Family: groupMembersFamily, Value: func(row int) (float64, bool) { return float64(groups[row].Members), groups[row].State != "" }},
			starvedColumn(groupStarvedFamily, groups),
		},
	}}
}

// shareGroupTables are groupTables for share groups, whose state and
// members are not read, with the brokers by whether they list share groups.
func shareGroupTables(s *poller.Snapshot) []*exposition.Table {
	groups := s.ShareGroups
	brokers := &exposition.Table{
		Rows:   int(poller.NumShareGroupSupport),
		Labels: func(row int, values []string) { values[0] = poller.ShareGroupSupport(row).String() },
		Columns: []exposition.Column{
			{Family: shareGroupsBrokersFamily, Value: func(row int) (float64, bool) { return float64(s.ShareGroupBrokers[row]), true }},
		},
	}
	return []*exposition.Table{listedTable(shareGroupsListedFamily, s.ShareGroupsListed), unreadTable(shareGroupsUnreadFamily, &s.ShareGroupsUnread), brokers, {
		Rows:    len(groups),
		Labels:  func(row int, values []string) { values[0] = groups[row].Name },
		Columns: []exposition.Column{starvedColumn(shareGroupStarvedFamily, groups)},
	}}
}

// listedTable is the one series of how many groups were listed.
func listedTable(f *exposition.Family, listed int) *exposition.Table {
	return &exposition.Table{Rows: 1, Columns: []exposition.Column{
		{Family: f, Value: func(int) (float64, bool) { return float64(listed), true }},
	}}
}

// unreadTable is the listed groups left unread, a series per reason.
func unreadTable(f *exposition.Family, unread *[poller.NumGroupUnread]int) *exposition.Table {
	return &exposition.Table{
		Rows:    int(poller.NumGroupUnread),
		Labels:  func(row int, values []string) { values[0] = poller.GroupUnread(row).String() },
		Columns: []exposition.Column{{Family: f, Value: func(row int) (float64, bool) { return float64(unread[row]), true }}},
	}
}

// starvedColumn counts each group's starved partitions, a row per group.
func starvedColumn(f *exposition.Family, groups []poller.ConsumerGroup) exposition.Column {
	return exposition.Column{Family: f, Value: func(row int) (float64, bool) {
		n := 0
		for i := range groups[row].Partitions {
			if groups[row].Partitions[i].StarvedByReplication {
				n++
			}
		}
		return float64(n), true
	}}
}

// stableOffsetTables are the LSO tables with partition labels: a row per
// exported partition whose LSO was read or, with unhealthy (non-nil: the
// scrape's set of unhealthy partitions), per unhealthy one (a stalled LSO
// makes its partition unhealthy), then the others folded per topic under
// the same names.
func stableOffsetTables(s *poller.Snapshot, unhealthy func() map[partitionKey]bool) []*exposition.Table {
	if unhealthy == nil {
		return []*exposition.Table{stableOffsetTable(s, nil)}
	}
	bad := unhealthy()
	return []*exposition.Table{stableOffsetTable(s, bad), stableOffsetRollup(s, bad)}
}

// stableOffsetTable has a row per exported partition whose LSO was read, in
// series order: partition, topic; with unhealthy, per partition for which
// it is true (the others are stableOffsetRollup's). It lays its rows out
// only when one of its families is written: the snapshot's LSOs are sorted
// by topic, then partition, so a stable counting sort on the rank of their
// partition label puts them in series order.
func stableOffsetTable(s *poller.Snapshot, unhealthy map[partitionKey]bool) *exposition.Table {
	values := func(o *poller.StableOffset, values []string) { values[0], values[1] = idLabel(o.Partition), o.Topic }
	t := exposition.RowTable(nil, values, stableOffsetColumns)
	t.Prepare = func(t *exposition.Table) {
		var (
			kept []*poller.StableOffset
			ids  []int32
		)
		for i := range s.StableOffsets {
			if o := &s.StableOffsets[i]; unhealthy == nil || unhealthy[partitionKey{o.Topic, o.Partition}] {
				kept, ids = append(kept, o), append(ids, o.Partition)
			}
		}
		ranks := newStringRanks(ids)
		rank := make([]int32, len(ids))
		for i, id := range ids {
			rank[i] = ranks.of(id)
		}
		rows := make([]*poller.StableOffset, 0, len(kept))
		for _, j := range countingSort(nil, rank) {
			rows = append(rows, kept[j])
		}
		*t = *exposition.RowTable(rows, values, stableOffsetColumns)
	}
	return t
}

// stableOffsetRollup folds the LSO rows per topic into the families that
// declare a rollup (the count of stalled LSOs): every row for
// --no-collector.partition-labels, the rows of partitions not in unhealthy
// for --collector.partition-series=unhealthy.
func stableOffsetRollup(s *poller.Snapshot, unhealthy map[partitionKey]bool) *exposition.Table {
	rows := make([]*poller.StableOffset, 0, len(s.StableOffsets))
	var (
		ends   []int
		topics []string
	)
	for i := range s.StableOffsets { // sorted by topic
		o := &s.StableOffsets[i]
		if unhealthy[partitionKey{o.Topic, o.Partition}] {
			continue
		}
		if n := len(rows); n == 0 || rows[n-1].Topic != o.Topic {
			if n > 0 {
				ends = append(ends, n)
			}
			topics = append(topics, o.Topic)
		}
		rows = append(rows, o)
	}
	if len(rows) > 0 {
		ends = append(ends, len(rows))
	}
	return exposition.RollupTable(rows, ends, topics, stableOffsetColumns)
}

// groupPartitionValues are a row's values of groupPartitionLabels.
func groupPartitionValues(r groupPartitionRow, values []string) {
	values[0], values[1], values[2] = r.group, idLabel(r.p.Partition), r.p.Topic
}

// groupPartitionTable has a row per group of groups (consumer or share
// groups, with their cols) and exported partition it has an offset on, in series order: group, partition, topic. With unhealthy
// (non-nil: the scrape's set of unhealthy partitions), only the positions
// that are starved or behind, or on an unhealthy partition. It lays its rows out only when one of its families
// is written. The snapshot's groups are sorted by name and each group's
// partitions by topic, then partition, so a stable counting sort of each
// group's partitions on the rank of their partition label puts them in
// series order.
func groupPartitionTable(groups []poller.ConsumerGroup, cols []exposition.RowColumn[groupPartitionRow],
	unhealthy func() map[partitionKey]bool,
) *exposition.Table {
	t := exposition.RowTable(nil, groupPartitionValues, cols)
	t.Prepare = func(t *exposition.Table) {
		unhealthyOnly := unhealthy != nil
		var bad map[partitionKey]bool
		if unhealthyOnly {
			bad = unhealthy()
		}
		keep := func(p *poller.GroupPartition) bool {
			return !unhealthyOnly || p.StarvedByReplication || p.Behind || bad[partitionKey{p.Topic, p.Partition}]
		}
		var (
			rows        []groupPartitionRow
			at, ids     []int32 // a group's partitions kept: their indexes and ids
			rank, order []int32
		)
		if !unhealthyOnly {
			n := 0
			for g := range groups {
				n += len(groups[g].Partitions)
			}
			rows = make([]groupPartitionRow, 0, n)
		}
		for g := range groups {
			parts := groups[g].Partitions
			at, ids = at[:0], ids[:0]
			for i := range parts {
				if keep(&parts[i]) {
					at, ids = append(at, int32(i)), append(ids, parts[i].Partition)
				}
			}
			ranks := newStringRanks(ids)
			rank = rank[:0]
			for _, id := range ids {
				rank = append(rank, ranks.of(id))
			}
			order = countingSort(order, rank)
			for _, j := range order {
				rows = append(rows, groupPartitionRow{group: groups[g].Name, p: &parts[at[j]]})
			}
		}
		*t = *exposition.RowTable(rows, groupPartitionValues, cols)
	}
	return t
}

// partitionKey names a partition.
type partitionKey struct {
	topic     string
	partition int32
}

// unhealthyPartitions are s's partitions whose Unhealthy() is true.
func unhealthyPartitions(s *poller.Snapshot) map[partitionKey]bool {
	bad := make(map[partitionKey]bool)
	for i := range s.Topics {
		for j := range s.Topics[i].Partitions {
			if p := &s.Topics[i].Partitions[j]; p.Unhealthy() {
				bad[partitionKey{p.Topic, p.Partition}] = true
			}
		}
	}
	return bad
}
