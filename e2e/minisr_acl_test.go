package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// warnedOnce is the WARN that names the topic without a min ISR.
var warnedOnce = regexp.MustCompile(`(?m)^.*level=WARN.*Cannot read min\.insync\.replicas.*reason=authorization_failed.*closed.*$`)

// TestMinISRWithoutDescribeConfigsACL runs Kafka with real ACLs
// (StandardAuthorizer; the brokers and controller, on PLAINTEXT, are super
// users) and the sidecar as a SCRAM principal that may Describe the cluster
// and every topic but DescribeConfigs only topics prefixed "open". The topic
// it may not describe is unknown, by reason, and keeps its other series;
// once the principal may DescribeConfigs on the cluster, the broker's own
// default stands in for it, and says so.
func TestMinISRWithoutDescribeConfigsACL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()

	acl := map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS",
	}
	sasl := saslPlaintextCluster()
	opts := sasl.options(t, map[string]string{
		"sasl.enabled.mechanisms":                                     "SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	})
	maps.Copy(opts.BrokerConfig, acl)
	opts.ControllerConfig = acl
	c := harness.StartT(t, opts)
	createSCRAMUser(t, c, "exporter", "s3cret-pw")
	admin, err := c.Admin()
	must(t, err)
	defer admin.Close()
	allow := func(typ sarama.AclResourceType, name string, pattern sarama.AclResourcePatternType, op sarama.AclOperation) *sarama.ResourceAcls {
		return &sarama.ResourceAcls{
			Resource: sarama.Resource{ResourceType: typ, ResourceName: name, ResourcePatternType: pattern},
			Acls:     []*sarama.Acl{{Principal: "User:exporter", Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}},
		}
	}
	must(t, admin.CreateACLs([]*sarama.ResourceAcls{
		allow(sarama.AclResourceCluster, "kafka-cluster", sarama.AclPatternLiteral, sarama.AclOperationDescribe),
		allow(sarama.AclResourceTopic, "*", sarama.AclPatternLiteral, sarama.AclOperationDescribe),
		allow(sarama.AclResourceTopic, "open", sarama.AclPatternPrefixed, sarama.AclOperationDescribeConfigs),
	}))
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "open", Assignment: [][]int32{{1, 2, 3}}, Configs: map[string]string{"min.insync.replicas": "3"}}))
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "closed", Assignment: [][]int32{{1, 2, 3}}}))
	produceOK(ctx, t, c, "closed", 3, sarama.WaitForAll)

	pwFile := filepath.Join(dir, "exporter.pw")
	must(t, os.WriteFile(pwFile, []byte("s3cret-pw\n"), 0o600))
	logPath := filepath.Join(dir, "exporter.log")
	url := runAdminExporter(t, logPath,
		sasl.server(1), "--kafka.broker-id=1", "--scope=cluster",
		"--kafka.refresh-interval=1s", "--kafka.request-timeout=5s",
		"--kafka.sasl.mechanism=scram-sha-512", "--kafka.sasl.username=exporter", "--kafka.sasl.password-file="+pwFile)
	closed := map[string]string{"topic": "closed", "partition": "0"}
	open := map[string]string{"topic": "open", "partition": "0"}

	waitMetrics(ctx, t, url, "no DescribeConfigs on the topic nor the cluster: unknown, authorization_failed; the other series stay", func(m stack.Metrics) bool {
		unknown, _ := m.Value("kafka_replication_topics_min_insync_replicas_unknown", map[string]string{"reason": "authorization_failed"})
		errs, _ := m.Value("kafka_replication_admin_answer_errors_total", map[string]string{"request": "describe_configs", "reason": "authorization_failed"})
		openMin, _ := m.Value("kafka_replication_partition_min_insync_replicas", open)
		_, closedMin := m.Value("kafka_replication_partition_min_insync_replicas", closed)
		isr, _ := m.Value("kafka_replication_partition_in_sync_replicas", closed)
		_, hw := m.Value("kafka_replication_partition_high_watermark", closed)
		_, leo := m.Value("kafka_replication_partition_log_end_offset", closed)
		_, stalled := gaugeValue(m, "kafka_replication_partition_high_watermark_stalled", closed)
		return unknown == 1 && errs > 0 && openMin == 3 && !closedMin && isr == 3 && hw && leo && stalled
	})
	logText, _ := os.ReadFile(logPath)
	if !warnedOnce.Match(logText) {
		t.Errorf("no WARN naming the topic:\n%s", logText)
	}

	must(t, admin.CreateACLs([]*sarama.ResourceAcls{
		allow(sarama.AclResourceCluster, "kafka-cluster", sarama.AclPatternLiteral, sarama.AclOperationDescribeConfigs),
	}))
	waitMetrics(ctx, t, url, "DescribeConfigs on the cluster: the broker default stands in, and says so", func(m stack.Metrics) bool {
		unknown, _ := m.Value("kafka_replication_topics_min_insync_replicas_unknown", map[string]string{"reason": "authorization_failed"})
		byDefault, _ := m.Value("kafka_replication_topics_min_insync_replicas_broker_default", map[string]string{"reason": "authorization_failed"})
		closedMin, ok := m.Value("kafka_replication_partition_min_insync_replicas", closed)
		return unknown == 0 && byDefault == 1 && ok && closedMin == 2
	})
}
