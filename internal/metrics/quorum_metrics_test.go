package metrics

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/exposition"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
)

const quorumPrefix = "kafka_replication_metadata_quorum_"

// lagQuorum is three dedicated controllers, 3000 leading at its ms 1000000,
// 3002 behind and not fetching, and brokers 0 and 1 observing: broker 2 is
// missing.
func lagQuorum() *fakekafka.Quorum {
	return &fakekafka.Quorum{
		LeaderID: 3000, LeaderEpoch: 7, HW: 1000,
		Voters: []fakekafka.QuorumReplica{
			{ID: 3000, LEO: 1000, LastFetch: -1, LastCaughtUp: 1_000_000},
			{ID: 3001, LEO: 1000, LastFetch: 999_900, LastCaughtUp: 999_900},
			{ID: 3002, LEO: 800, LastFetch: 988_000, LastCaughtUp: 986_500},
		},
		Observers: []fakekafka.QuorumReplica{
			{ID: 0, LEO: 1000, LastFetch: 999_800, LastCaughtUp: 999_800},
			{ID: 1, LEO: -1, LastFetch: -1, LastCaughtUp: -1},
		},
	}
}

// quorumScrape is the quorum families of one refresh of f in cluster scope.
func quorumScrape(t *testing.T, f *fakekafka.Kafka) string {
	t.Helper()
	a := adminSource(refreshedOnce(t, f.C.ListenAddrs(), poller.Options{}), true)
	var b bytes.Buffer
	if err := exposition.WriteText(&b, nil, func(name string) bool { return strings.HasPrefix(name, quorumPrefix) }, a); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.GatherAndLint(textGatherer(t, a)); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	return b.String()
}

// TestQuorumGolden: every quorum family of a quorum with a lagging voter, an
// observer the leader knows nothing of and a missing broker, against the
// golden file.
func TestQuorumGolden(t *testing.T) {
	f := fakekafka.New(t)
	f.SetQuorum(lagQuorum())
	got := quorumScrape(t, f)
	const golden = "fixtures/admin/quorum.prom"
	if *updateAdminGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("scrape differs from %s (rerun with -poller.update and review the diff):\n%s", golden, got)
	}
}

// TestQuorumUnknownDropsTheRest: when DescribeQuorum cannot be used, up is 0
// and the reason is 1, and no other quorum series is left to look current.
func TestQuorumUnknownDropsTheRest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quorum *fakekafka.Quorum
		reason string
	}{
		{"error", &fakekafka.Quorum{ErrorCode: kerr.UnknownServerError.Code}, "error"},
		{"denied", &fakekafka.Quorum{ErrorCode: kerr.ClusterAuthorizationFailed.Code}, "denied"},
		{"unsupported", nil, "unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakekafka.New(t)
			f.SetQuorum(tc.quorum)
			got := quorumScrape(t, f)
			var samples []string
			for _, l := range strings.Split(got, "\n") {
				if l != "" && !strings.HasPrefix(l, "#") {
					samples = append(samples, l)
				}
			}
			want := []string{
				quorumPrefix + "unknown{reason=\"" + tc.reason + "\"} 1",
				quorumPrefix + "up 0",
			}
			if strings.Join(samples, "\n") != strings.Join(want, "\n") {
				t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(samples, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestQuorumAbsentWhenNotSpeaking: a snapshot without a quorum (a sidecar
// that does not speak for the cluster) has no quorum series at all.
func TestQuorumAbsentWhenNotSpeaking(t *testing.T) {
	s := &poller.Snapshot{Up: true}
	got := scrapeText(t, adminSource(newSnapshotSource(s), true))
	if strings.Contains(got, quorumPrefix) {
		t.Errorf("quorum series without a quorum:\n%s", got)
	}
}
