package metrics

import (
	"testing"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
)

// declared is the family named kafka_replication_<name> in Families: the
// families declared inline in a column table have no variable of their own.
func declared(name string) *exposition.Family {
	for _, f := range Families() {
		if f.Name == "kafka_replication_"+name {
			return f
		}
	}
	panic("no family kafka_replication_" + name + " in Families")
}

// The families the tests name, declared inline in a column table.
var (
	fileLastReadFamily    = declared("log_file_last_read_timestamp_seconds")
	groupCommittedFamily  = declared("consumer_group_committed_offset")
	groupLagFamily        = declared("consumer_group_lag_to_high_watermark")
	groupLagSecondsFamily = declared("consumer_group_lag_seconds")
	groupStarvedPFamily   = declared("consumer_group_starved_by_replication")
	hwFamily              = declared("partition_high_watermark")
	lastAdvanceFamily     = declared("partition_high_watermark_last_advance_timestamp_seconds")
	lastRefreshFamily     = declared("last_refresh_timestamp_seconds")
	leaderFamily          = declared("partition_leader")
	lsoLagSecondsFamily   = declared("partition_last_stable_offset_lag_seconds")
	lsoStalledFamily      = declared("partition_last_stable_offset_stalled")
	minISRFamily          = declared("partition_min_insync_replicas")
	reassignAddingFamily  = declared("partition_reassignment_adding_replicas")
	refreshDurationFamily = declared("refresh_duration_seconds")
	replicasFamily        = declared("partition_replicas")
	underMinISRFamily     = declared("partition_under_min_isr")
	upFamily              = declared("up")
	lsoFamily             = declared("partition_last_stable_offset")
)

// TestFamiliesListedOnce protects Families from a family listed by two
// declaration lists (a column table and a hand-kept list), which would
// write its HELP twice and double its README row.
func TestFamiliesListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Families() {
		if seen[f.Name] {
			t.Errorf("%s is listed twice in Families", f.Name)
		}
		seen[f.Name] = true
	}
}
