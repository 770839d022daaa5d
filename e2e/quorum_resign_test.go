package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// majorityLost is the leader's line on giving up its leadership (CheckQuorum):
// no fetch from a majority of the voters within 1.5 × the fetch timeout.
const majorityLost = "Did not receive fetch request from the majority of the voters within "

// TestMetadataQuorumResignCapture: the two voters of a three-voter quorum
// that are not the leader frozen (SIGSTOP) until the leader resigns for want
// of their fetches, then released, for the resignation line and what follows
// it as a fixture. It runs only for e2e/capture-fixtures.sh
// (KRE_E2E_CAPTURE_QUORUM set).
func TestMetadataQuorumResignCapture(t *testing.T) {
	if testing.Short() || os.Getenv("KRE_E2E_CAPTURE_QUORUM") == "" {
		t.Skip("fixture capture only: set KRE_E2E_CAPTURE_QUORUM")
	}
	for _, version := range versionsOf(logVersions) {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			c := harness.StartT(t, harness.Options{Version: version, Controllers: 3})
			before := waitQuorumLeader(ctx, t, c, -1)
			t.Logf("quorum before: leader %d epoch %d", before.LeaderID, before.LeaderEpoch)
			var frozen []int32
			for _, n := range c.Controllers() {
				if n.ID != before.LeaderID {
					frozen = append(frozen, n.ID)
				}
			}
			for _, id := range frozen {
				must(t, c.PauseNode(id))
			}
			// A failed wait must not leave them frozen for the cleanup.
			defer func() {
				for _, id := range frozen {
					_ = c.ResumeNode(id)
				}
			}()
			start := time.Now()
			waitLogLine(t, filepath.Join(c.Dir(), fmt.Sprintf("node-%d", before.LeaderID), "logs", "server.log"), majorityLost, 60*time.Second)
			t.Logf("leader %d resigned %.1f s after the freeze of %v", before.LeaderID, time.Since(start).Seconds(), frozen)
			for _, id := range frozen {
				must(t, c.ResumeNode(id))
			}
			frozen = nil
			after := waitQuorumLeader(ctx, t, c, before.LeaderEpoch)
			t.Logf("quorum after the thaw: leader %d epoch %d", after.LeaderID, after.LeaderEpoch)
			// For e2e/capture-fixtures.sh: whose log to cut.
			must(t, os.WriteFile(filepath.Join(c.Dir(), "quorum-resign.txt"),
				fmt.Appendf(nil, "%d %d %d %d\n", before.LeaderID, before.LeaderEpoch, after.LeaderID, after.LeaderEpoch), 0o644))
			time.Sleep(5 * time.Second) // let the old leader follow the new one and log it
		})
	}
}

// waitLogLine waits until file holds text.
func waitLogLine(t *testing.T, file, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil && bytes.Contains(b, []byte(text)) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: no %q within %v", file, text, timeout)
}
