package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
	caFile, keystore := writeTestPKI(t, dir)

	saslPort := map[int32]int{}
	c := harness.StartT(t, harness.Options{
		Version: kafkaCurrent,
		BrokerConfig: map[string]string{
			"listener.security.protocol.map":                               "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
			"sasl.enabled.mechanisms":                                      "SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config":        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
			"listener.name.sasl_ssl.ssl.keystore.type":                     "PEM",
			"listener.name.sasl_ssl.ssl.keystore.location":                 keystore,
			"listener.name.sasl_ssl.ssl.endpoint.identification.algorithm": "",
		},
		NodeConfig: func(n *harness.Node) map[string]string {
			port := freeTCPPort(t)
			saslPort[n.ID] = port
			sasl := fmt.Sprintf("SASL_SSL://127.0.0.1:%d", port)
			return map[string]string{
				"listeners":            "PLAINTEXT://" + n.BrokerAddr + "," + sasl,
				"advertised.listeners": "PLAINTEXT://" + n.BrokerAddr + "," + sasl,
			}
		},
	})
	admin, err := c.Admin()
	must(t, err)
	defer admin.Close()
	_, err = admin.UpsertUserScramCredentials([]sarama.AlterUserScramCredentialsUpsert{{
		Name: "exporter", Mechanism: sarama.SCRAM_MECHANISM_SHA_512, Iterations: 8192, Password: []byte("s3cret-pw"),
		Salt: []byte("kre-e2e-salt-0123"), // sarama encodes a nil salt as a null Kafka 4.1 rejects
	}})
	must(t, err)
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "secure", Assignment: [][]int32{{1, 2, 3}}}))
	produceOK(ctx, t, c, "secure", 3, sarama.WaitForAll)

	run := func(name, password string) string {
		pwFile := filepath.Join(dir, name+".pw")
		must(t, os.WriteFile(pwFile, []byte(password+"\n"), 0o600))
		addr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
		cmd := exec.Command(exporterBinary(t), "serve", "--web.listen-address="+addr,
			fmt.Sprintf("--kafka.server=127.0.0.1:%d", saslPort[1]), "--kafka.broker-id=1", "--scope=cluster",
			"--kafka.refresh-interval=1s", "--kafka.request-timeout=5s",
			"--kafka.tls.enabled", "--kafka.tls.ca-file="+caFile,
			"--kafka.sasl.mechanism=scram-sha-512", "--kafka.sasl.username=exporter", "--kafka.sasl.password-file="+pwFile)
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		must(t, err)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		must(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Kill() // fails only once the exporter has exited
			_ = cmd.Wait()         // killed: its exit status says nothing
			logf.Close()
		})
		return "http://" + addr + "/metrics"
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

// writeTestPKI writes a CA certificate and a PEM keystore (PKCS#8 key and
// certificate chain, Kafka's ssl.keystore.type=PEM) for 127.0.0.1.
func writeTestPKI(t *testing.T, dir string) (caFile, keystore string) {
	t.Helper()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafka_replication_exporter test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	must(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	must(t, err)
	caFile, keystore = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "keystore.pem")
	must(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600))
	ks := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	ks = append(ks, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	must(t, os.WriteFile(keystore, ks, 0o600))
	return caFile, keystore
}
