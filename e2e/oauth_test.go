package e2e

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/harness"
	"github.com/kafka-replication-exporter/kafka_replication_exporter/e2e/stack"
)

// oauthTokenLifetime is short so that the scenario sees several refreshes,
// and the brokers' sessions (connections.max.reauth.ms) end with the token.
const oauthTokenLifetime = 6 * time.Second

// TestOAuthBearer points the exporter at a SASL_SSL listener that validates
// SASL/OAUTHBEARER tokens with Kafka's own OIDC support
// (OAuthBearerValidatorCallbackHandler, keys from a JWKS URL), with an
// identity provider in the test: an HTTPS token endpoint for the
// client-credentials grant, signed by the same CA as the brokers, that
// issues RS256 JWTs living 6 s. The exporter authenticates with both of its
// clients, refreshes its token across several lifetimes without one failed
// request, and reports up 0 with a clear reason for a wrong secret, an
// expired token, an unreachable endpoint and a token the brokers refuse
// (signed with a key not in the JWKS), and once the endpoint stops answering
// and the last token expires.
//
// How (4.4.0): audience and issuer checked, connections.max.reauth.ms on so sessions end with their token; Kafka 4
// needs the JWKS URL in the JVM property org.apache.kafka.sasl.oauthbearer.allowed.urls, set through
// harness.Options.JVMArgs; the token endpoint is HTTPS under the brokers' CA, so --kafka.tls.ca-file serves both.
// The exporter reaches up 1 and exports the ELR series (so both sarama and franz-go authenticated), then over three
// token lifetimes every scrape is up 1, no admin request fails and at least 3 tokens are fetched. The reasons
// logged: "refused the client credentials (401 Unauthorized, invalid_client: …)", "… expired at …, 2m1s before it
// arrived", "unreachable …: connection refused", the brokers' "SASL Authentication failed: … invalid credentials
// with SASL mechanism OAUTHBEARER" (which shows they check signatures), and "gave no token (503 …); the last token
// expired at …". 44–66 s alone.
func TestOAuthBearer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Kafka cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	sasl := secureCluster(t, dir)
	idp := startTestIdP(t, sasl.keystore)

	opts := sasl.options(t, map[string]string{
		"sasl.enabled.mechanisms":                                               "OAUTHBEARER",
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config":                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"sasl.oauthbearer.jwks.endpoint.url":                                    idp.jwksURL,
		"sasl.oauthbearer.expected.audience":                                    "kafka",
		"sasl.oauthbearer.expected.issuer":                                      idp.issuer,
		// Sessions end with their token, so the clients must
		// re-authenticate with a fresh one (KIP-368).
		"connections.max.reauth.ms": "600000",
	})
	// Kafka 4 fetches no URL it was not allowed to.
	opts.JVMArgs = []string{"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + idp.jwksURL + "," + idp.tokenURL}
	c := harness.StartT(t, opts)
	must(t, c.CreateTopic(ctx, harness.Topic{Name: "oauth", Assignment: [][]int32{{1, 2, 3}}}))
	produceOK(ctx, t, c, "oauth", 3, sarama.WaitForAll)

	closed := fmt.Sprintf("https://127.0.0.1:%d/token", freeTCPPort(t))
	run := func(name, clientID, secret, tokenURL string) (url, logPath string) {
		secretFile := filepath.Join(dir, name+".secret")
		must(t, os.WriteFile(secretFile, []byte(secret+"\n"), 0o600))
		logPath = filepath.Join(dir, name+".log")
		url = runAdminExporter(t, logPath,
			sasl.server(1), "--kafka.broker-id=1", "--scope=cluster",
			"--kafka.refresh-interval=1s", "--kafka.request-timeout=5s",
			"--kafka.tls.enabled", "--kafka.tls.ca-file="+sasl.caFile,
			"--kafka.sasl.mechanism=oauthbearer", "--kafka.sasl.oauthbearer.token-url="+tokenURL,
			"--kafka.sasl.oauthbearer.client-id="+clientID, "--kafka.sasl.oauthbearer.client-secret-file="+secretFile,
			"--kafka.sasl.oauthbearer.scope=kafka", "--kafka.sasl.oauthbearer.extension=tenant=e2e")
		return url, logPath
	}
	good, goodLog := run("good", "exporter", "s3cret", idp.tokenURL)
	type failing struct{ name, url, log, reason string }
	var bad []failing
	for _, f := range []struct{ name, id, secret, tokenURL, reason string }{
		{"wrong-secret", "exporter", "wrong", idp.tokenURL, "refused the client credentials (401 Unauthorized, invalid_client"},
		{"expired", "expired", "s3cret", idp.tokenURL, "check the clocks"},
		{"unreachable", "exporter", "s3cret", closed, "unreachable or no valid answer"},
		// The brokers do check the signature: a token signed with a key
		// their JWKS does not hold is refused by them, not by the exporter.
		{"forged", "forged", "s3cret", idp.tokenURL, "SASL Authentication failed"},
	} {
		url, log := run(f.name, f.id, f.secret, f.tokenURL)
		bad = append(bad, failing{f.name, url, log, f.reason})
	}

	// Both clients authenticated: sarama for Metadata, franz-go for the ELR
	// series (DescribeTopicPartitions).
	waitMetrics(ctx, t, good, "OAUTHBEARER: up 1, the topic's partition seen and DescribeTopicPartitions answered", func(m stack.Metrics) bool {
		up, _ := m.Value("kafka_replication_up", nil)
		replicas, ok := m.Value("kafka_replication_partition_replicas", map[string]string{"topic": "oauth", "partition": "0"})
		errs, sent := m.Value("kafka_replication_admin_request_errors_total", map[string]string{"request": "describe_topic_partitions"})
		return up == 1 && ok && replicas == 3 && sent && errs == 0
	})
	for _, b := range bad {
		waitMetrics(ctx, t, b.url, b.name+": up 0 and metadata errors counted", func(m stack.Metrics) bool {
			up, okUp := m.Value("kafka_replication_up", nil)
			errs, _ := m.Value("kafka_replication_admin_request_errors_total", map[string]string{"request": "metadata"})
			return okUp && up == 0 && errs > 0
		})
		waitLog(t, b.log, b.reason)
	}

	// Several token lifetimes: every scrape up 1, no request failed (the
	// first refreshes may have timed out while the brokers warmed up), and
	// the brokers' re-authentications fetched fresh tokens.
	m, err := stack.Scrape(ctx, good)
	must(t, err)
	errsBefore := m.Sum("kafka_replication_admin_request_errors_total", nil)
	issuedBefore := idp.issued("exporter")
	deadline := time.Now().Add(3*oauthTokenLifetime + 2*time.Second)
	for time.Now().Before(deadline) {
		m, err := stack.Scrape(ctx, good)
		must(t, err)
		if up, _ := m.Value("kafka_replication_up", nil); up != 1 {
			t.Fatalf("up %v during token refreshes; exporter log:\n%s", up, tailFile(goodLog))
		}
		if errs := m.Sum("kafka_replication_admin_request_errors_total", nil) - errsBefore; errs != 0 {
			t.Fatalf("%v requests failed during token refreshes; exporter log:\n%s", errs, tailFile(goodLog))
		}
		time.Sleep(500 * time.Millisecond)
	}
	n := idp.issued("exporter") - issuedBefore
	if n < 3 {
		t.Errorf("%d tokens issued over %v of %v tokens, want at least 3", n, 3*oauthTokenLifetime, oauthTokenLifetime)
	}
	t.Logf("%d tokens issued over %v, every scrape up 1, no request failed", n, 3*oauthTokenLifetime+2*time.Second)
	if b, _ := os.ReadFile(goodLog); strings.Contains(string(b), "Cannot get a Kafka SASL/OAUTHBEARER token") {
		t.Errorf("a token refresh failed:\n%s", tailFile(goodLog))
	}
	// The endpoint stops answering: the exporter keeps its token until it
	// expires, then says so.
	idp.down.Store(true)
	waitMetrics(ctx, t, good, "endpoint down, last token expired: up 0", func(m stack.Metrics) bool {
		up, ok := m.Value("kafka_replication_up", nil)
		return ok && up == 0
	})
	waitLog(t, goodLog, "the last token expired at")
}

// testIdP is an OIDC provider for the test: a JWKS over HTTP for the
// brokers and a client-credentials token endpoint over HTTPS for the exporter.
type testIdP struct {
	key, forger               *rsa.PrivateKey // forger: a key the JWKS does not publish
	issuer, jwksURL, tokenURL string
	down                      atomic.Bool // the token endpoint answers 503

	mu     sync.Mutex
	counts map[string]int
}

const testIdPKeyID = "kre-e2e"

func startTestIdP(t *testing.T, keystore string) *testIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	idp := &testIdP{key: key, forger: forger, counts: map[string]int{}}

	jwks, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	idp.jwksURL = "http://" + jwks.Addr().String() + "/jwks"
	idp.issuer = "http://" + jwks.Addr().String()
	jwksSrv := &http.Server{Handler: http.HandlerFunc(idp.serveJWKS), ReadHeaderTimeout: 5 * time.Second}
	go serveUntilClosed(t, jwksSrv, jwks)
	t.Cleanup(func() { jwksSrv.Close() })

	pem, err := os.ReadFile(keystore) // key and chain in one PEM file
	must(t, err)
	cert, err := tls.X509KeyPair(pem, pem)
	must(t, err)
	tl, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	must(t, err)
	idp.tokenURL = "https://" + tl.Addr().String() + "/token"
	tokSrv := &http.Server{Handler: http.HandlerFunc(idp.serveToken), ReadHeaderTimeout: 5 * time.Second}
	go serveUntilClosed(t, tokSrv, tl)
	t.Cleanup(func() { tokSrv.Close() })
	return idp
}

// serveUntilClosed serves srv on l; an error other than the Close at the end
// of the test fails the test.
func serveUntilClosed(t *testing.T, srv *http.Server, l net.Listener) {
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		t.Error(err)
	}
}

func (idp *testIdP) issued(client string) int {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return idp.counts[client]
}

func (idp *testIdP) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	enc := base64.RawURLEncoding.EncodeToString
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": testIdPKeyID,
		"n": enc(idp.key.N.Bytes()), "e": enc(big.NewInt(int64(idp.key.E)).Bytes()),
	}}})
}

// serveToken answers the client-credentials grant: client "exporter" with
// secret "s3cret" gets a token living oauthTokenLifetime; client "expired"
// gets one that expired two minutes ago (beyond the brokers' 30 s skew);
// client "forged" gets one signed with a key the JWKS does not publish.
func (idp *testIdP) serveToken(w http.ResponseWriter, r *http.Request) {
	if idp.down.Load() {
		http.Error(w, "identity provider down for maintenance", http.StatusServiceUnavailable)
		return
	}
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" {
		http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	w.Header().Set("Content-Type", "application/json")
	if (id != "exporter" && id != "expired" && id != "forged") || secret != "s3cret" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Invalid client or client credentials"}`))
		return
	}
	now := time.Now()
	exp := now.Add(oauthTokenLifetime)
	if id == "expired" {
		exp = now.Add(-2 * time.Minute)
	}
	signer := idp.key
	if id == "forged" {
		signer = idp.forger
	}
	token, err := idp.sign(signer, map[string]any{
		"iss": idp.issuer, "sub": id, "aud": "kafka", "scope": r.Form.Get("scope"),
		"iat": now.Unix(), "exp": exp.Unix(), "jti": fmt.Sprint(now.UnixNano()),
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	idp.mu.Lock()
	idp.counts[id]++
	idp.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": token, "token_type": "Bearer", "expires_in": int(time.Until(exp).Seconds()),
	})
}

// sign makes an RS256 JWT (RFC 7515 compact serialization).
func (idp *testIdP) sign(key *rsa.PrivateKey, claims map[string]any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": testIdPKeyID})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding.EncodeToString
	signing := enc(header) + "." + enc(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + enc(sig), nil
}

// waitLog waits until the exporter's log contains want.
func waitLog(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if i := strings.Index(string(b), want); i >= 0 {
			line := string(b[strings.LastIndexByte(string(b[:i]), '\n')+1:])
			line, _, _ = strings.Cut(line, "\n")
			t.Logf("%s: %s", filepath.Base(path), line)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q within 30s; log:\n%s", filepath.Base(path), want, tailFile(path))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func tailFile(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
