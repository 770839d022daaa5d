package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/fakekafka"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/logparse"
)

var update = flag.Bool("update", false, "rewrite internal/metrics/fixtures/e2e-output.txt from this run")

const e2eGolden = "../../internal/metrics/fixtures/e2e-output.txt"

// fakeCluster is an in-process 3-broker Kafka (kfake) whose partitions are all
// led by broker 0, with a known number of records in each.
func fakeCluster(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "idle", "payments"),
		kfake.BrokerConfigs(map[string]string{"min.insync.replicas": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// orders is tiered, so that --collector.tiered-storage has series (kfake
	// has no remote storage: nothing is tiered yet).
	if err := c.CreateTopic("orders", 3, map[string]string{"remote.storage.enable": "true"}); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"orders", "idle", "payments"} {
		for p := int32(0); p < 3; p++ {
			if err := c.MoveTopicPartition(topic, p, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Two records of orders/0 are beyond its HW on the leader and no
	// follower fetches them, so the golden scrape can show a stalled high
	// watermark (kfake has no replication: HW == LEO otherwise).
	records := map[string][]int64{"orders": {5 + 2, 3, 0}}
	c.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		if req.ReplicaID != -2 { // Kafka's debug replica id: a replica's own LEO
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.LeaderEpoch, sp.Offset = rp.Partition, -1, 0
				if n := records[rt.Topic]; int(rp.Partition) < len(n) {
					sp.Offset = n[rp.Partition]
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	// payments/1 is moving off broker 2 (kfake never reassigns on its own),
	// so the scrape has the reassignment families that exist only meanwhile.
	c.ControlKey(int16(kmsg.ListPartitionReassignments), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.Version = kreq.GetVersion()
		for _, rt := range kreq.(*kmsg.ListPartitionReassignmentsRequest).Topics {
			if rt.Topic != "payments" || !slices.Contains(rt.Partitions, 1) {
				continue
			}
			st := kmsg.NewListPartitionReassignmentsResponseTopic()
			st.Topic = rt.Topic
			sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			sp.Partition, sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = 1, []int32{0, 1, 2}, []int32{}, []int32{2}
			st.Partitions = append(st.Partitions, sp)
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	// Every broker has two log directories, and broker 0's second one has
	// failed (kfake lists only the directories of the partitions asked for,
	// and the sidecar asks for none).
	c.ControlKey(int16(kmsg.DescribeLogDirs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.Version = kreq.GetVersion()
		for _, dir := range []string{"/var/lib/kafka/data", "/var/lib/kafka/data-b"} {
			d := kmsg.NewDescribeLogDirsResponseDir()
			d.Dir = dir
			if dir == "/var/lib/kafka/data-b" && c.CurrentNode() == 0 {
				d.ErrorCode = kerr.KafkaStorageError.Code
			}
			resp.Dirs = append(resp.Dirs, d)
		}
		return resp, nil, true
	})
	addr := c.ListenAddrs()[0]
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_9_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p, n := range []int{5, 3, 0} {
		for i := 0; i < n; i++ {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "orders", Partition: int32(p), Value: sarama.StringEncoder("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The group billing has read everything it can: on orders/0, whose HW
	// is stalled below two records, it is starved by replication.
	commitGroup(t, addr, "billing", "orders", map[int32]int64{0: 5, 1: 3})
	// The share group shipping has acknowledged everything on orders/0
	// (starved) and on orders/1, which is healthy.
	fakekafka.SetShareOffsets(t, c.ListenAddrs(), "shipping",
		map[logparse.PartitionKey]int64{{Topic: "orders", Partition: 0}: 5, {Topic: "orders", Partition: 1}: 3})
	offlineReplica(t, c, "payments", 2, 1)
	metadataQuorum(t, c)
	return addr
}

// metadataQuorum makes the brokers list and answer DescribeQuorum (kfake has
// no KRaft quorum): three controllers, 3000 leading, 3002 behind, and the
// three brokers observing, so the scrape has the quorum families.
func metadataQuorum(t *testing.T, c *kfake.Cluster) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.ApiVersions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if kreq.GetVersion() > base.Version {
			return nil, nil, false // kfake's own downgrade
		}
		resp := *base
		resp.Version = kreq.GetVersion()
		key := kmsg.NewApiVersionsResponseApiKey()
		key.ApiKey, key.MaxVersion = int16(kmsg.DescribeQuorum), 2
		resp.ApiKeys = append(slices.Clone(resp.ApiKeys), key)
		return &resp, nil, true
	})
	c.ControlKey(int16(kmsg.DescribeQuorum), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := kreq.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.Version = kreq.GetVersion()
		const now = 1_000_000 // the leader's clock, ms
		replica := func(id int32, leo, fetch, caughtUp int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
			s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			s.ReplicaID, s.LogEndOffset, s.LastFetchTimestamp, s.LastCaughtUpTimestamp = id, leo, fetch, caughtUp
			return s
		}
		sp := kmsg.NewDescribeQuorumResponseTopicPartition()
		sp.LeaderID, sp.LeaderEpoch, sp.HighWatermark = 3000, 4, 5000
		sp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{
			replica(3000, 5000, -1, now), replica(3001, 5000, now-100, now-100), replica(3002, 4900, now-2500, now-3000),
		}
		sp.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{
			replica(0, 5000, now-200, now-200), replica(1, 5000, now-200, now-200), replica(2, 5000, now-300, now-300),
		}
		st := kmsg.NewDescribeQuorumResponseTopic()
		st.Topic = "__cluster_metadata"
		st.Partitions = append(st.Partitions, sp)
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
}

// offlineReplica makes Metadata list replica r of topic/p as offline from
// now on (broker r stays up: a failed log directory), so the scrape has the
// family that exists only then. kfake has no log directories.
func offlineReplica(t *testing.T, c *kfake.Cluster, topic string, p, r int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	base, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := *base
		resp.Version = kreq.GetVersion()
		resp.Topics = slices.Clone(resp.Topics)
		for i := range resp.Topics {
			rt := &resp.Topics[i]
			if rt.Topic == nil || *rt.Topic != topic {
				continue
			}
			rt.Partitions = slices.Clone(rt.Partitions)
			for j := range rt.Partitions {
				if rp := &rt.Partitions[j]; rp.Partition == p {
					rp.OfflineReplicas = []int32{r}
				}
			}
		}
		return &resp, nil, true
	})
}

// startSidecar parses serve flags and runs the sidecar parts in-process.
func startSidecar(t testing.TB, args ...string) (*sidecar, *serveCommand) {
	t.Helper()
	c := newApp()
	s := c.serve
	if _, err := c.app.Parse(append([]string{"serve"}, args...)); err != nil {
		t.Fatal(err)
	}
	filter, err := s.validate()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := newSidecar(s, filter, time.UTC, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	sc.start(ctx, &wg)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return sc, s
}

// waitFor polls cond until it holds or the deadline passes.
// startFixtureSidecar runs serve on internal/metrics/fixtures/e2e's three logs,
// read from the beginning, against the Kafka at addr, and waits until every
// record is read and the first admin refresh is done. extra flags are added.
func startFixtureSidecar(t *testing.T, addr string, extra ...string) (*sidecar, *serveCommand) {
	t.Helper()
	const fx = "../../internal/metrics/fixtures/e2e/"
	sc, s := startSidecar(t, append([]string{
		"--log.file=" + fx + "server.log", "--log.file=" + fx + "state-change.log", "--log.file=" + fx + "controller.log",
		"--log.from-beginning", "--log.poll-interval=20ms",
		"--kafka.server=" + addr, "--kafka.broker-id=0",
		"--web.disable-exporter-metrics",
	}, refreshOnce(extra)...)...)
	wantRecords := map[string]uint64{fx + "server.log": 29, fx + "state-change.log": 5, fx + "controller.log": 4}
	waitFor(t, "the fixture logs read and the first admin refresh", 20*time.Second, func() bool {
		for _, f := range sc.files {
			if f.Stats().Records != wantRecords[f.Path] {
				return false
			}
		}
		return sc.ready()
	})
	return sc, s
}

// refreshOnce adds --kafka.refresh-interval=1h (a single refresh in a test)
// unless extra sets the interval.
func refreshOnce(extra []string) []string {
	for _, a := range extra {
		if strings.HasPrefix(a, "--kafka.refresh-interval=") {
			return extra
		}
	}
	return append(extra, "--kafka.refresh-interval=1h")
}

func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Families whose values change from run to run: times, durations, the build,
// and the topic ids, which kfake draws at random.
func deterministic(name string) bool {
	return !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") &&
		!strings.HasSuffix(name, "_timestamp_seconds") && !strings.HasSuffix(name, "_duration_seconds") &&
		!strings.HasSuffix(name, "_build_info") && name != "kafka_replication_topic_info"
}

// filterExposition drops the samples of families whose values change from run
// to run, but keeps their HELP and TYPE lines: the golden file still lists every
// metric the exporter exposes (the alert and dashboard tests rely on that).
func filterExposition(t *testing.T, r io.Reader) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, meta := line, strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ")
		if meta {
			name = strings.Fields(line)[2]
		} else if i := strings.IndexAny(line, "{ "); i > 0 {
			name = line[:i]
		}
		if meta || deterministic(name) {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestEndToEndScrape is node_exporter's end-to-end test: the real handler, fed by
// fixture logs and an in-process Kafka, scraped over HTTP and diffed against
// internal/metrics/fixtures/e2e-output.txt. The alert and dashboard tests check every
// metric name they use against that file, so it is the contract of the exporter.
func TestEndToEndScrape(t *testing.T) {
	body := scrapeGoldenSetup(t, "--collector.tiered-storage", "--collector.share-groups")
	got := filterExposition(t, strings.NewReader(body))
	if *update {
		if err := os.WriteFile(e2eGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(e2eGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("scrape differs from %s (rerun with -update and review the diff):\n%s", e2eGolden, lineDiff(string(want), got))
	}

	// promlint over the full, unfiltered scrape, as `promtool check metrics` would.
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	// No sample carries a timestamp.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, mf := range families {
		for _, m := range mf.Metric {
			if m.TimestampMs != nil {
				t.Errorf("%s: want no sample timestamps", name)
			}
		}
	}
}

// scrapeGoldenSetup scrapes the golden setup's sidecar, with extra flags,
// once it has seen orders/0 stalled.
func scrapeGoldenSetup(t *testing.T, extra ...string) string {
	t.Helper()
	// A second refresh a second later sees orders/0 stalled. The position
	// file and the probe configuration add their own families.
	addr := fakeCluster(t)
	probeFile := filepath.Join(t.TempDir(), "probe.yml")
	writeProbeConfig(t, probeFile, map[string]string{"fixture": addr})
	sc, s := startFixtureSidecar(t, addr, append([]string{
		"--kafka.refresh-interval=1s", "--stall.threshold=1ms", "--collector.consumer-groups",
		"--collector.last-stable-offset",
		"--log.position-file=" + filepath.Join(t.TempDir(), "positions.json"), "--probe.config-file=" + probeFile,
	}, extra...)...)
	t.Cleanup(sc.close)
	waitFor(t, "a stalled high watermark", 20*time.Second, func() bool {
		if g := sc.admin.Snapshot().Groups; len(g) == 0 || len(g[0].Partitions) == 0 || !g[0].Partitions[0].StarvedByReplication {
			return false
		}
		for _, tp := range sc.admin.Snapshot().Topics {
			for _, p := range tp.Partitions {
				if p.Stalled {
					return true
				}
			}
		}
		return false
	})
	srv := httptest.NewServer(sc.handler(s))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("want 200, got %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

// lineDiff lists lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	inWant := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		inWant[l]++
	}
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		if inWant[l] > 0 {
			inWant[l]--
			continue
		}
		b.WriteString("+ " + l + "\n")
	}
	for _, l := range strings.Split(want, "\n") {
		if inWant[l] > 0 {
			inWant[l]--
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

func TestHealthAndReadiness(t *testing.T) {
	dir := t.TempDir()
	sc, s := startSidecar(t, "--log.file="+dir+"/server.log", "--log.poll-interval=10ms")
	srv := httptest.NewServer(sc.handler(s))
	defer srv.Close()
	status := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("/-/healthy"); got != http.StatusOK {
		t.Errorf("want healthy 200, got %d", got)
	}
	if got := status("/-/ready"); got != http.StatusServiceUnavailable {
		t.Errorf("want not ready (503) while the log file does not exist, got %d", got)
	}
	writeFile(t, dir+"/server.log", []byte("[2026-11-30 10:00:00,001] INFO hello (x)\n"), 0o644)
	waitFor(t, "ready once the file exists", 10*time.Second, func() bool { return status("/-/ready") == http.StatusOK })
	if got := status("/"); got != http.StatusOK {
		t.Errorf("want a landing page, got %d", got)
	}
}
