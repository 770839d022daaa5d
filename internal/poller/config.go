package poller

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/alecthomas/kingpin/v2"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/kafkaauth"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/kafkanet"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller/elr"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/secretfile"
)

// Scopes of the admin-derived partition series.
const (
	// ScopeLeader exports a partition only from the sidecar of its leader, so N
	// sidecars export each partition once and the series follow leadership.
	ScopeLeader = "leader"
	// ScopeCluster exports every partition (one central deployment).
	ScopeCluster = "cluster"
)

// saslPasswordEnv is where the SASL password comes from when no password file
// is given. There is deliberately no flag: argv is visible in ps and /proc.
const saslPasswordEnv = "KAFKA_REPLICATION_EXPORTER_SASL_PASSWORD"

// Config is the admin-API half of the sidecar's flags. It holds only what
// the user set; how the poller is wired into the sidecar is Options.
type Config struct {
	Servers         []string // bootstrap host:port; none = log-only mode
	Version         string   // Kafka version sarama picks request versions for
	BrokerID        int32    // this sidecar's broker; -1 = match Servers against the broker list
	Scope           string   // ScopeLeader or ScopeCluster
	RefreshInterval time.Duration
	RequestTimeout  time.Duration
	StallThreshold  time.Duration

	TLSEnabled            bool
	TLSCAFile             string
	TLSCertFile           string
	TLSKeyFile            string
	TLSServerName         string
	TLSInsecureSkipVerify bool

	SASLMechanism    string // "", plain, scram-sha-256, scram-sha-512, oauthbearer, aws-msk-iam
	SASLUsername     string
	SASLPasswordFile string
	OAuth            *kafkaauth.Flags // the token flags of oauthbearer and aws-msk-iam

	// PartitionLogLevel, when set (DEBUG or TRACE), raises the
	// kafka.cluster.Partition logger on this broker for the sidecar's
	// lifetime so the log half sees HW lines. Empty = every admin call is
	// read-only.
	PartitionLogLevel string

	// LogDirs: ask the brokers which of their log directories failed
	// (DescribeLogDirs, fetch_logdirs.go).
	LogDirs bool

	Groups GroupsConfig // the consumer-group collector (groups_config.go)

	Tiering TieringConfig // the tiered-storage read (tiering_config.go)
}

// AddFlags registers the admin-API flags on cmd.
func AddFlags(cmd *kingpin.CmdClause) *Config {
	c := &Config{}
	cmd.Flag("kafka.server", "Kafka bootstrap address host:port (repeatable). None: log-only mode, no admin API calls.").
		StringsVar(&c.Servers)
	cmd.Flag("kafka.version", "Kafka version used to choose request versions (a floor is safe; sarama clamps to what the broker advertises).").
		Default("3.9.0").StringVar(&c.Version)
	cmd.Flag("kafka.broker-id", "Broker id of the broker this sidecar runs beside; -1 = find it: the id its log lines name, "+
		"else the broker advertised at --kafka.server's IP and port.").
		Default("-1").Int32Var(&c.BrokerID)
	cmd.Flag("scope", "Which partitions the admin-derived series cover: leader (partitions led by this broker) or cluster (all).").
		Default(ScopeLeader).EnumVar(&c.Scope, ScopeLeader, ScopeCluster)
	cmd.Flag("kafka.refresh-interval", "How often the admin API is polled in the background (a scrape only reads the last result).").
		Default("15s").DurationVar(&c.RefreshInterval)
	cmd.Flag("kafka.request-timeout", "Timeout for dialing and for each admin request; a refresh waits at most the smaller of this and "+
		"--kafka.refresh-interval, then goes on without the brokers that did not answer.").
		Default("10s").DurationVar(&c.RequestTimeout)
	cmd.Flag("stall.threshold", "How long the high watermark of a partition may stay still while its log end offset is ahead "+
		"(whatever the ISR says) before it counts as stalled.").
		Default("2m").DurationVar(&c.StallThreshold)

	cmd.Flag("kafka.tls.enabled", "Connect to Kafka with TLS.").BoolVar(&c.TLSEnabled)
	cmd.Flag("kafka.tls.ca-file", "PEM CA bundle to verify the brokers (default: system roots).").StringVar(&c.TLSCAFile)
	cmd.Flag("kafka.tls.cert-file", "PEM client certificate for mutual TLS.").StringVar(&c.TLSCertFile)
	cmd.Flag("kafka.tls.key-file", "PEM client key for mutual TLS.").StringVar(&c.TLSKeyFile)
	cmd.Flag("kafka.tls.server-name", "Server name to verify in broker certificates (default: the host dialed).").StringVar(&c.TLSServerName)
	cmd.Flag("kafka.tls.insecure-skip-verify", "Do not verify broker certificates (testing only).").BoolVar(&c.TLSInsecureSkipVerify)

	cmd.Flag("kafka.sasl.mechanism", "SASL mechanism: plain, scram-sha-256, scram-sha-512, oauthbearer or aws-msk-iam (empty: no SASL).").
		Default("").EnumVar(&c.SASLMechanism, "", "plain", "scram-sha-256", "scram-sha-512", kafkaauth.MechanismOAuthBearer, kafkaauth.MechanismMSKIAM)
	cmd.Flag("kafka.sasl.username", "SASL username.").StringVar(&c.SASLUsername)
	cmd.Flag("kafka.sasl.password-file", "File holding the SASL password (else $"+saslPasswordEnv+").").StringVar(&c.SASLPasswordFile)
	c.OAuth = kafkaauth.AddFlags(cmd)

	cmd.Flag("kafka.partition-log-level", "Raise kafka.cluster.Partition on this broker to DEBUG or TRACE while running (restored on exit). "+
		"Empty: admin calls stay read-only.").
		Default("").EnumVar(&c.PartitionLogLevel, "", "DEBUG", "TRACE")
	cmd.Flag("collector.log-dirs", "Ask each broker whose log directories this sidecar exports (its own in leader scope, every one in cluster "+
		"scope) which have failed: one DescribeLogDirs for no partition per broker and refresh.").
		Default("true").BoolVar(&c.LogDirs)
	addGroupFlags(cmd, &c.Groups)
	addTieringFlags(cmd, &c.Tiering)
	return c
}

// Validate checks cross-flag constraints and that the TLS and SASL files can
// be read, so that a mistake stops the sidecar at start-up. Log-only mode (no
// --kafka.server) is always valid.
func (c *Config) Validate() error {
	if err := c.Groups.validate(len(c.Servers) > 0); err != nil {
		return err
	}
	if err := c.Tiering.validate(len(c.Servers) > 0); err != nil {
		return err
	}
	if len(c.Servers) == 0 {
		return nil
	}
	_, _, err := c.clientConfigs()
	return err
}

// clientConfigs builds both Kafka clients' configurations from one reading of
// the flags and files: sarama's for most requests, and the ELR reader's
// (franz-go, for DescribeTopicPartitions), so the two connect alike.
func (c *Config) clientConfigs() (*sarama.Config, elr.Config, error) {
	conn, err := c.connection()
	if err != nil {
		return nil, elr.Config{}, err
	}
	sc, err := c.saramaConfig(conn)
	if err != nil {
		return nil, elr.Config{}, err
	}
	ec := elr.Config{
		Seeds:         c.Servers,
		TLS:           conn.tls,
		SASLMechanism: conn.saslMechanism,
		User:          conn.user,
		Password:      conn.password,
		Tokens:        conn.tokens,
		Timeout:       c.RequestTimeout,
	}
	return sc, ec, nil
}

// connection is how to reach the brokers, shared by both clients.
type connection struct {
	tls           *tls.Config // nil: plaintext
	saslMechanism string      // "": no SASL
	user          string
	password      string
	tokens        *kafkaauth.TokenSource // oauthbearer, aws-msk-iam: shared by both clients
}

// connection checks the TLS and SASL flags and reads their files.
func (c *Config) connection() (connection, error) {
	var conn connection
	var err error
	if conn.tls, err = c.tlsConfig(); err != nil {
		return connection{}, err
	}
	if err := c.checkSASL(&conn); err != nil {
		return connection{}, err
	}
	if conn.tokens, err = c.OAuth.NewSource(c.SASLMechanism, conn.tls, c.RequestTimeout); err != nil {
		return connection{}, err
	}
	return conn, nil
}

// saramaConfig builds the sarama client configuration the flags describe.
func (c *Config) saramaConfig(conn connection) (*sarama.Config, error) {
	for _, s := range c.Servers {
		if !strings.Contains(s, ":") {
			return nil, fmt.Errorf("--kafka.server %q: want host:port", s)
		}
	}
	version, err := sarama.ParseKafkaVersion(c.Version)
	if err != nil {
		return nil, fmt.Errorf("--kafka.version %q: %w", c.Version, err)
	}
	switch {
	case c.RefreshInterval <= 0:
		return nil, errors.New("--kafka.refresh-interval must be positive")
	case c.RequestTimeout <= 0:
		return nil, errors.New("--kafka.request-timeout must be positive")
	case c.StallThreshold <= 0:
		return nil, errors.New("--stall.threshold must be positive")
	case c.Scope != ScopeLeader && c.Scope != ScopeCluster:
		return nil, fmt.Errorf("--scope %q: want %s or %s", c.Scope, ScopeLeader, ScopeCluster)
	}

	sc := sarama.NewConfig()
	sc.ClientID = "kafka_replication_exporter"
	sc.Version = version
	// A dead broker must cost at most one timeout per request, never a
	// retry storm: the poller retries on its own schedule.
	sc.Net.DialTimeout = c.RequestTimeout
	sc.Net.ReadTimeout = c.RequestTimeout
	sc.Net.WriteTimeout = c.RequestTimeout
	sc.Metadata.Retry.Max = 1
	sc.Metadata.Retry.Backoff = 100 * time.Millisecond
	sc.Metadata.Full = false
	sc.Metadata.RefreshFrequency = 0
	sc.Admin.Timeout = c.RequestTimeout

	if conn.tls != nil {
		sc.Net.TLS.Enable = true
		sc.Net.TLS.Config = conn.tls
	}
	if conn.saslMechanism != "" {
		sc.Net.SASL.Enable = true
		sc.Net.SASL.Handshake = true
		sc.Net.SASL.User = conn.user
		sc.Net.SASL.Password = conn.password
		switch conn.saslMechanism {
		case "plain":
			sc.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		case "scram-sha-256":
			sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
			sc.Net.SASL.SCRAMClientGeneratorFunc = newSCRAMSHA256Client
		case "scram-sha-512":
			sc.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
			sc.Net.SASL.SCRAMClientGeneratorFunc = newSCRAMSHA512Client
		case kafkaauth.MechanismOAuthBearer, kafkaauth.MechanismMSKIAM:
			sc.Net.SASL.Mechanism = sarama.SASLTypeOAuth
			sc.Net.SASL.TokenProvider = conn.tokens.Sarama()
		}
	}
	// sarama trusts the size prefix of a peer's first answer; the bounded
	// dialer refuses an absurd one before anything is allocated.
	if err := kafkanet.Install(sc); err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("kafka client configuration: %w", err)
	}
	return sc, nil
}

// tlsConfig is the TLS configuration the flags describe; nil for plaintext.
func (c *Config) tlsConfig() (*tls.Config, error) {
	if !c.TLSEnabled {
		if c.TLSCAFile != "" || c.TLSCertFile != "" || c.TLSKeyFile != "" || c.TLSServerName != "" || c.TLSInsecureSkipVerify {
			return nil, errors.New("--kafka.tls.* options need --kafka.tls.enabled")
		}
		return nil, nil
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return nil, errors.New("--kafka.tls.cert-file and --kafka.tls.key-file go together")
	}
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         c.TLSServerName,
		InsecureSkipVerify: c.TLSInsecureSkipVerify, //nolint:gosec // explicit opt-in flag
	}
	if c.TLSCAFile != "" {
		pem, err := secretfile.Read(c.TLSCAFile, secretfile.PEMLimit)
		if err != nil {
			return nil, fmt.Errorf("--kafka.tls.ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--kafka.tls.ca-file %s: no PEM certificate found", c.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if c.TLSCertFile != "" {
		certPEM, err := secretfile.Read(c.TLSCertFile, secretfile.PEMLimit)
		if err != nil {
			return nil, fmt.Errorf("--kafka.tls.cert-file: %w", err)
		}
		keyPEM, err := secretfile.Read(c.TLSKeyFile, secretfile.PEMLimit)
		if err != nil {
			return nil, fmt.Errorf("--kafka.tls.key-file: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("--kafka.tls.cert-file/--kafka.tls.key-file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// checkSASL checks the SASL flags and reads the password into conn.
func (c *Config) checkSASL(conn *connection) error {
	if c.SASLMechanism == "" || c.SASLMechanism == kafkaauth.MechanismOAuthBearer || c.SASLMechanism == kafkaauth.MechanismMSKIAM {
		if c.SASLUsername != "" || c.SASLPasswordFile != "" {
			return errors.New("--kafka.sasl.username/--kafka.sasl.password-file need --kafka.sasl.mechanism plain or scram-*")
		}
		conn.saslMechanism = c.SASLMechanism // the token flags are checked by kafkaauth
		return nil
	}
	switch c.SASLMechanism {
	case "plain", "scram-sha-256", "scram-sha-512":
	default:
		return fmt.Errorf("--kafka.sasl.mechanism %q: want plain, scram-sha-256 or scram-sha-512", c.SASLMechanism)
	}
	if c.SASLUsername == "" {
		return fmt.Errorf("--kafka.sasl.mechanism %s needs --kafka.sasl.username", c.SASLMechanism)
	}
	password, err := c.saslPassword()
	if err != nil {
		return err
	}
	conn.saslMechanism, conn.user, conn.password = c.SASLMechanism, c.SASLUsername, password
	return nil
}

// saslPassword reads the password file, else the environment. Both set is an
// error: which one wins would be a guess.
func (c *Config) saslPassword() (string, error) {
	env, envSet := os.LookupEnv(saslPasswordEnv)
	switch {
	case c.SASLPasswordFile != "" && envSet:
		return "", fmt.Errorf("both --kafka.sasl.password-file and $%s are set; use one", saslPasswordEnv)
	case c.SASLPasswordFile != "":
		b, err := secretfile.Read(c.SASLPasswordFile, secretfile.SecretLimit)
		if err != nil {
			return "", fmt.Errorf("--kafka.sasl.password-file: %w", err)
		}
		p := strings.TrimRight(string(b), "\r\n")
		if p == "" {
			return "", fmt.Errorf("--kafka.sasl.password-file %s is empty", c.SASLPasswordFile)
		}
		return p, nil
	case envSet && env != "":
		return env, nil
	}
	return "", fmt.Errorf("SASL needs a password: --kafka.sasl.password-file or $%s", saslPasswordEnv)
}
