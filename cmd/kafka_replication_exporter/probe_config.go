package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/kafkaauth"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/poller"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/secretfile"
)

// probeConfigLimit bounds --probe.config-file: a thousand clusters with
// every field set are well under it.
const probeConfigLimit = 1 << 20

// probeFile is --probe.config-file as written: the clusters /probe may be
// asked about, by name, each with what the --kafka.* flags would say of it.
type probeFile struct {
	Targets map[string]probeTargetFile `yaml:"targets"`
}

type probeTargetFile struct {
	Servers         []string       `yaml:"servers"`
	RefreshInterval time.Duration  `yaml:"refresh_interval"`
	TLS             *probeTLSFile  `yaml:"tls"`
	SASL            *probeSASLFile `yaml:"sasl"`
}

type probeTLSFile struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

type probeSASLFile struct {
	Mechanism    string `yaml:"mechanism"`
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"password_file"`
	OAuthBearer  *struct {
		TokenURL         string            `yaml:"token_url"`
		ClientID         string            `yaml:"client_id"`
		ClientSecretFile string            `yaml:"client_secret_file"`
		Scopes           []string          `yaml:"scopes"`
		Extensions       map[string]string `yaml:"extensions"`
	} `yaml:"oauthbearer"`
	AWSMSKIAM *struct {
		Region string `yaml:"region"`
	} `yaml:"aws_msk_iam"`
}

// probeTarget is one cluster of a loaded configuration.
type probeTarget struct {
	name string
	file probeTargetFile // as written: a reload that leaves it equal keeps its poller
	cfg  *poller.Config  // checked: its TLS and secret files were read
}

// probeConfig is one successful load of --probe.config-file.
type probeConfig struct {
	targets map[string]*probeTarget
	raw     []byte // the file's contents, to tell a changed file
}

// targetName is what a target may be called: it is echoed in answers and
// logs, so nothing that needs quoting.
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// loadProbeConfig reads and checks the file: every target's TLS and secret
// files are read, as the flags' are at start-up. base is the process's own
// admin flags, whose settings the file does not name (Kafka version,
// request timeout, stall threshold, collectors) apply to every target.
func loadProbeConfig(path string, base *poller.Config) (*probeConfig, error) {
	raw, err := secretfile.Read(path, probeConfigLimit)
	if err != nil {
		return nil, err
	}
	return parseProbeConfig(path, raw, base)
}

// parseProbeConfig is loadProbeConfig of the file's contents raw.
func parseProbeConfig(path string, raw []byte, base *poller.Config) (*probeConfig, error) {
	var f probeFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", path, oneLine(err.Error()))
	}
	if len(f.Targets) == 0 {
		return nil, fmt.Errorf("%s: no targets: want a map targets: {NAME: {servers: [host:port]}}", path)
	}
	names := make([]string, 0, len(f.Targets))
	for name := range f.Targets {
		names = append(names, name)
	}
	slices.Sort(names)
	pc := &probeConfig{targets: make(map[string]*probeTarget, len(names)), raw: raw}
	for _, name := range names {
		tf := f.Targets[name]
		cfg, err := tf.pollerConfig(name, base)
		if err != nil {
			return nil, fmt.Errorf("%s: target %s: %w", path, name, err)
		}
		pc.targets[name] = &probeTarget{name: name, file: tf, cfg: cfg}
	}
	return pc, nil
}

// pollerConfig is the admin configuration of one target: base with the
// target's servers, TLS, SASL and refresh interval, always in cluster scope.
func (tf probeTargetFile) pollerConfig(name string, base *poller.Config) (*poller.Config, error) {
	if !targetName.MatchString(name) {
		return nil, errors.New("want a name of letters, digits and . _ : - (at most 128)")
	}
	if len(tf.Servers) == 0 {
		return nil, errors.New("servers: want at least one host:port")
	}
	if tf.RefreshInterval < 0 {
		return nil, errors.New("refresh_interval must be positive")
	}
	c := *base
	c.Servers = slices.Clone(tf.Servers)
	c.Scope = poller.ScopeCluster
	c.BrokerID = -1
	c.PartitionLogLevel = "" // a write to one broker's logger: never for a probed cluster
	if tf.RefreshInterval > 0 {
		c.RefreshInterval = tf.RefreshInterval
	}
	c.TLSEnabled, c.TLSCAFile, c.TLSCertFile, c.TLSKeyFile, c.TLSServerName, c.TLSInsecureSkipVerify = false, "", "", "", "", false
	if t := tf.TLS; t != nil {
		c.TLSEnabled, c.TLSCAFile, c.TLSCertFile, c.TLSKeyFile = true, t.CAFile, t.CertFile, t.KeyFile
		c.TLSServerName, c.TLSInsecureSkipVerify = t.ServerName, t.InsecureSkipVerify
	}
	c.SASLMechanism, c.SASLUsername, c.SASLPasswordFile = "", "", ""
	c.OAuth = &kafkaauth.Flags{}
	if s := tf.SASL; s != nil {
		c.SASLMechanism, c.SASLUsername, c.SASLPasswordFile = strings.ToLower(s.Mechanism), s.Username, s.PasswordFile
		switch c.SASLMechanism {
		case "plain", "scram-sha-256", "scram-sha-512":
			if s.PasswordFile == "" {
				return nil, fmt.Errorf("sasl: mechanism %s needs password_file", c.SASLMechanism)
			}
		case kafkaauth.MechanismOAuthBearer, kafkaauth.MechanismMSKIAM:
		default:
			return nil, fmt.Errorf("sasl: mechanism %q: want plain, scram-sha-256, scram-sha-512, oauthbearer or aws-msk-iam", s.Mechanism)
		}
		if o := s.OAuthBearer; o != nil {
			c.OAuth.TokenURL, c.OAuth.ClientID, c.OAuth.ClientSecretFile, c.OAuth.Scopes = o.TokenURL, o.ClientID, o.ClientSecretFile, o.Scopes
			for _, k := range slices.Sorted(maps.Keys(o.Extensions)) {
				c.OAuth.Extensions = append(c.OAuth.Extensions, k+"="+o.Extensions[k])
			}
		}
		if m := s.AWSMSKIAM; m != nil {
			c.OAuth.MSKRegion = m.Region
		}
	}
	// The checks and file reads of the flags; their messages name the
	// flags (--kafka.tls.ca-file …) the file's fields stand for.
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
