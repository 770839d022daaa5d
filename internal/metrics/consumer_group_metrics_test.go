package metrics

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

// The consumer-group families: per group in both label modes, per group and
// partition only with partition labels, and the group requests' error
// counters only while groups are read.
func TestConsumerGroupOutput(t *testing.T) {
	s := adminSnapshot()
	for r := range poller.NumRequests {
		s.Sent[r] = true
	}
	s.Groups = []poller.ConsumerGroup{
		{Name: "audit", State: "Stable", Members: 2, Partitions: []poller.GroupPartition{
			{Topic: "orders", Partition: 10, Committed: 7, HWKnown: true, LagToHW: 3, AboveHWKnown: true, LagSeconds: 1.5, LagSecondsKnown: true},
			{Topic: "orders", Partition: 2, Committed: 50, HWKnown: true, AboveHW: 30, AboveHWKnown: true, StarvedByReplication: true, LagSecondsKnown: true},
		}},
		{Name: "bill\"ing", Partitions: []poller.GroupPartition{{Topic: "orders", Partition: 1, Committed: 4}}},
	}
	s.GroupsListed = 5
	s.GroupsUnread[poller.GroupUnreadErrorCode], s.GroupsUnread[poller.GroupUnreadNoAnswer] = 1, 2
	for _, labels := range []bool{true, false} {
		text := adminText(t, s, labels)
		samples := checkExposition(t, text)
		want := map[string]int{
			requestErrorsFamily.Name: int(poller.NumRequests),
			// bill"ing's state is unknown: no member count.
			groupStateFamily.Name: 2, groupMembersFamily.Name: 1, groupStarvedFamily.Name: 2,
			// Every reason, 0 too: an alert compares them.
			groupsListedFamily.Name: 1, groupsUnreadFamily.Name: int(poller.NumGroupUnread),
		}
		if labels {
			want[groupCommittedFamily.Name] = 3
			want[groupLagFamily.Name] = 2
			want[groupStarvedPFamily.Name] = 1 // sparse: the 0 of a healthy position is not written
			want[groupLagSecondsFamily.Name] = 2
		}
		for name, n := range want {
			if samples[name] != n {
				t.Errorf("partition labels %v: %s: want %d series, got %d", labels, name, n, samples[name])
			}
		}
		for _, line := range []string{
			`kafka_replication_consumer_group_state{group="audit",state="Stable"} 1`,
			`kafka_replication_consumer_group_state{group="bill\"ing",state="Unknown"} 1`,
			`kafka_replication_consumer_group_partitions_starved_by_replication{group="audit"} 1`,
			`kafka_replication_consumer_group_members{group="audit"} 2`,
			`kafka_replication_consumer_groups_listed 5`,
			`kafka_replication_consumer_groups_unread{reason="error_code"} 1`,
			`kafka_replication_consumer_groups_unread{reason="no_answer"} 2`,
			`kafka_replication_consumer_groups_unread{reason="refresh_ended"} 0`,
		} {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("partition labels %v: want %s", labels, line)
			}
		}
		if !labels {
			continue
		}
		for _, line := range []string{
			`kafka_replication_consumer_group_starved_by_replication{group="audit",partition="2",topic="orders"} 1`,
			`kafka_replication_consumer_group_records_above_high_watermark{group="audit",partition="2",topic="orders"} 30`,
			`kafka_replication_consumer_group_lag_to_high_watermark{group="audit",partition="10",topic="orders"} 3`,
			`kafka_replication_consumer_group_lag_seconds{group="audit",partition="10",topic="orders"} 1.5`,
		} {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("want %s", line)
			}
		}
	}
}

// The group-partition table lays out its rows only when written, and hands
// them over in series order (group, then the partition label as a string,
// then topic), partition ids past the preformatted labels included.
func TestGroupPartitionTableOrder(t *testing.T) {
	s := &poller.Snapshot{}
	for _, name := range []string{"a", "b"} {
		g := poller.ConsumerGroup{Name: name}
		for _, topic := range []string{"t1", "t2"} {
			for _, p := range []int32{0, 1, 2, 10, 100, 4095, 5000, 40000} {
				g.Partitions = append(g.Partitions, poller.GroupPartition{Topic: topic, Partition: p})
			}
		}
		s.Groups = append(s.Groups, g)
	}
	table := groupPartitionTable(s.Groups, groupPartitionColumns, nil)
	if table.Rows != 0 {
		t.Fatalf("want no rows laid out before the table is written, got %d", table.Rows)
	}
	table.Prepare(table)
	if table.Rows != 32 {
		t.Fatalf("want 32 rows, got %d", table.Rows)
	}
	var prev []string
	for row := range table.Rows {
		values := make([]string, 3)
		table.Labels(row, values)
		if prev != nil && slices.Compare(prev, values) >= 0 {
			t.Errorf("row %d %v is not after %v", row, values, prev)
		}
		prev = values
	}
}

// The LSO table, likewise: laid out only when written, in series order
// (the partition label as a string, then topic), with its values.
func TestStableOffsetTableOrder(t *testing.T) {
	s := &poller.Snapshot{}
	for _, topic := range []string{"t1", "t2"} {
		for _, p := range []int32{0, 1, 2, 10, 100, 4095, 5000, 40000} {
			s.StableOffsets = append(s.StableOffsets, poller.StableOffset{Topic: topic, Partition: p, LSO: int64(p) + 7})
		}
	}
	table := stableOffsetTable(s, nil)
	if table.Rows != 0 {
		t.Fatalf("want no rows laid out before the table is written, got %d", table.Rows)
	}
	table.Prepare(table)
	if table.Rows != 16 {
		t.Fatalf("want 16 rows, got %d", table.Rows)
	}
	var prev []string
	for row := range table.Rows {
		values := make([]string, 2)
		table.Labels(row, values)
		if prev != nil && slices.Compare(prev, values) >= 0 {
			t.Errorf("row %d %v is not after %v", row, values, prev)
		}
		if v, ok := table.Columns[0].Value(row); !ok || strconv.FormatFloat(v-7, 'f', -1, 64) != values[0] {
			t.Errorf("row %d %v: want the LSO partition+7, got %g", row, values, v)
		}
		prev = values
	}
}
