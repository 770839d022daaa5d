package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// TestSecureAdmin points the sidecar at a real broker's SASL_SSL listener
// (TLS with the test's own CA, SCRAM-SHA-512) — the way most production
// clusters are reached — and checks that the admin half works with the right
// credentials and reports up=0 with the wrong ones, never crashing.
//
// How (4.4.0): a SASL_SSL listener on every node (CA and PEM keystore made by the test, a SCRAM-SHA-512 user
// created through the admin API); the exporter with --kafka.tls.ca-file and --kafka.sasl.* reaches
// kafka_replication_up 1 and sees the topic; with a wrong password up 0 and metadata errors counted. sarama needs
// an explicit salt for UpsertUserScramCredentials: a nil salt is encoded as a null that Kafka 4.1 rejects. 12 s.
func TestSecureAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	sasl := secureCluster(t, dir)
	c := harness.StartT(t, sasl.options(t, map[string]string{
		"sasl.enabled.mechanisms":                               "SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	}))
	createSCRAMUser(t, c, "exporter", "s3cret-pw")
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "secure", Assignment: [][]int32{{1, 2, 3}}}))
	produceOK(ctx, t, c, "secure", 3, sarama.WaitForAll)

	run := func(name, password string) string {
		pwFile := filepath.Join(dir, name+".pw")
		must(t, os.WriteFile(pwFile, []byte(password+"\n"), 0o600))
		return runAdminExporter(t, filepath.Join(dir, name+".log"),
			sasl.server(1), "--kafka.broker-id=1", "--scope=cluster",
			"--kafka.refresh-interval=1s", "--kafka.request-timeout=5s",
			"--kafka.tls.enabled", "--kafka.tls.ca-file="+sasl.caFile,
			"--kafka.sasl.mechanism=scram-sha-512", "--kafka.sasl.username=exporter", "--kafka.sasl.password-file="+pwFile)
	}
	good, bad := run("good", "s3cret-pw"), run("bad", "wrong")

	waitMetrics(ctx, t, good, "SCRAM + TLS: up 1 and the topic's partition seen", func(m stack.Metrics) bool {
		up, _ := m.Value("kafka_replication_up", nil)
		replicas, ok := m.Value("kafka_replication_partition_replicas", map[string]string{"topic": "secure", "partition": "0"})
		return up == 1 && ok && replicas == 3
	})
	waitMetrics(ctx, t, bad, "wrong password: up 0 and metadata errors counted", func(m stack.Metrics) bool {
		up, okUp := m.Value("kafka_replication_up", nil)
		errs, _ := m.Value("kafka_replication_admin_request_errors_total", map[string]string{"request": "metadata"})
		return okUp && up == 0 && errs > 0
	})
}

// waitMetrics scrapes url until cond holds or ctx expires.
func waitMetrics(ctx context.Context, t *testing.T, url, what string, cond func(stack.Metrics) bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		m, err := stack.Scrape(ctx, url)
		if err == nil && cond(m) {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not within 90s (last scrape error: %v)", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// freeTCPPort is a port from the harness's block below the kernel's ephemeral
// range, so no outgoing connection can take it before the process binds it.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	port, err := harness.ListenPort()
	must(t, err)
	return port
}
