package kafkanet

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/xdg-go/scram"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/testcert"
)

// hostileTimeout is what each test gives sarama per dial and request: a
// client that waited for the announced bytes instead of failing would run
// into it, and the tests check they finish well before.
const hostileTimeout = 10 * time.Second

func clientConfig() *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = sarama.V3_9_0_0
	conf.Net.DialTimeout = hostileTimeout
	conf.Net.ReadTimeout = hostileTimeout
	conf.Net.WriteTimeout = hostileTimeout
	conf.Metadata.Retry.Max = 0
	return conf
}

// hostilePeer listens on 127.0.0.1 and answers every connection's first
// bytes with answer, then holds the connection open until the test ends, as
// a server that is not a broker would. With tlsConf it speaks TLS first.
func hostilePeer(t *testing.T, answer []byte, tlsConf *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tlsConf != nil {
		l = tls.NewListener(l, tlsConf)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 512)
				if _, err := conn.Read(buf); err != nil {
					return
				}
				if _, err := conn.Write(answer); err != nil {
					return
				}
				// A generous peer: it would stream the body it announced.
				go func() { _, _ = io.Copy(io.Discard, conn) }()
				<-done
			}()
		}
	}()
	return l.Addr().String()
}

// heapGrowth runs f and returns the bytes allocated meanwhile.
func heapGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const maxGrowth = 64 << 20

var hostileAnswers = map[string][]byte{
	"HTTP server": []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"),
	"0x7fffffff":  {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0},
	"0xffffffff":  {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
	"size 2":      {0, 0, 0, 2, 0, 0},
}

// The ApiVersions handshake of broker.Open is where sarama v1.61.1 trusts the
// size: through the Dialer it fails with a *FrameError at once instead of
// allocating gigabytes, and sarama closes the connection.
func TestBrokerOpenAgainstHostilePeers(t *testing.T) {
	for name, answer := range hostileAnswers {
		for _, withTLS := range []bool{false, true} {
			cert := testcert.New(t)
			serverTLS, clientTLS := cert.Server(), cert.Client()
			if !withTLS {
				serverTLS, clientTLS = nil, nil
			}
			addr := hostilePeer(t, answer, serverTLS)
			conf := clientConfig()
			conf.Net.TLS.Enable = withTLS
			conf.Net.TLS.Config = clientTLS
			if err := Install(conf); err != nil {
				t.Fatal(err)
			}
			var connected bool
			var err error
			start := time.Now()
			grown := heapGrowth(func() {
				b := sarama.NewBroker(addr)
				if err := b.Open(conf); err != nil {
					t.Fatal(err)
				}
				connected, err = b.Connected() // waits for Open to finish
				b.Close()
			})
			var fe *FrameError
			if connected || !errors.As(err, &fe) {
				t.Errorf("%s (TLS %v): want no connection and a *FrameError, got connected=%v err=%v", name, withTLS, connected, err)
			}
			if took := time.Since(start); took > hostileTimeout/2 {
				t.Errorf("%s (TLS %v): took %s, want a fast failure", name, withTLS, took)
			}
			if grown > maxGrowth {
				t.Errorf("%s (TLS %v): %d MB allocated, want under %d MB", name, withTLS, grown>>20, maxGrowth>>20)
			}
			t.Logf("%s (TLS %v): %v; %.1f MB allocated", name, withTLS, err, float64(grown)/(1<<20))
		}
	}
}

// A sarama.Client bootstrapping from an HTTP server gives up quickly and
// small, as the admin poller's connection does.
func TestNewClientAgainstHTTPServer(t *testing.T) {
	addr := hostilePeer(t, hostileAnswers["HTTP server"], nil)
	conf := clientConfig()
	if err := Install(conf); err != nil {
		t.Fatal(err)
	}
	var err error
	start := time.Now()
	grown := heapGrowth(func() {
		var c sarama.Client
		if c, err = sarama.NewClient([]string{addr}, conf); err == nil {
			c.Close()
		}
	})
	if err == nil {
		t.Fatal("want an error from a client bootstrapped from an HTTP server")
	}
	if took := time.Since(start); took > hostileTimeout/2 {
		t.Errorf("took %s, want a fast failure", took)
	}
	if grown > maxGrowth {
		t.Errorf("%d MB allocated, want under %d MB", grown>>20, maxGrowth>>20)
	}
}

type scramClient struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (s *scramClient) Begin(user, password, authzID string) error {
	c, err := s.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	s.conv = c.NewConversation()
	return nil
}
func (s *scramClient) Step(challenge string) (string, error) { return s.conv.Step(challenge) }
func (s *scramClient) Done() bool                            { return s.conv.Done() }

// A real (in-process) broker with TLS and SASL still answers through the
// Dialer: TLS is done by the Dialer, SASL by sarama above the bounded
// connection. With a tiny limit the same exchange fails with a *FrameError,
// which shows the responses really pass through the check, decrypted.
func TestSaramaThroughDialerWithTLSAndSASL(t *testing.T) {
	for _, mech := range []sarama.SASLMechanism{sarama.SASLTypePlaintext, sarama.SASLTypeSCRAMSHA512} {
		cert := testcert.New(t)
		serverTLS, clientTLS := cert.Server(), cert.Client()
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.TLS(serverTLS), kfake.EnableSASL(),
			kfake.Superuser(string(mech), "prom", "s3cret"), kfake.SeedTopics(3, "orders"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cluster.Close)
		newConf := func() *sarama.Config {
			conf := clientConfig()
			conf.Net.TLS.Enable = true
			conf.Net.TLS.Config = clientTLS
			conf.Net.SASL.Enable = true
			conf.Net.SASL.Mechanism = mech
			conf.Net.SASL.User = "prom"
			conf.Net.SASL.Password = "s3cret"
			conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{hash: scram.SHA512} }
			if err := Install(conf); err != nil {
				t.Fatal(err)
			}
			if err := conf.Validate(); err != nil {
				t.Fatal(err)
			}
			return conf
		}

		conf := newConf()
		if conf.Net.TLS.Enable || conf.Net.Proxy.Dialer.(*Dialer).TLS != clientTLS {
			t.Fatalf("%s: want the TLS configuration moved into the Dialer", mech)
		}
		client, err := sarama.NewClient(cluster.ListenAddrs(), conf)
		if err != nil {
			t.Fatalf("%s: %v", mech, err)
		}
		parts, err := client.Partitions("orders")
		client.Close()
		if err != nil || len(parts) != 3 {
			t.Errorf("%s: want 3 partitions of orders, got %v, %v", mech, parts, err)
		}

		conf = newConf()
		conf.Net.Proxy.Dialer.(*Dialer).MaxFrameSize = 8
		b := sarama.NewBroker(cluster.ListenAddrs()[0])
		if err := b.Open(conf); err != nil {
			t.Fatal(err)
		}
		_, err = b.Connected()
		b.Close()
		var fe *FrameError
		if !errors.As(err, &fe) {
			t.Errorf("%s: with an 8-byte limit want a *FrameError, got %v", mech, err)
		}
	}
}

func TestInstallRefuses(t *testing.T) {
	conf := clientConfig()
	conf.Net.Proxy.Enable = true
	conf.Net.Proxy.Dialer = &net.Dialer{}
	if err := Install(conf); err == nil {
		t.Error("want an error when a proxy dialer is already set")
	}
	conf = clientConfig()
	conf.Net.SASL.Enable = true
	conf.Net.SASL.Version = sarama.SASLHandshakeV0
	if err := Install(conf); err == nil {
		t.Error("want an error for SASL handshake v0")
	}
}
