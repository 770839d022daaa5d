package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// TestMetadataQuorumElectionCapture: the active controller of a three-voter
// quorum killed and restarted, for the Raft client's log lines (elections,
// transitions, the old leader's truncation on rejoin) as fixtures. It runs
// only for e2e/capture-fixtures.sh (KRE_E2E_CAPTURE_QUORUM set).
func TestMetadataQuorumElectionCapture(t *testing.T) {
	if testing.Short() || os.Getenv("KRE_E2E_CAPTURE_QUORUM") == "" {
		t.Skip("fixture capture only: set KRE_E2E_CAPTURE_QUORUM")
	}
	// Every version of the matrix, 4.1.1 too: one real election fixture each.
	for _, version := range versionsOf(logVersions, []string{kafkaELR}) {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			c := harness.StartT(t, harness.Options{Version: version, Controllers: 3})
			before := waitQuorumLeader(ctx, t, c, -1)
			t.Logf("quorum before: leader %d epoch %d", before.LeaderID, before.LeaderEpoch)
			must(t, c.KillNode(ctx, before.LeaderID))
			after := waitQuorumLeader(ctx, t, c, before.LeaderEpoch)
			t.Logf("quorum after the kill: leader %d epoch %d", after.LeaderID, after.LeaderEpoch)
			// For e2e/capture-fixtures.sh: whose logs to cut.
			must(t, os.WriteFile(filepath.Join(c.Dir(), "quorum-leaders.txt"), fmt.Appendf(nil, "%d %d\n", before.LeaderID, after.LeaderID), 0o644))
			must(t, c.StartNode(ctx, before.LeaderID))
			time.Sleep(5 * time.Second) // let the restarted voter catch up and log it
		})
	}
}

// waitQuorumLeader waits for a quorum leader at an epoch past afterEpoch.
func waitQuorumLeader(ctx context.Context, t *testing.T, c *harness.Cluster, afterEpoch int32) harness.QuorumState {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		q, err := c.DescribeQuorum(ctx)
		if err == nil && q.LeaderID >= 0 && q.LeaderEpoch > afterEpoch {
			return q
		}
		if err == nil {
			err = fmt.Errorf("leader %d epoch %d", q.LeaderID, q.LeaderEpoch)
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no quorum leader past epoch %d within 60 s: %v", afterEpoch, last)
	return harness.QuorumState{}
}
