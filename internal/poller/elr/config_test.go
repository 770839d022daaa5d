package elr

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testcert"
)

func TestConfigRejectsWhatCannotWork(t *testing.T) {
	seeds := []string{"127.0.0.1:9092"}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Timeout: time.Second}, "no seed brokers"},
		{Config{Seeds: seeds}, "timeout must be positive"},
		{Config{Seeds: seeds, Timeout: time.Second, SASLMechanism: "gssapi"}, `SASL mechanism "gssapi"`},
		{Config{Seeds: seeds, Timeout: time.Second, User: "admin"}, "without a mechanism"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestReadAuthenticatesWithEachSASLMechanism(t *testing.T) {
	c := newCluster(t,
		kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "plain-user", "plain-secret"),
		kfake.Superuser("SCRAM-SHA-256", "scram256-user", "scram256-secret"),
		kfake.Superuser("SCRAM-SHA-512", "scram512-user", "scram512-secret"),
		kfake.SeedTopics(2, "alpha"),
	)
	for _, tc := range []struct{ mechanism, user, password string }{
		{"plain", "plain-user", "plain-secret"},
		{"scram-sha-256", "scram256-user", "scram256-secret"},
		{"scram-sha-512", "scram512-user", "scram512-secret"},
	} {
		t.Run(tc.mechanism, func(t *testing.T) {
			r, err := New(Config{
				Seeds: c.ListenAddrs(), Timeout: 2 * time.Second,
				SASLMechanism: tc.mechanism, User: tc.user, Password: tc.password,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			res, err := read(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if res.Described["alpha"] != 2 {
				t.Errorf("Described = %v, want alpha's 2 partitions", res.Described)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		r, err := New(Config{
			Seeds: c.ListenAddrs(), Timeout: time.Second,
			SASLMechanism: "scram-sha-256", User: "scram256-user", Password: "guess",
		})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = read(t, r)
		if err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("Read with a wrong password = %v, want an authentication error", err)
		}
	})
}

func TestReadDialsTLS(t *testing.T) {
	tc := testcert.New(t)
	cert, pool := tc.TLS, tc.Pool
	c := newCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.SeedTopics(2, "alpha"))

	r, err := New(Config{Seeds: c.ListenAddrs(), Timeout: 2 * time.Second, TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := read(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Described["alpha"] != 2 {
		t.Errorf("Described = %v, want alpha's 2 partitions", res.Described)
	}

	// The same cluster refuses a client that does not trust its certificate.
	untrusting, err := New(Config{Seeds: c.ListenAddrs(), Timeout: time.Second, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusting.Close()
	_, err = read(t, untrusting)
	if err == nil {
		t.Error("Read trusted an unknown certificate authority")
	}
}
