package collector

import (
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// The consumer-group families: per group in both label modes, per group and
// partition only with partition labels, and the group requests' error
// counters only while groups are read.
func TestConsumerGroupOutput(t *testing.T) {
	s := adminSnapshot()
	for r := range admin.NumRequests {
		s.Sent[r] = true
	}
	s.Groups = []admin.ConsumerGroup{
		{Name: "audit", State: "Stable", Members: 2, Partitions: []admin.GroupPartition{
			{Topic: "orders", Partition: 10, Committed: 7, HWKnown: true, LagToHW: 3, AboveHWKnown: true, LagSeconds: 1.5, LagSecondsKnown: true},
			{Topic: "orders", Partition: 2, Committed: 50, HWKnown: true, AboveHW: 30, AboveHWKnown: true, StarvedByReplication: true, LagSecondsKnown: true},
		}},
		{Name: "bill\"ing", Partitions: []admin.GroupPartition{{Topic: "orders", Partition: 1, Committed: 4}}},
	}
	for _, labels := range []bool{true, false} {
		text := adminText(t, s, labels)
		samples := checkExposition(t, text)
		want := map[string]int{
			requestErrorsFamily.Name: int(admin.NumRequests),
			groupStateFamily.Name:    2, groupMembersFamily.Name: 2, groupStarvedFamily.Name: 2,
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
