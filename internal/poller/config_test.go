package poller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/kafkanet"
)

// parseAdminFlags parses args with the SASL password variable set to
// env[saslPasswordEnv] or, when env has no such key, unset.
func parseAdminFlags(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	t.Setenv(saslPasswordEnv, "") // restored when the test ends
	if v, ok := env[saslPasswordEnv]; ok {
		t.Setenv(saslPasswordEnv, v)
	} else {
		os.Unsetenv(saslPasswordEnv)
	}
	app := kingpin.New("test", "")
	cmd := app.Command("serve", "").Default()
	cfg := AddFlags(cmd)
	if _, err := app.Parse(args); err != nil {
		return nil, err
	}
	return cfg, cfg.Validate()
}

func TestAdminFlagDefaults(t *testing.T) {
	cfg, err := parseAdminFlags(t, nil, "--kafka.server=localhost:9092")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != "3.9.0" || cfg.BrokerID != -1 || cfg.Scope != ScopeLeader ||
		cfg.RefreshInterval != 15*time.Second || cfg.RequestTimeout != 10*time.Second ||
		cfg.StallThreshold != 2*time.Minute || cfg.PartitionLogLevel != "" ||
		cfg.Groups.LastStableOffset || cfg.Groups.LSOStallThreshold != 5*time.Minute {
		t.Errorf("unexpected defaults: %+v", cfg)
	}
	sc, ec, err := cfg.clientConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if sc.Net.ReadTimeout != 10*time.Second || sc.Net.DialTimeout != 10*time.Second {
		t.Errorf("want request timeout applied to sarama, got dial %v read %v", sc.Net.DialTimeout, sc.Net.ReadTimeout)
	}
	if ec.Timeout != 10*time.Second || len(ec.Seeds) != 1 || ec.Seeds[0] != "localhost:9092" || ec.TLS != nil || ec.SASLMechanism != "" {
		t.Errorf("want the ELR reader on the same seeds and timeout, plaintext, got %+v", ec)
	}
}

// TestAdminClientsConnectAlike: TLS and SASL flags reach both the sarama
// client and the ELR reader, from one reading of the password file.
func TestAdminClientsConnectAlike(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseAdminFlags(t, nil, "--kafka.server=k:9093", "--kafka.tls.enabled", "--kafka.tls.server-name=kafka.example",
		"--kafka.sasl.mechanism=scram-sha-256", "--kafka.sasl.username=exporter", "--kafka.sasl.password-file="+pw)
	if err != nil {
		t.Fatal(err)
	}
	sc, ec, err := cfg.clientConfigs()
	if err != nil {
		t.Fatal(err)
	}
	// sarama dials through kafkanet, which does the TLS handshake itself.
	d, ok := sc.Net.Proxy.Dialer.(*kafkanet.Dialer)
	if !ok || d.TLS != ec.TLS || ec.TLS.ServerName != "kafka.example" {
		t.Errorf("want one TLS config for both clients, got sarama's dialer %+v and ELR %+v", sc.Net.Proxy.Dialer, ec.TLS)
	}
	if !sc.Net.SASL.Enable || sc.Net.SASL.User != "exporter" || sc.Net.SASL.Password != "s3cret" ||
		ec.SASLMechanism != "scram-sha-256" || ec.User != "exporter" || ec.Password != "s3cret" {
		t.Errorf("want the same SASL credentials for both clients, got sarama %+v and ELR %+v", sc.Net.SASL, ec)
	}
}

func TestAdminLogOnlyMode(t *testing.T) {
	cfg, err := parseAdminFlags(t, nil)
	if err != nil || len(cfg.Servers) != 0 {
		t.Errorf("want log-only mode valid with no servers, got %v %v", cfg, err)
	}
}

func TestAdminValidate(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string // "" = valid
	}{
		{"scram with password file", nil, []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=scram-sha-512", "--kafka.sasl.username=u", "--kafka.sasl.password-file=" + pw}, ""},
		{"plain with env password", map[string]string{saslPasswordEnv: "x"}, []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=plain", "--kafka.sasl.username=u"}, ""},
		{"sasl without password", nil, []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=plain", "--kafka.sasl.username=u"}, "needs a password"},
		{"password file and env", map[string]string{saslPasswordEnv: "x"}, []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=plain", "--kafka.sasl.username=u", "--kafka.sasl.password-file=" + pw}, "use one"},
		{"sasl without username", nil, []string{"--kafka.server=k:9092", "--kafka.sasl.mechanism=scram-sha-256"}, "username"},
		{"username without mechanism", nil, []string{"--kafka.server=k:9092", "--kafka.sasl.username=u"}, "need --kafka.sasl.mechanism"},
		{"tls file without tls", nil, []string{"--kafka.server=k:9092", "--kafka.tls.ca-file=/x"}, "need --kafka.tls.enabled"},
		{"cert without key", nil, []string{"--kafka.server=k:9092", "--kafka.tls.enabled", "--kafka.tls.cert-file=/x"}, "go together"},
		{"missing ca file", nil, []string{"--kafka.server=k:9092", "--kafka.tls.enabled", "--kafka.tls.ca-file=" + filepath.Join(dir, "nope")}, "ca-file"},
		{"bad version", nil, []string{"--kafka.server=k:9092", "--kafka.version=banana"}, "kafka.version"},
		{"server without port", nil, []string{"--kafka.server=k"}, "host:port"},
		{"zero timeout", nil, []string{"--kafka.server=k:9092", "--kafka.request-timeout=0s"}, "request-timeout"},
		{"zero LSO stall threshold", nil, []string{"--kafka.server=k:9092", "--collector.last-stable-offset", "--collector.last-stable-offset.stall-threshold=0s"}, "stall-threshold must be positive"},
		{"LSO stall threshold unused", nil, []string{"--kafka.server=k:9092", "--collector.last-stable-offset.stall-threshold=0s"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAdminFlags(t, tc.env, tc.args...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("want valid, got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
