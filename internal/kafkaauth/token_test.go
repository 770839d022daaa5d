package kafkaauth

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tokenServer is an OIDC token endpoint for client-credentials requests.
type tokenServer struct {
	*httptest.Server
	secret    atomic.Value // string
	expiresIn atomic.Int64 // seconds; 0: omitted
	jwtTTL    atomic.Int64 // seconds of the JWT's exp from now; 0: an opaque token
	status    atomic.Int64 // non-zero: answer this status with a server error
	requests  atomic.Int64
	lastForm  atomic.Value                  // string
	hold      atomic.Pointer[chan struct{}] // set: requests wait until it is closed
}

func newTokenServer(t *testing.T, useTLS bool) *tokenServer {
	ts := &tokenServer{}
	ts.secret.Store("s3cret")
	ts.expiresIn.Store(100)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := ts.requests.Add(1)
		if hold := ts.hold.Load(); hold != nil {
			<-*hold
		}
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		ts.lastForm.Store(r.Form.Encode())
		if s := ts.status.Load(); s != 0 {
			http.Error(w, "upstream down", int(s))
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if id != "exporter" || secret != ts.secret.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"Invalid client credentials"}`)
			return
		}
		access := fmt.Sprintf("opaque-%d", n)
		if ttl := ts.jwtTTL.Load(); ttl != 0 {
			access = unsignedJWT(n, time.Now().Add(time.Duration(ttl)*time.Second))
		}
		body := map[string]any{"access_token": access, "token_type": "Bearer"}
		if e := ts.expiresIn.Load(); e != 0 {
			body["expires_in"] = e
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	ts.Server = httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes of TestTLSTrustFollowsTheKafkaCA
	if useTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts
}

func unsignedJWT(n int64, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(fmt.Appendf(nil, `{"sub":"exporter","jti":"%d","exp":%d}`, n, exp.Unix())) + ".sig"
}

func writeSecret(t *testing.T, secret string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeClock starts at the real time (oauth2 computes the expiry from
// expires_in with the real clock) and moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newSource(t *testing.T, ts *tokenServer, f Flags, kafkaTLS *tls.Config) (*TokenSource, *fakeClock) {
	t.Helper()
	if f.TokenURL == "" {
		f.TokenURL = ts.URL + "/token"
	}
	if f.ClientID == "" {
		f.ClientID = "exporter"
	}
	if f.ClientSecretFile == "" {
		f.ClientSecretFile = writeSecret(t, "s3cret")
	}
	s, err := f.NewSource(MechanismOAuthBearer, kafkaTLS, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLogger(slog.New(slog.DiscardHandler))
	clock := &fakeClock{t: time.Now()}
	s.now = clock.now
	return s, clock
}

// within fails the test when f has not returned after d; a hang becomes a
// failure line instead of the test binary's timeout.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %s", what, d)
	}
}

func mustToken(t *testing.T, s *TokenSource) string {
	t.Helper()
	tok, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokenCachedUntilEightyPercentOfItsLifetime(t *testing.T) {
	ts := newTokenServer(t, false)
	s, clock := newSource(t, ts, Flags{}, nil)

	first := mustToken(t, s)
	clock.add(79 * time.Second)
	if got := mustToken(t, s); got != first || ts.requests.Load() != 1 {
		t.Fatalf("at 79%% of the lifetime: token %q after %d requests, want the cached %q after 1", got, ts.requests.Load(), first)
	}
	clock.add(2 * time.Second)
	if got := mustToken(t, s); got == first || ts.requests.Load() != 2 {
		t.Fatalf("at 81%% of the lifetime: token %q after %d requests, want a new one after 2", got, ts.requests.Load())
	}
}

// TestSlowRefreshFallsBackToTheValidToken: past 80% a caller waits for the
// new token (a re-authentication with a nearly spent one would give a
// session that ends at once), but no longer than its context: then it gets
// the still valid token.
func TestSlowRefreshFallsBackToTheValidToken(t *testing.T) {
	ts := newTokenServer(t, false)
	s, clock := newSource(t, ts, Flags{}, nil)
	first := mustToken(t, s)
	release := make(chan struct{})
	ts.hold.Store(&release)
	clock.add(85 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got, err := s.Token(ctx); err != nil || got != first {
		t.Fatalf("%q, %v; want the valid token once the caller's deadline passed", got, err)
	}
	close(release)
	if got := mustToken(t, s); got == first {
		t.Fatal("no new token once the endpoint answered")
	}
	if n := ts.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestCallerContextEndsTheWait: a caller without a token stops waiting when
// its context ends; the fetch goes on for the next one.
func TestCallerContextEndsTheWait(t *testing.T) {
	ts := newTokenServer(t, false)
	release := make(chan struct{})
	ts.hold.Store(&release)
	s, _ := newSource(t, ts, Flags{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Token(ctx); err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("err %v, want the caller's deadline", err)
	}
	close(release)
	mustToken(t, s)
	if n := ts.requests.Load(); n != 1 {
		t.Errorf("%d requests, want the one fetch both callers shared", n)
	}
}

func TestConcurrentCallersShareOneFetch(t *testing.T) {
	ts := newTokenServer(t, false)
	s, _ := newSource(t, ts, Flags{}, nil)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() { defer wg.Done(); mustToken(t, s) }()
	}
	wg.Wait()
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("16 concurrent callers made %d requests, want 1", n)
	}
}

func TestJWTExpiryShorterThanExpiresInWins(t *testing.T) {
	ts := newTokenServer(t, false)
	ts.expiresIn.Store(3600)
	ts.jwtTTL.Store(100)
	s, clock := newSource(t, ts, Flags{}, nil)
	first := mustToken(t, s)
	clock.add(85 * time.Second)
	if got := mustToken(t, s); got == first {
		t.Fatal("the JWT's exp (100s) did not schedule the refresh; expires_in (1h) did")
	}

	// Without expires_in the JWT's exp alone schedules it.
	ts.expiresIn.Store(0)
	s2, clock2 := newSource(t, ts, Flags{}, nil)
	first = mustToken(t, s2)
	clock2.add(85 * time.Second)
	if got := mustToken(t, s2); got == first {
		t.Fatal("no expires_in: the JWT's exp did not schedule the refresh")
	}
}

func TestOpaqueTokenWithoutLifetimeIsRefreshedAfterFiveMinutes(t *testing.T) {
	ts := newTokenServer(t, false)
	ts.expiresIn.Store(0)
	s, clock := newSource(t, ts, Flags{}, nil)
	first := mustToken(t, s)
	clock.add(unknownLifetime - time.Second)
	if mustToken(t, s) != first {
		t.Fatal("refreshed before unknownLifetime")
	}
	clock.add(2 * time.Second)
	if mustToken(t, s) == first {
		t.Fatal("not refreshed after unknownLifetime")
	}
}

func TestFailedRefreshKeepsTheValidTokenThenReportsExpiry(t *testing.T) {
	ts := newTokenServer(t, false)
	s, clock := newSource(t, ts, Flags{}, nil)
	first := mustToken(t, s)

	ts.status.Store(http.StatusServiceUnavailable)
	clock.add(85 * time.Second)
	if got := mustToken(t, s); got != first {
		t.Fatalf("a failed early refresh replaced the valid token with %q", got)
	}
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	// Within the hold-off the endpoint is not asked again.
	clock.add(time.Second)
	mustToken(t, s)
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("asked again within the hold-off: %d requests", n)
	}

	clock.add(20 * time.Second) // past the expiry
	_, err := s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "the last token expired at") {
		t.Fatalf("after expiry: err %v, want the endpoint's 503 and the expiry", err)
	}
	if !strings.Contains(err.Error(), "OAuth token endpoint "+ts.URL+"/token") {
		t.Errorf("error %q does not name the endpoint", err)
	}

	ts.status.Store(0)
	ts.expiresIn.Store(3600) // the fake clock is ahead of the server's by now
	clock.add(retryHoldOff)
	if got := mustToken(t, s); got == first {
		t.Fatal("no new token once the endpoint answers again")
	}
}

func TestWrongSecretIsRefused(t *testing.T) {
	ts := newTokenServer(t, false)
	s, _ := newSource(t, ts, Flags{ClientSecretFile: writeSecret(t, "wrong")}, nil)
	_, err := s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused the client credentials") || !strings.Contains(err.Error(), "invalid_client: Invalid client credentials") {
		t.Fatalf("err %v, want the refusal with invalid_client", err)
	}
}

func TestSecretFileIsReadAgainAtRefresh(t *testing.T) {
	ts := newTokenServer(t, false)
	secretFile := writeSecret(t, "s3cret")
	s, clock := newSource(t, ts, Flags{ClientSecretFile: secretFile}, nil)
	mustToken(t, s)
	ts.secret.Store("rotated")
	if err := os.WriteFile(secretFile, []byte("rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock.add(90 * time.Second)
	mustToken(t, s)
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, _ := newSource(t, nil, Flags{TokenURL: "http://" + addr + "/token"}, nil)
	_, err = s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err %v, want unreachable: connection refused", err)
	}
}

func TestTokenExpiredOnArrivalIsRefused(t *testing.T) {
	ts := newTokenServer(t, false)
	ts.expiresIn.Store(3600)
	ts.jwtTTL.Store(-120)
	s, _ := newSource(t, ts, Flags{}, nil)
	_, err := s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "expired at") || !strings.Contains(err.Error(), "check the clocks") {
		t.Fatalf("err %v, want the token's expiry", err)
	}
}

func TestScopesAndExtensions(t *testing.T) {
	ts := newTokenServer(t, false)
	s, _ := newSource(t, ts, Flags{Scopes: []string{"kafka", "metrics"}, Extensions: []string{"logicalCluster=lkc-1", "identityPoolId=pool-2"}}, nil)
	at, err := s.Sarama().Token()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ts.lastForm.Load().(string), "scope=kafka+metrics") {
		t.Errorf("form %q: scopes not sent", ts.lastForm.Load())
	}
	want := map[string]string{"logicalCluster": "lkc-1", "identityPoolId": "pool-2"}
	if fmt.Sprint(at.Extensions) != fmt.Sprint(want) {
		t.Errorf("sarama extensions %v, want %v", at.Extensions, want)
	}
	// The franz-go mechanism sends the same token and extensions (RFC 7628).
	_, first, err := s.Franz().Authenticate(context.Background(), "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	wantMsg := "n,,\x01auth=Bearer " + at.Token + "\x01identityPoolId=pool-2\x01logicalCluster=lkc-1\x01\x01"
	if string(first) != wantMsg {
		t.Errorf("franz-go first message %q, want %q", first, wantMsg)
	}
	if ts.requests.Load() != 1 {
		t.Errorf("%d requests for both clients, want 1", ts.requests.Load())
	}
}

func TestTLSTrustFollowsTheKafkaCA(t *testing.T) {
	ts := newTokenServer(t, true)
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	s, _ := newSource(t, ts, Flags{}, &tls.Config{RootCAs: pool, ServerName: "broker.example"})
	mustToken(t, s) // the Kafka server name is not used for the endpoint

	s2, _ := newSource(t, ts, Flags{}, nil)
	if _, err := s2.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("system roots: err %v, want a certificate error", err)
	}
	s3, _ := newSource(t, ts, Flags{}, &tls.Config{InsecureSkipVerify: true})
	mustToken(t, s3)
}

func TestFlagErrors(t *testing.T) {
	secret := writeSecret(t, "s")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	full := Flags{TokenURL: "https://idp.example/token", ClientID: "c", ClientSecretFile: secret}
	for name, tc := range map[string]struct {
		mech string
		f    Flags
		want string
	}{
		"no token url":       {MechanismOAuthBearer, Flags{ClientID: "c", ClientSecretFile: secret}, "needs --kafka.sasl.oauthbearer.token-url"},
		"not a url":          {MechanismOAuthBearer, Flags{TokenURL: "idp.example/token", ClientID: "c", ClientSecretFile: secret}, "want an http(s) URL"},
		"secret missing":     {MechanismOAuthBearer, Flags{TokenURL: full.TokenURL, ClientID: "c", ClientSecretFile: "/nonexistent/secret"}, "client-secret-file"},
		"secret empty":       {MechanismOAuthBearer, Flags{TokenURL: full.TokenURL, ClientID: "c", ClientSecretFile: empty}, "is empty"},
		"bad extension":      {MechanismOAuthBearer, Flags{TokenURL: full.TokenURL, ClientID: "c", ClientSecretFile: secret, Extensions: []string{"a-b=1"}}, "want KEY=VALUE"},
		"auth extension":     {MechanismOAuthBearer, Flags{TokenURL: full.TokenURL, ClientID: "c", ClientSecretFile: secret, Extensions: []string{"auth=x"}}, "reserved"},
		"oauth flags, scram": {"scram-sha-512", full, "need --kafka.sasl.mechanism=oauthbearer"},
		"scope, no sasl":     {"", Flags{Scopes: []string{"x"}}, "need --kafka.sasl.mechanism=oauthbearer"},
	} {
		if _, err := tc.f.NewSource(tc.mech, nil, time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", name, err, tc.want)
		}
	}
	if s, err := (&Flags{}).NewSource("plain", nil, time.Second); s != nil || err != nil {
		t.Errorf("plain: %v, %v; want no source and no error", s, err)
	}
	if _, err := full.NewSource(MechanismOAuthBearer, nil, time.Second); err != nil {
		t.Errorf("valid flags: %v", err)
	}
}

func TestRedactedURL(t *testing.T) {
	s, err := (&Flags{TokenURL: "https://user:pw@idp.example/token?x=1", ClientID: "c", ClientSecretFile: writeSecret(t, "s")}).
		NewSource(MechanismOAuthBearer, nil, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.what != "OAuth token endpoint https://idp.example/token" {
		t.Errorf("what %q", s.what)
	}
}
