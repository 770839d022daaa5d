package collector

import (
	"strings"
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/collector/admin"
)

// The LSO families: per partition with partition labels, the LSO always
// and the lag and stall verdict only where the HW was answered too; without
// partition labels, the count of stalled LSOs per topic only.
func TestStableOffsetOutput(t *testing.T) {
	s := adminSnapshot()
	s.Sent[admin.RequestListOffsetsLSO] = true
	s.StableOffsets = []admin.StableOffset{
		{Topic: "audit", Partition: 0, LSO: 9, HWKnown: true},
		{Topic: "orders", Partition: 2, LSO: 40, HWKnown: true, LagSeconds: 420.5, Stalled: true},
		{Topic: "orders", Partition: 10, LSO: 7}, // the HW unanswered
		{Topic: "orders", Partition: 11, LSO: 3, HWKnown: true, LagSeconds: 361, Stalled: true},
	}
	for _, labels := range []bool{true, false} {
		text := adminText(t, s, labels)
		samples := checkExposition(t, text)
		want := map[string]int{lsoFamily.Name: 4, lsoLagSecondsFamily.Name: 3, lsoStalledFamily.Name: 3}
		lines := []string{
			`kafka_replication_partition_last_stable_offset{partition="2",topic="orders"} 40`,
			`kafka_replication_partition_last_stable_offset{partition="10",topic="orders"} 7`,
			`kafka_replication_partition_last_stable_offset_lag_seconds{partition="2",topic="orders"} 420.5`,
			`kafka_replication_partition_last_stable_offset_stalled{partition="2",topic="orders"} 1`,
			`kafka_replication_partition_last_stable_offset_stalled{partition="0",topic="audit"} 0`,
			`kafka_replication_admin_request_errors_total{request="list_offsets_lso"} 0`,
		}
		if !labels {
			want = map[string]int{lsoFamily.Name: 0, lsoLagSecondsFamily.Name: 0, lsoStalledFamily.Name: 2}
			lines = []string{
				`kafka_replication_partition_last_stable_offset_stalled{topic="audit"} 0`,
				`kafka_replication_partition_last_stable_offset_stalled{topic="orders"} 2`,
			}
		}
		for name, n := range want {
			if samples[name] != n {
				t.Errorf("partition labels %v: %s: want %d series, got %d", labels, name, n, samples[name])
			}
		}
		for _, line := range lines {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("partition labels %v: want %s", labels, line)
			}
		}
	}
	// Off: no LSO family, in either mode.
	s.StableOffsets = nil
	for _, labels := range []bool{true, false} {
		if text := adminText(t, s, labels); strings.Contains(text, "last_stable_offset") {
			t.Errorf("partition labels %v: want no LSO series with the read off", labels)
		}
	}
}
