package kafkaauth

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// answerEndpoint is a token endpoint that answers every request with
// body(n) (n counts from 1) as contentType.
func answerEndpoint(t *testing.T, contentType string, body func(n int64) string) *httptest.Server {
	t.Helper()
	var requests atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body(requests.Add(1)))
	}))
	t.Cleanup(ts.Close)
	return ts
}

// jwtWithExp is an unsigned JWT whose exp claim is the JSON number exp, as
// written (an integer, a float, or a value in milliseconds).
func jwtWithExp(n int64, exp string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(fmt.Appendf(nil, `{"sub":"exporter","jti":"%d","exp":%s}`, n, exp)) + ".sig"
}

// TestPeerLifetimesThatOverflowFallBack: an exp or expires_in that does not
// fit time.Duration's nanoseconds (past 2262, an exp in milliseconds, a
// "never expires" 9999-12-31) must neither date the token in the past (and
// so refuse it) nor keep it past what the other field says; a lifetime
// that cannot be read is unknown, not expired.
func TestPeerLifetimesThatOverflowFallBack(t *testing.T) {
	nowMs := time.Now().Add(time.Hour).UnixMilli()
	json := func(token, expiresIn string) func(int64) string {
		return func(n int64) string {
			body := fmt.Sprintf(`{"access_token":%q,"token_type":"Bearer"`, fmt.Sprintf(token, n))
			if expiresIn != "" {
				body += `,"expires_in":` + expiresIn
			}
			return body + "}"
		}
	}
	jwt := func(exp, expiresIn string) func(int64) string {
		return func(n int64) string {
			body := fmt.Sprintf(`{"access_token":%q,"token_type":"Bearer"`, jwtWithExp(n, exp))
			if expiresIn != "" {
				body += `,"expires_in":` + expiresIn
			}
			return body + "}"
		}
	}
	for name, tc := range map[string]struct {
		contentType string
		body        func(int64) string
		kept        time.Duration // the first token is still served this long after
		renewed     time.Duration // and a new one by this long after
	}{
		"exp 9999-12-31, expires_in 1h":      {"application/json", jwt("253402300799", "3600"), 2870 * time.Second, 2890 * time.Second},
		"exp in milliseconds, expires_in 1h": {"application/json", jwt(fmt.Sprint(nowMs), "3600"), 2870 * time.Second, 2890 * time.Second},
		"exp 1e300, expires_in 1h":           {"application/json", jwt("1e300", "3600"), 2870 * time.Second, 2890 * time.Second},
		"exp in milliseconds alone":          {"application/json", jwt(fmt.Sprint(nowMs), ""), unknownLifetime - time.Second, unknownLifetime + time.Second},
		"exp 9999-12-31 alone":               {"application/json", jwt("253402300799", ""), 24 * time.Hour, 0},
		"form expires_in of 292 years": {
			"application/x-www-form-urlencoded",
			func(n int64) string {
				return fmt.Sprintf("access_token=opaque-%d&token_type=Bearer&expires_in=9223372037", n)
			}, 24 * time.Hour, 0,
		},
		"form expires_in past int64": {
			"application/x-www-form-urlencoded",
			func(n int64) string { return fmt.Sprintf("access_token=opaque-%d&expires_in=99999999999999999999", n) }, 24 * time.Hour, 0,
		},
		"expires_in negative": {"application/json", json("opaque-%d", "-1"), unknownLifetime - time.Second, unknownLifetime + time.Second},
		"expires_in below int32": {
			"application/json", json("opaque-%d", "-2147483649"),
			unknownLifetime - time.Second, unknownLifetime + time.Second,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ts := answerEndpoint(t, tc.contentType, tc.body)
			s, clock := newSource(t, nil, Flags{TokenURL: ts.URL + "/token"}, nil)
			first, err := s.Token(context.Background())
			if err != nil {
				t.Fatalf("the token was refused: %v", err)
			}
			clock.add(tc.kept)
			if got := mustToken(t, s); got != first {
				t.Fatalf("a new token after %s, want the first one kept", tc.kept)
			}
			if tc.renewed == 0 {
				return
			}
			clock.add(tc.renewed - tc.kept)
			if got := mustToken(t, s); got == first {
				t.Fatalf("still the first token after %s", tc.renewed)
			}
		})
	}
}
