package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
)

// saslNodes is the second listener of a secured cluster's nodes: SASL on a
// port of each node's own, beside the PLAINTEXT listener the harness and its
// clients keep using, so only the exporter under test goes through SASL.
type saslNodes struct {
	protocol string        // SASL_SSL or SASL_PLAINTEXT
	port     map[int32]int // by node id, filled as the harness configures each node
	caFile   string        // SASL_SSL: the CA the clients trust
	keystore string        // SASL_SSL: the brokers' PEM keystore, for 127.0.0.1
}

// secureCluster is a SASL_SSL listener on every node, under a CA and a
// keystore it writes into dir.
func secureCluster(t *testing.T, dir string) *saslNodes {
	t.Helper()
	caFile, keystore := writeTestPKI(t, dir)
	return &saslNodes{protocol: "SASL_SSL", port: map[int32]int{}, caFile: caFile, keystore: keystore}
}

// saslPlaintextCluster is a SASL_PLAINTEXT listener on every node.
func saslPlaintextCluster() *saslNodes {
	return &saslNodes{protocol: "SASL_PLAINTEXT", port: map[int32]int{}}
}

// options are the harness options of a kafkaCurrent cluster with the
// listener on every node; brokerConfig adds the scenario's SASL mechanisms
// and their JAAS settings.
func (s *saslNodes) options(t *testing.T, brokerConfig map[string]string) harness.Options {
	listener := "listener.name." + strings.ToLower(s.protocol) + "."
	conf := map[string]string{
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT," + s.protocol + ":" + s.protocol,
	}
	if s.keystore != "" {
		conf[listener+"ssl.keystore.type"] = "PEM"
		conf[listener+"ssl.keystore.location"] = s.keystore
		conf[listener+"ssl.endpoint.identification.algorithm"] = "" // the certificate names 127.0.0.1 by IP
	}
	maps.Copy(conf, brokerConfig)
	return harness.Options{
		Version:      kafkaCurrent,
		BrokerConfig: conf,
		NodeConfig: func(n *harness.Node) map[string]string {
			port := freeTCPPort(t)
			s.port[n.ID] = port
			listeners := fmt.Sprintf("PLAINTEXT://%s,%s://127.0.0.1:%d", n.BrokerAddr, s.protocol, port)
			return map[string]string{"listeners": listeners, "advertised.listeners": listeners}
		},
	}
}

// server is the --kafka.server flag naming node id's SASL listener.
func (s *saslNodes) server(id int32) string {
	return fmt.Sprintf("--kafka.server=127.0.0.1:%d", s.port[id])
}

// createSCRAMUser creates a SCRAM-SHA-512 user through the admin API.
func createSCRAMUser(t *testing.T, c *harness.Cluster, name, password string) {
	t.Helper()
	admin, err := c.Admin()
	must(t, err)
	defer admin.Close()
	_, err = admin.UpsertUserScramCredentials([]sarama.AlterUserScramCredentialsUpsert{{
		Name: name, Mechanism: sarama.SCRAM_MECHANISM_SHA_512, Iterations: 8192, Password: []byte(password),
		Salt: []byte("kre-e2e-salt-0123"), // sarama encodes a nil salt as a null Kafka 4.1 rejects
	}})
	must(t, err)
}

// runAdminExporter starts `serve` with args on port 0, its output in
// logPath, and returns its /metrics URL once it has bound its listener
// (read from --web.listen-address-file). It is killed and reaped at the end
// of the test; if the test failed, its log is shown.
func runAdminExporter(t *testing.T, logPath string, args ...string) string {
	t.Helper()
	addrFile := logPath + ".addr"
	args = append([]string{"serve", "--web.listen-address=127.0.0.1:0", "--web.listen-address-file=" + addrFile}, args...)
	cmd := exec.Command(exporterBinary(t), args...)
	logf, err := os.Create(logPath)
	must(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // killed at the end: its exit status says nothing
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // fails only once the exporter has exited
		<-exited
		logf.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("%s:\n%s", filepath.Base(logPath), out)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return "http://" + strings.TrimSpace(string(b)) + "/metrics"
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("the exporter exited before binding its listener:\n%s", out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30s", addrFile)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
