package elr

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/kafkaauth"
)

// Config says how to reach the cluster, in plain values, so that the poller
// fills it from the same flags as its sarama client.
type Config struct {
	Seeds         []string      // bootstrap host:port
	TLS           *tls.Config   // nil: plaintext
	SASLMechanism string        // "", "plain", "scram-sha-256", "scram-sha-512", "oauthbearer" or "aws-msk-iam"
	User          string        // SASL user
	Password      string        // SASL password
	Timeout       time.Duration // for a dial and for each request

	Tokens *kafkaauth.TokenSource // oauthbearer, aws-msk-iam: the token source shared with sarama
}

// maxResponseBytes bounds what one response may make the client read. A full
// page of 2000 partitions with replication factor 5 and 249-character topic
// names is under 1 MiB, so this leaves room for any real cluster while a
// hostile peer cannot make the client buffer 100 MiB, kgo's default.
const maxResponseBytes = 16 << 20

// clientOptions turns c into franz-go options; it is the only place the
// config is checked.
func (c Config) clientOptions(maxReadBytes int32) ([]kgo.Opt, error) {
	if len(c.Seeds) == 0 {
		return nil, errors.New("elr: no seed brokers")
	}
	if c.Timeout <= 0 {
		return nil, errors.New("elr: timeout must be positive")
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Seeds...),
		kgo.ClientID("kafka_replication_exporter"),
		kgo.DialTimeout(c.Timeout),
		// The poller retries on its own schedule; a dead broker must cost
		// one timeout, not kgo's 30 s of retries.
		kgo.RetryTimeout(c.Timeout),
		kgo.BrokerMaxReadBytes(maxReadBytes),
		// This client never fetches; kgo only insists that a fetch
		// could fit in a read.
		kgo.FetchMaxBytes(maxReadBytes),
	}
	if c.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.TLS))
	}
	switch c.SASLMechanism {
	case "":
		if c.User != "" || c.Password != "" {
			return nil, errors.New("elr: SASL user or password given without a mechanism")
		}
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.User, Pass: c.Password}.AsMechanism()))
	case "scram-sha-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.User, Pass: c.Password}.AsSha256Mechanism()))
	case "scram-sha-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.User, Pass: c.Password}.AsSha512Mechanism()))
	case kafkaauth.MechanismOAuthBearer, kafkaauth.MechanismMSKIAM:
		if c.Tokens == nil {
			return nil, errors.New("elr: SASL " + c.SASLMechanism + " without a token source")
		}
		opts = append(opts, kgo.SASL(c.Tokens.Franz()))
	default:
		return nil, fmt.Errorf("elr: SASL mechanism %q: want plain, scram-sha-256, scram-sha-512, oauthbearer or aws-msk-iam", c.SASLMechanism)
	}
	return opts, nil
}

// NewClient makes a franz-go client of the same seeds, TLS and SASL as the
// Reader's, for the poller's other franz-go read (DescribeQuorum), which
// needs connections of its own: a broker answers one connection's requests
// in order, and DescribeQuorum waits on the controller.
func (c Config) NewClient() (*kgo.Client, error) {
	opts, err := c.clientOptions(maxResponseBytes)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(opts...)
}
