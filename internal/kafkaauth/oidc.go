package kafkaauth

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/kafka-replication-exporter/kafka_replication_exporter/internal/secretfile"
)

// oidcFetcher asks an OIDC token endpoint for a token with the
// client-credentials grant. The secret file is read on every fetch, so a
// rotated Kubernetes Secret is picked up without a restart.
//
// One clientcredentials.Config is kept (TokenSource serializes the calls)
// because it remembers which way of sending the credentials the endpoint
// accepted: a new one would try the header, then the form, at every fetch.
type oidcFetcher struct {
	conf       clientcredentials.Config
	secretFile string
	client     *http.Client
}

func (f *oidcFetcher) fetch(ctx context.Context) (Token, error) {
	secret, err := readSecret(f.secretFile)
	if err != nil {
		return Token{}, err
	}
	f.conf.ClientSecret = secret
	t, err := f.conf.Token(context.WithValue(ctx, oauth2.HTTPClient, f.client))
	if err != nil {
		return Token{}, describeFetchError(err, secretRedactor(f.conf.ClientID, secret))
	}
	// Not t.Expiry: oauth2 computes it as time.Duration(expires_in) *
	// time.Second, which wraps for a lifetime past 292 years.
	tok := Token{Value: t.AccessToken}
	if secs, ok := number(t.Extra("expires_in")); ok && secs > 0 {
		tok.Expiry = time.Now().Add(seconds(secs))
	}
	if exp, ok := jwtExpiry(t.AccessToken); ok && (tok.Expiry.IsZero() || exp.Before(tok.Expiry)) {
		tok.Expiry = exp
	}
	return tok, nil
}

func readSecret(path string) (string, error) {
	b, err := secretfile.Read(path, secretfile.SecretLimit)
	if err != nil {
		return "", fmt.Errorf("--kafka.sasl.oauthbearer.client-secret-file: %w", err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("--kafka.sasl.oauthbearer.client-secret-file %s is empty", path)
	}
	return s, nil
}

// jwtExpiry reads the exp claim of a JWT without verifying it (the broker
// does that): the refresh is scheduled by it when the endpoint's expires_in
// is missing or longer. An opaque token has none.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 || f > maxExp {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*float64(time.Second))), true
}

// maxExp is 9999-12-31T23:59:59Z, the last second RFC 3339 can write and a
// common "never expires". A larger exp is not in seconds (one in
// milliseconds reads as the year 50000 and more) and is ignored.
const maxExp = 253402300799

// number is a JSON number, a number in a string (some endpoints send
// "expires_in":"3600") or a form value as oauth2.Token.Extra gives it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil
	}
	return 0, false
}

// seconds converts a positive number of seconds (NaN is not) to a Duration,
// saturating at the longest one (292 years) instead of wrapping below zero.
func seconds(f float64) time.Duration {
	if f >= float64(math.MaxInt64/int64(time.Second)) {
		return math.MaxInt64
	}
	return time.Duration(f * float64(time.Second))
}

// endpointClient is the HTTP client of the token endpoint: the proxy from
// the environment, and the trust of the Kafka TLS flags (CA file,
// insecure-skip-verify) but neither their server name nor their client
// certificate, which belong to the brokers.
func endpointClient(kafkaTLS *tls.Config, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if kafkaTLS != nil {
		tc.RootCAs = kafkaTLS.RootCAs
		tc.InsecureSkipVerify = kafkaTLS.InsecureSkipVerify //nolint:gosec // the explicit --kafka.tls.insecure-skip-verify
	}
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr, Timeout: timeout}
}
