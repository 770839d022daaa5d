package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// quorumAlerts matches the alerts of the kafka-replication-metadata-quorum group.
const quorumAlerts = `KafkaMetadata.+|KafkaBrokerMetadataStale`

// quorumInhibited is the target of deploy/alertmanager.yml's inhibition by
// KafkaMetadataQuorumUnavailable: the partition alerts that are its consequence.
var quorumInhibited = regexp.MustCompile(`^(KafkaPartitionOffline|KafkaPartitionUnderMinISR|KafkaPartitionAtMinISR|KafkaPartitionUnderReplicated|KafkaPartitionSingleCleanLeaderCandidate|KafkaPartitionHighWatermarkStalled|KafkaPartitionLeaderFlapping|KafkaProduceNotEnoughReplicas|KafkaConsumersStarvedByReplication|KafkaReplicationExporterBrokerUnidentified)$`)

// TestMetadataQuorumAlerts: the metadata quorum alerts end to end, through
// real Prometheus and Alertmanager with the shipped rules at their shipped
// durations (not time-scaled: "within a minute" is the operator's minute) and
// deploy/alertmanager.yml's inhibitions, against Kafka's own DescribeQuorum.
//
// How (4.4.0, three dedicated controllers 101–103, one sidecar per broker in
// leader scope, refresh 2 s, scrape and evaluation 1 s, topic "orders" on
// brokers 1,2,3 with min ISR 2 and an acks=all record every 500 ms), one
// cluster for every step:
//   - healthy: 20 s with no quorum alert in ALERTS, not even pending, and the
//     quorum leader Prometheus sees is Kafka's;
//   - one voter frozen (SIGSTOP), with broker 3 frozen beside it:
//     KafkaMetadataQuorumVoterLagging{node} reaches the webhook within 60 s of
//     the freeze while Kafka's DescribeQuorum shows that voter's last fetch
//     over 5 s old; broker 3's observer lag in Prometheus passes 30 s (Kafka's
//     row for observer 3 is as old) and KafkaBrokerMetadataStale is pending;
//     SIGCONT → VoterLagging resolved at the webhook;
//   - both follower voters frozen, with broker 3 frozen again so that the
//     partition facts break (its ISR cannot shrink without a quorum, so acks=all
//     writes stall): KafkaMetadataQuorumUnavailable reaches the webhook within
//     60 s while Kafka's DescribeQuorum fails or its HW stands still, and no
//     alert in the inhibition's target list reaches the webhook after it;
//     SIGCONT → Unavailable resolved;
//   - over the run, KafkaMetadataHighWatermarkRegressed and
//     KafkaMetadataQuorumLeaderFlapping never pending.
//
// What happens to a frozen broker once the leader drops its observer row
// (300 s without a fetch) is TestMetadataQuorumObserverExpiry, behind
// KRE_E2E_OBSERVER_EXPIRY=1.
//
// Seen (three runs, 2026-12-03, 2 shared cores): healthy 20 s with no quorum
// alert, not even pending; KafkaMetadataQuorumVoterLagging at the webhook 53 s
// after SIGSTOP with the rule's former 45 s for:, 49 s twice with 40 s, resolved 1–2 s
// after SIGCONT; observer 3 past 30 s without a fetch and KafkaBrokerMetadataStale
// pending, never firing; KafkaMetadataQuorumUnavailable at the webhook 37 s
// after the two voters' SIGSTOP (the leader resigned: Kafka's DescribeQuorum
// timed out, not a still HW), KafkaPartitionHighWatermarkStalled{topic=orders}
// firing in Prometheus 84 s after it and never at the webhook; Unavailable
// resolved 2–5 s after SIGCONT. Wall time 3m9s–3m10s with the cluster start.
func TestMetadataQuorumAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster, Prometheus and Alertmanager; skipped with -short")
	}
	skipWithoutAlerting(t)
	start := time.Now()
	defer func() { t.Logf("%s wall time %v", t.Name(), time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c := harness.StartT(t, harness.Options{Version: kafkaCurrent, Controllers: 3})
	const topic = "orders"
	must(t, c.CreateTopic(ctx, harness.Topic{
		Name: topic, Assignment: [][]int32{{1, 2, 3}},
		Configs: map[string]string{"min.insync.replicas": "2"},
	}))
	produceOK(ctx, t, c, topic, 5, sarama.WaitForAll)
	q := startQuorumAlerting(ctx, t, c)
	for _, n := range append(slices.Clone(c.Controllers()), c.Nodes()...) {
		t.Cleanup(func() { _ = c.ResumeNode(n.ID) }) // never leave a stopped JVM behind
	}

	var acks atomic.Int32
	acks.Store(int32(sarama.WaitForAll))
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	var traffic sync.WaitGroup
	traffic.Go(func() { produceEvery(trafficCtx, c, topic, 500*time.Millisecond, &acks) })
	defer func() { stopTraffic(); traffic.Wait() }()

	var followers []int32
	t.Run("healthy_no_quorum_alert", func(t *testing.T) {
		waitPromValue(ctx, t, q.prom, `kafka_replication_metadata_quorum_voters{cluster="local"}`, 30*time.Second, func(v float64) bool { return v == 3 })
		const window = 20 * time.Second
		time.Sleep(window)
		kafka, err := c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		waitPromValue(ctx, t, q.prom, `kafka_replication_metadata_quorum_leader_id{cluster="local"}`, 10*time.Second,
			func(v float64) bool { return v == float64(kafka.LeaderID) })
		q.noAlerts(ctx, t, quorumAlerts, time.Since(start))
		followers = slices.DeleteFunc(slices.Clone(kafka.Voters), func(id int32) bool { return id == kafka.LeaderID })
		if len(followers) != 2 {
			t.Fatalf("voters %v with leader %d: want two followers", kafka.Voters, kafka.LeaderID)
		}
	})
	if len(followers) != 2 {
		t.FailNow()
	}

	t.Run("one_voter_and_a_broker_frozen", func(t *testing.T) {
		voter, broker := followers[0], int32(3)
		must(t, c.PauseNode(voter))
		must(t, c.PauseNode(broker))
		frozen := time.Now()
		a := q.waitAlert(ctx, t, "firing", "KafkaMetadataQuorumVoterLagging", map[string]string{"node": fmt.Sprint(voter)}, 60*time.Second)
		t.Logf("KafkaMetadataQuorumVoterLagging{node=%d} at the webhook %v after SIGSTOP", voter, time.Since(frozen).Round(time.Second))
		kafka, err := c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		if r, ok := kafka.Replica(voter); !ok || kafka.LeaderNow()-r.LastFetchTimestamp < 5000 {
			t.Errorf("voter alert %v, but Kafka's DescribeQuorum has voter %d fetching (%+v, leader now %d)", a.Labels, voter, r, kafka.LeaderNow())
		}
		waitPromValue(ctx, t, q.prom, fmt.Sprintf(`kafka_replication_metadata_quorum_replica_last_fetch_age_seconds{cluster="local",role="observer",node="%d"}`, broker),
			40*time.Second, func(v float64) bool { return v > 30 })
		t.Logf("observer %d: last fetch age past 30 s in Prometheus %v after SIGSTOP", broker, time.Since(frozen).Round(time.Second))
		kafka, err = c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		if r, ok := kafka.Replica(broker); !ok || !r.Observer || kafka.LeaderNow()-r.LastFetchTimestamp < 30000 {
			t.Errorf("Kafka's DescribeQuorum has observer %d as %+v (leader now %d, ok %v): not 30 s without a fetch", broker, r, kafka.LeaderNow(), ok)
		}
		waitPromValue(ctx, t, q.prom, `ALERTS{alertname="KafkaBrokerMetadataStale",alertstate="pending",cluster="local"}`, 10*time.Second,
			func(v float64) bool { return v == 1 })
		must(t, c.ResumeNode(voter))
		must(t, c.ResumeNode(broker))
		resumed := time.Now()
		q.waitAlert(ctx, t, "resolved", "KafkaMetadataQuorumVoterLagging", map[string]string{"node": fmt.Sprint(voter)}, 30*time.Second)
		t.Logf("KafkaMetadataQuorumVoterLagging{node=%d} resolved at the webhook %v after SIGCONT", voter, time.Since(resumed).Round(time.Second))
		if a := findAlert(q.hook, "firing", "KafkaBrokerMetadataStale", nil); a != nil {
			t.Errorf("a broker frozen for under a minute paged as stale metadata: %v", a.Labels)
		}
		// Broker 3 back in the ISR before the next step freezes it again.
		waitPromValue(ctx, t, q.prom, `max(kafka_replication_partition_in_sync_replicas{cluster="local",topic="orders"})`, 60*time.Second,
			func(v float64) bool { return v == 3 })
	})

	t.Run("two_voters_frozen_pages_and_inhibits", func(t *testing.T) {
		before, err := c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		must(t, c.PauseNode(followers[0]))
		must(t, c.PauseNode(followers[1]))
		must(t, c.PauseNode(3))
		frozen := time.Now()
		q.waitAlert(ctx, t, "firing", "KafkaMetadataQuorumUnavailable", nil, 60*time.Second)
		paged := time.Now()
		t.Logf("KafkaMetadataQuorumUnavailable at the webhook %v after SIGSTOP", paged.Sub(frozen).Round(time.Second))
		first, err1 := describeQuorumWithin(ctx, c, 5*time.Second)
		time.Sleep(3 * time.Second)
		second, err2 := describeQuorumWithin(ctx, c, 5*time.Second)
		switch {
		case err1 != nil || err2 != nil:
			t.Logf("Kafka's DescribeQuorum: %v / %v", err1, err2)
		case first.LeaderID < 0 || second.LeaderID < 0:
			t.Logf("Kafka's DescribeQuorum: no leader (%+v, %+v)", first, second)
		case second.HW != first.HW:
			t.Errorf("Unavailable paged, but Kafka's metadata HW moved from %d to %d in 3 s (leader %d)", first.HW, second.HW, second.LeaderID)
		default:
			t.Logf("Kafka's DescribeQuorum: HW %d still (it was %d before the freeze)", second.HW, before.HW)
		}
		// The partition facts break under the outage: broker 3 cannot leave
		// the ISR, so the acks=all writes stall the HW of orders.
		waitPromValue(ctx, t, q.prom, `ALERTS{alertname="KafkaPartitionHighWatermarkStalled",alertstate="firing",cluster="local",topic="orders"}`,
			60*time.Second, func(v float64) bool { return v == 1 })
		t.Logf("KafkaPartitionHighWatermarkStalled{topic=orders} firing in Prometheus %v after SIGSTOP", time.Since(frozen).Round(time.Second))
		time.Sleep(3 * time.Second) // Prometheus → Alertmanager → webhook, were it not inhibited
		firing, err := q.prom.Query(ctx, `ALERTS{alertstate="firing",cluster="local"}`)
		must(t, err)
		for _, s := range firing {
			t.Logf("firing in Prometheus during the outage: %v", s.Labels)
		}
		notes, _ := q.hook.Notifications()
		for _, n := range notes {
			for _, a := range n.Alerts {
				if a.Status == "firing" && quorumInhibited.MatchString(a.Labels["alertname"]) && n.Received.After(paged) {
					t.Errorf("%s paged while KafkaMetadataQuorumUnavailable was firing (received %s): %v",
						a.Labels["alertname"], n.Received.Format("15:04:05"), a.Labels)
				}
			}
		}
		for _, id := range append(slices.Clone(followers), 3) {
			must(t, c.ResumeNode(id))
		}
		resumed := time.Now()
		q.waitAlert(ctx, t, "resolved", "KafkaMetadataQuorumUnavailable", nil, 60*time.Second)
		t.Logf("KafkaMetadataQuorumUnavailable resolved at the webhook %v after SIGCONT", time.Since(resumed).Round(time.Second))
		after, err := c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		if after.LeaderID < 0 || after.HW <= before.HW {
			t.Errorf("resolved, but Kafka's quorum is %+v (before the freeze HW %d)", after, before.HW)
		}
	})

	t.Run("no_regression_nor_flapping", func(t *testing.T) {
		q.noAlerts(ctx, t, `KafkaMetadataHighWatermarkRegressed|KafkaMetadataQuorumLeaderFlapping`, time.Since(start))
	})
}

// TestMetadataQuorumObserverExpiry: a broker frozen past the leader's 300 s
// observer timeout. It takes over six minutes, so it runs only with
// KRE_E2E_OBSERVER_EXPIRY=1.
//
// What it asserts (4.4.0, three dedicated controllers, sidecars and
// Prometheus as TestMetadataQuorumAlerts): broker 3 frozen → its observer row
// leaves Kafka's DescribeQuorum; by then the controller has fenced it, so it
// is not in Metadata either and kafka_replication_metadata_quorum_brokers_missing
// stays 0; its observer series are dropped, not frozen; KafkaBrokerMetadataStale
// never fires (a stopped broker is KafkaPartitionUnderReplicated's).
//
// Seen (once, 2026-12-03): observer 3 left Kafka's DescribeQuorum 5m1s after
// SIGSTOP, its series were gone from Prometheus 5 s later, brokers_missing 0,
// only KafkaReplicationExporterClusterUnreachable{instance="kafka-3"} reached
// the webhook. Wall time 5m34s.
func TestMetadataQuorumObserverExpiry(t *testing.T) {
	if os.Getenv("KRE_E2E_OBSERVER_EXPIRY") == "" {
		t.Skip("over six minutes; set KRE_E2E_OBSERVER_EXPIRY=1 to run it")
	}
	skipWithoutAlerting(t)
	start := time.Now()
	defer func() { t.Logf("%s wall time %v", t.Name(), time.Since(start).Round(time.Second)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent, Controllers: 3})
	q := startQuorumAlerting(ctx, t, c)
	const broker = int32(3)
	t.Cleanup(func() { _ = c.ResumeNode(broker) })
	waitPromValue(ctx, t, q.prom, `kafka_replication_metadata_quorum_voters{cluster="local"}`, 30*time.Second, func(v float64) bool { return v == 3 })
	must(t, c.PauseNode(broker))
	frozen := time.Now()
	for {
		kafka, err := c.DescribeQuorumVia(ctx, 1)
		must(t, err)
		if _, ok := kafka.Replica(broker); !ok {
			break
		}
		if time.Since(frozen) > 7*time.Minute {
			t.Fatalf("observer %d still in Kafka's DescribeQuorum 7 minutes after SIGSTOP", broker)
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("observer %d left Kafka's DescribeQuorum %v after SIGSTOP", broker, time.Since(frozen).Round(time.Second))
	time.Sleep(5 * time.Second) // two refreshes and scrapes
	obs, err := q.prom.Query(ctx, fmt.Sprintf(`kafka_replication_metadata_quorum_replica_log_end_offset{cluster="local",role="observer",node="%d"}`, broker))
	must(t, err)
	if len(obs) > 0 {
		t.Errorf("the exporter still exports observer %d, which Kafka no longer lists: %v", broker, obs)
	}
	missing, err := q.prom.Query(ctx, `max(kafka_replication_metadata_quorum_brokers_missing{cluster="local"})`)
	must(t, err)
	for _, s := range missing {
		if s.Value != 0 {
			t.Errorf("brokers_missing %v after the drop of a fenced broker", s.Value)
		}
	}
	if a := findAlert(q.hook, "firing", "KafkaBrokerMetadataStale", nil); a != nil {
		t.Errorf("KafkaBrokerMetadataStale fired for a stopped (fenced) broker: %v", a.Labels)
	}
	must(t, c.ResumeNode(broker))
}

// describeQuorumWithin is the test's DescribeQuorum given up after d: with
// no quorum leader the broker holds the request for its own timeout.
func describeQuorumWithin(ctx context.Context, c *harness.Cluster, d time.Duration) (harness.QuorumState, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.DescribeQuorumVia(ctx, 1)
}

// quorumAlerting is a sidecar per broker, Prometheus with the shipped rules
// at their shipped durations, and Alertmanager with the shipped inhibitions.
type quorumAlerting struct {
	prom *stack.Prometheus
	hook *stack.Webhook
}

func startQuorumAlerting(ctx context.Context, t *testing.T, c *harness.Cluster) *quorumAlerting {
	t.Helper()
	es, err := stack.StartExporters(ctx, c, exporterBinary(t))
	must(t, err)
	t.Cleanup(es.Close)
	dir := t.TempDir()
	rules, err := filepath.Abs("../alerts/kafka-replication.rules.yml")
	must(t, err)
	hook := stack.NewWebhook()
	receiver := httptest.NewServer(hook)
	t.Cleanup(receiver.Close)
	am, err := stack.StartAlertmanagerInhibiting(ctx, dir, receiver.URL, "../deploy/alertmanager.yml")
	must(t, err)
	t.Cleanup(am.Close)
	prom, err := stack.StartPrometheus(ctx, dir, es.Targets(), []string{rules}, am.URL, time.Second)
	must(t, err)
	t.Cleanup(prom.Close)
	t.Cleanup(func() {
		notes, _ := hook.Notifications()
		for _, n := range notes {
			t.Logf("webhook: %s", n)
		}
		if t.Failed() {
			t.Logf("Prometheus and Alertmanager files in %s", dir)
		}
	})
	t.Logf("exporters %v, Prometheus %s, Alertmanager %s", es.URLs(), prom.URL, am.URL)
	return &quorumAlerting{prom: prom, hook: hook}
}

// noAlerts fails on any alert matching names in ALERTS, pending or firing,
// over the last window.
func (q *quorumAlerting) noAlerts(ctx context.Context, t *testing.T, names string, window time.Duration) {
	t.Helper()
	seen, err := q.prom.Query(ctx, fmt.Sprintf(`max_over_time(ALERTS{alertname=~%q}[%ds])`, names, int(window.Seconds())+1))
	must(t, err)
	for _, s := range seen {
		t.Errorf("%s %s: %v", s.Labels["alertname"], s.Labels["alertstate"], s.Labels)
	}
}

// waitAlert waits until the webhook has received alertname with cluster
// "local" and the labels in want, in status.
func (q *quorumAlerting) waitAlert(ctx context.Context, t *testing.T, status, alertname string, want map[string]string, within time.Duration) stack.Alert {
	t.Helper()
	return waitAlert(ctx, t, q.hook, status, alertname, want, within)
}

// waitPromValue polls an instant query every 500 ms until a sample satisfies ok.
func waitPromValue(ctx context.Context, t *testing.T, prom *stack.Prometheus, expr string, within time.Duration, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last []stack.Sample
	for {
		samples, err := prom.Query(ctx, expr)
		if err == nil {
			for _, s := range samples {
				if ok(s.Value) {
					return
				}
			}
			last = samples
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last %v, err %v)", expr, within, last, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
