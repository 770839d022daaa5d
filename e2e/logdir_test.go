package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestLogDirFailure: broker 3 has two log directories and
// the second is replaced by a file while the broker runs. Kafka's own
// answers — Metadata's offline replicas, DescribeLogDirs' KAFKA_STORAGE_ERROR,
// the broker's "Stopping serving replicas in dir" line — against the
// exporter:
//   - each partition whose replica 3 Metadata lists as offline has
//     `partition_replica_offline{replica="3"}` 1 on its leader's sidecar and
//     no `partition_replica_lag{replica="3"}`;
//   - every directory DescribeLogDirs answers has
//     `broker_log_dir_offline{broker,dir}`, 1 for KAFKA_STORAGE_ERROR and 0
//     for the healthy ones, on its own broker's sidecar (leader scope) and on
//     a cluster-scope exporter;
//   - broker 3's own sidecar, reading its server.log, has
//     `log_dir_offline{broker="3",dir}` 1 within seconds;
//   - KafkaBrokerLogDirOffline reaches Alertmanager once, naming broker and
//     directory, and KafkaReplicaLogDirOffline fires for the topic;
//   - the directory put back and broker 3 restarted (the runbook's fix),
//     every series says online again and the alert resolves.
//
// How: log.dirs=…/data,…/data-b on broker 3, a topic of 6 partitions RF 3, a sidecar per broker (refresh 2 s) and
// one cluster-scope exporter beside node 1, Prometheus with the shipped rules and Alertmanager; after the directory
// is replaced each partition gets 5 records. Before the failure, the poller's DescribeLogDirs for no partition
// answers both directories and no topic.
//
// Measured (six runs, load average 8–10): Metadata lists replica 3 offline on exactly the partitions in that
// directory (3 of 6) 0.5–7.4 s after (the broker finds out at its next write there); the leaders' sidecars follow
// 0.0–0.5 s after Metadata; broker 3's own sidecar has log_dir_offline 1 0.0–0.8 s after Kafka's line (by the
// line's timestamp, scrapes 0.5 s apart); KafkaBrokerLogDirOffline reaches Alertmanager once (broker 3, …/data-b,
// no instance) with KafkaReplicaLogDirOffline for the topic, 6–8 s after the directory was replaced; after the
// repair Metadata lists no offline replica, DescribeLogDirs no error, every series is online again (log_dir_offline
// 0 after the broker's start line) and the alert resolves 12–16 s after the restart began. 42–72 s with the cluster
// start.
func TestLogDirFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	const (
		topic      = "logdir"
		partitions = 6
		victim     = 3
	)
	began := time.Now()
	c := harness.StartT(t, harness.Options{Version: kafkaCurrent, NodeConfig: func(n *harness.Node) map[string]string {
		if n.ID == victim {
			return map[string]string{"log.dirs": n.DataDir + "," + n.DataDir + "-b"}
		}
		return nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must(t, c.CreateTopic(ctx, harness.Topic{Name: topic, Partitions: partitions, Configs: map[string]string{"min.insync.replicas": "2"}}))
	es, err := stack.StartExporters(ctx, c, exporterBinary(t), "--kafka.refresh-interval=2s")
	must(t, err)
	defer es.Close()
	s := &sidecars{t: t, es: es}
	// One more exporter beside node 1, in cluster scope: every broker's directories.
	whole, err := stack.StartExporter(ctx, c.Node(1), exporterBinary(t), "--kafka.refresh-interval=2s", "--scope=cluster")
	must(t, err)
	defer whole.Close()
	loop := startLogDirAlertLoop(ctx, t, append(es.Targets(), stack.Target{Addr: whole.Addr, Instance: "kafka-cluster-scope"}))
	brokers := []int32{1, 2, victim}
	adm, err := c.Admin()
	must(t, err)
	healthy, err := adm.DescribeLogDirs(brokers)
	must(t, err)
	s.eventually(ctx, 15*time.Second, "every directory DescribeLogDirs answers exported online, no log-derived one", func(m map[int32]stack.Metrics) string {
		if n := m[victim].Count("kafka_replication_log_dir_offline", nil); n > 0 {
			return fmt.Sprintf("sidecar %d: %d log-derived directories before any failure", victim, n)
		}
		return logDirsAgree(ctx, m, whole, brokers, healthy)
	})
	askedForNone(t, c.Node(victim).BrokerAddr)
	for p := range int32(partitions) {
		_, err := c.Produce(ctx, topic, p, 5, sarama.WaitForLocal)
		must(t, err)
	}

	second := c.Node(victim).DataDir + "-b"
	entries, err := os.ReadDir(second)
	must(t, err)
	var inSecond []string
	for _, e := range entries {
		if len(e.Name()) > len(topic) && e.Name()[:len(topic)+1] == topic+"-" {
			inSecond = append(inSecond, e.Name())
		}
	}
	if len(inSecond) == 0 {
		t.Fatalf("no replica of %s in %s; Kafka put them all in the first directory", topic, second)
	}
	broke := time.Now()
	must(t, os.Rename(second, second+".gone"))
	must(t, os.WriteFile(second, []byte("not a directory\n"), 0o644))
	// Writes make the broker touch the directory: appends as leader or
	// follower fail with an IOException and the directory goes offline.
	// Meanwhile the sidecar is watched: a produce to the broken leader
	// takes seconds to fail.
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for p := range int32(partitions) {
			_, _ = c.Produce(ctx, topic, p, 5, sarama.WaitForLocal)
		}
	}()

	// The broken broker's own sidecar, from its server.log.
	own := map[string]string{"broker": strconv.Itoa(victim), "dir": second}
	s.eventually(ctx, 20*time.Second, "the broken broker's own sidecar reads the directory from its log", func(m map[int32]stack.Metrics) string {
		return expect(m[victim], gauge("kafka_replication_log_dir_offline", own, eq(1)))
	})
	logSeen := time.Now()
	<-produced

	offline := map[int32]bool{}
	_ = waitFor(ctx, 60*time.Second, func() bool {
		for p := range int32(partitions) {
			st, err := c.Partition(topic, p)
			if err == nil && slices.Contains(st.Offline, victim) {
				offline[p] = true
			}
		}
		return len(offline) == len(inSecond)
	})
	kafkaAt := time.Since(broke)
	if len(offline) == 0 {
		t.Fatalf("Metadata lists no offline replica %d within 60 s; replicas in the second directory: %v", victim, inSecond)
	}
	t.Logf("replicas in %s: %v; Metadata offline replica %d on %d partitions %.1fs after the directory was replaced by a file", second, inSecond, victim, len(offline), kafkaAt.Seconds())

	dirs, err := adm.DescribeLogDirs(brokers)
	must(t, err)
	for _, d := range dirs[victim] {
		t.Logf("DescribeLogDirs broker %d: %s error %v, %d topics", victim, d.Path, d.ErrorCode, len(d.Topics))
		if d.Path == second && d.ErrorCode != sarama.ErrKafkaStorageError {
			t.Errorf("DescribeLogDirs: %s answered %v, want KAFKA_STORAGE_ERROR", d.Path, d.ErrorCode)
		}
	}

	took := s.eventually(ctx, 15*time.Second, "each offline replica exported as offline by its leader's sidecar", func(m map[int32]stack.Metrics) string {
		for p := range offline {
			st, err := c.Partition(topic, p)
			if err != nil {
				return err.Error()
			}
			rep := map[string]string{"topic": topic, "partition": fmt.Sprint(p), "replica": strconv.Itoa(victim)}
			if msg := expect(m[st.Leader], gauge("kafka_replication_partition_replica_offline", rep, eq(1))); msg != "" {
				return fmt.Sprintf("sidecar %d: %s", st.Leader, msg)
			}
			if m[st.Leader].Count("kafka_replication_partition_replica_lag", rep) > 0 {
				return fmt.Sprintf("sidecar %d still exports a lag for offline replica %d of %s-%d", st.Leader, victim, topic, p)
			}
		}
		return ""
	})
	t.Logf("exporter: partition_replica_offline{replica=\"%d\"} 1 on every such partition %.1fs after Kafka's Metadata",
		victim, took.Seconds())

	// The directory by name: the broker's own line, then the sidecars.
	serverLog, err := os.ReadFile(filepath.Join(c.Node(victim).LogDir, "server.log"))
	must(t, err)
	stopping := "Stopping serving replicas in dir " + second
	i := strings.Index(string(serverLog), stopping)
	if i < 0 {
		t.Fatalf("broker %d logged no %q", victim, stopping)
	}
	// The line's own time: "[2026-12-02 03:37:29,858] WARN [ReplicaManager …".
	lineStart := strings.LastIndexByte(string(serverLog[:i]), '\n') + 1
	loggedAt, err := time.ParseInLocation("[2006-01-02 15:04:05,000]", string(serverLog[lineStart:lineStart+25]), time.Local)
	must(t, err)
	s.eventually(ctx, 15*time.Second, "every directory exported as DescribeLogDirs answers it", func(m map[int32]stack.Metrics) string {
		return logDirsAgree(ctx, m, whole, brokers, dirs)
	})
	t.Logf("exporter: log_dir_offline{broker=%q,dir=%q} 1 on broker %d's own sidecar %.1fs after Kafka logged the line (%.1fs after "+
		"the directory was replaced, scrapes 0.5 s apart); broker_log_dir_offline as DescribeLogDirs answers on the sidecars and the "+
		"cluster-scope exporter by %.1fs",
		own["broker"], second, victim, logSeen.Sub(loggedAt).Seconds(), loggedAt.Sub(broke).Seconds(), time.Since(broke).Seconds())
	if loop != nil {
		waitAlert(ctx, t, loop.hook, "firing", "KafkaBrokerLogDirOffline", map[string]string{"topic": ""}, 30*time.Second)
		waitAlert(ctx, t, loop.hook, "firing", "KafkaReplicaLogDirOffline", map[string]string{"topic": topic}, 30*time.Second)
		for _, a := range loop.hook.Alerts() {
			if a.Labels["alertname"] == "KafkaBrokerLogDirOffline" && (a.Labels["broker"] != own["broker"] || a.Labels["dir"] != second || a.Labels["instance"] != "") {
				t.Errorf("KafkaBrokerLogDirOffline %v, want one alert for broker %s, dir %s, whoever reported it", a.Labels, own["broker"], second)
			}
		}
		t.Logf("alert loop: KafkaBrokerLogDirOffline at Alertmanager %.1fs after the directory was replaced", time.Since(broke).Seconds())
	}

	// The runbook's fix: the directory back, the broker restarted.
	must(t, os.Remove(second))
	must(t, os.Rename(second+".gone", second))
	restarted := time.Now()
	must(t, c.StopNode(ctx, victim))
	must(t, c.StartNode(ctx, victim))
	back := map[int32]bool{}
	_ = waitFor(ctx, 60*time.Second, func() bool {
		for p := range offline {
			if st, err := c.Partition(topic, p); err == nil && !slices.Contains(st.Offline, victim) {
				back[p] = true
			}
		}
		return len(back) == len(offline)
	})
	if len(back) != len(offline) {
		t.Fatalf("after the restart Metadata still lists replica %d offline on %d of %d partitions", victim, len(offline)-len(back), len(offline))
	}
	// The admin client's connection to broker 3 died with it: ask until it answers.
	err = waitFor(ctx, 20*time.Second, func() bool {
		if dirs, err = adm.DescribeLogDirs(brokers); err != nil || len(dirs[victim]) == 0 {
			return false
		}
		for _, d := range dirs[victim] {
			if d.ErrorCode != sarama.ErrNoError {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("after the restart DescribeLogDirs of broker %d: %v, %+v", victim, err, dirs[victim])
	}
	s.eventually(ctx, 20*time.Second, "every directory online again, the log's too, and no offline replica", func(m map[int32]stack.Metrics) string {
		if msg := expect(m[victim], gauge("kafka_replication_log_dir_offline", own, eq(0))); msg != "" {
			return msg
		}
		for id, mm := range m {
			if n := mm.Count("kafka_replication_partition_replica_offline", map[string]string{"topic": topic}); n > 0 {
				return fmt.Sprintf("sidecar %d still exports %d offline replicas", id, n)
			}
		}
		return logDirsAgree(ctx, m, whole, brokers, dirs)
	})
	if loop != nil {
		waitAlert(ctx, t, loop.hook, "resolved", "KafkaBrokerLogDirOffline", map[string]string{"topic": ""}, 30*time.Second)
	}
	t.Logf("directory back and broker %d restarted: every series online %.1fs after the restart began; scenario %v",
		victim, time.Since(restarted).Seconds(), time.Since(began).Round(time.Second))
}

// logDirsAgree says what is wrong unless every directory of answers has
// broker_log_dir_offline 1 (KAFKA_STORAGE_ERROR) or 0 (healthy) on its own
// broker's sidecar and on the cluster-scope exporter whole, and no sidecar
// exports another broker's directories.
func logDirsAgree(ctx context.Context, m map[int32]stack.Metrics, whole *stack.Exporter, brokers []int32, answers map[int32][]sarama.DescribeLogDirsResponseDirMetadata) string {
	const name = "kafka_replication_broker_log_dir_offline"
	cluster, err := stack.Scrape(ctx, whole.URL)
	if err != nil {
		return "cluster-scope exporter: " + err.Error()
	}
	for _, b := range brokers {
		id := strconv.Itoa(int(b))
		if len(answers[b]) == 0 {
			return fmt.Sprintf("DescribeLogDirs: no directory of broker %d", b)
		}
		for _, d := range answers[b] {
			want := 0.0
			if d.ErrorCode == sarama.ErrKafkaStorageError {
				want = 1
			}
			l := map[string]string{"broker": id, "dir": d.Path}
			if msg := expect(m[b], gauge(name, l, eq(want))); msg != "" {
				return fmt.Sprintf("sidecar %d: %s", b, msg)
			}
			if msg := expect(cluster, gauge(name, l, eq(want))); msg != "" {
				return "cluster-scope exporter: " + msg
			}
		}
		if n, all := m[b].Count(name, map[string]string{"broker": id}), m[b].Count(name, nil); n != all {
			return fmt.Sprintf("sidecar %d exports %d directories of other brokers in leader scope", b, all-n)
		}
	}
	return ""
}

// startLogDirAlertLoop is the alert loop of TestAlertLoop over targets, with
// the rules at their own time scale (the log-directory alerts have no for:);
// nil without Prometheus and Alertmanager.
func startLogDirAlertLoop(ctx context.Context, t *testing.T, targets []stack.Target) *lossAlertLoop {
	t.Helper()
	if err := alertingToolsMissing(); err != nil {
		t.Logf("no alert loop: %v", err)
		return nil
	}
	prom, _, hook := startAlerting(ctx, t, t.TempDir(), targets, 1)
	return &lossAlertLoop{prom: prom, hook: hook}
}

// askedForNone sends the poller's DescribeLogDirs (one topic, no partition;
// internal/poller/fetch_logdirs.go) to the broker at addr and checks that
// Kafka answers every directory and not one partition.
func askedForNone(t *testing.T, addr string) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = sarama.V3_9_0_0
	b := sarama.NewBroker(addr)
	must(t, b.Open(conf))
	defer b.Close()
	resp, err := b.DescribeLogDirs(&sarama.DescribeLogDirsRequest{
		Version:        4,
		DescribeTopics: []sarama.DescribeLogDirsRequestTopic{{Topic: "kafka_replication_exporter", PartitionIDs: []int32{}}},
	})
	must(t, err)
	if len(resp.LogDirs) != 2 {
		t.Errorf("DescribeLogDirs for no partition: %d directories, want both", len(resp.LogDirs))
	}
	for _, d := range resp.LogDirs {
		if len(d.Topics) != 0 {
			t.Errorf("DescribeLogDirs for no partition: %s answered %d topics, want none", d.Path, len(d.Topics))
		}
	}
	t.Logf("DescribeLogDirs for no partition: %d directories, no topic", len(resp.LogDirs))
}
