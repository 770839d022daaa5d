package kafkaauth

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// Token is one bearer token and when it stops being valid.
type Token struct {
	Value  string
	Issued time.Time // when it was asked for (set by TokenSource)
	Expiry time.Time // zero: unknown (refreshed after unknownLifetime)
}

// fetchFunc asks the token endpoint (or the signer) for a new token.
type fetchFunc func(ctx context.Context) (Token, error)

const (
	// refreshFactor is the part of a token's lifetime after which a new one
	// is fetched, as Kafka's sasl.login.refresh.window.factor default.
	refreshFactor = 0.8
	// unknownLifetime is how long a token with neither expires_in nor a
	// JWT exp claim is used before a new one is fetched.
	unknownLifetime = 5 * time.Minute
	// retryHoldOff is how long a failure is answered from memory: the
	// connections of one admin refresh then cost the endpoint one request,
	// not one each.
	retryHoldOff = 2 * time.Second
)

// TokenSource caches one token for every Kafka connection of the process.
// It is safe for concurrent use; concurrent callers wait for one fetch.
type TokenSource struct {
	what       string // for errors and logs: "OAuth token endpoint https://…"
	fetch      fetchFunc
	timeout    time.Duration // per fetch
	extensions map[string]string
	now        func() time.Time

	mu       sync.Mutex
	logger   *slog.Logger
	cur      Token
	lastErr  error         // the last fetch's error, nil after a success
	retryAt  time.Time     // no new fetch before this after a failure
	inflight chan struct{} // closed when the running fetch ends; nil: none
}

func newTokenSource(what string, fetch fetchFunc, timeout time.Duration, extensions map[string]string) *TokenSource {
	return &TokenSource{what: what, fetch: fetch, timeout: timeout, extensions: extensions, logger: slog.Default(), now: time.Now}
}

// SetLogger sets where the source logs a change between failing and
// fetching again; a nil source ignores it.
func (s *TokenSource) SetLogger(l *slog.Logger) {
	if s == nil || l == nil {
		return
	}
	s.mu.Lock()
	s.logger = l
	s.mu.Unlock()
}

// Extensions are the SASL extensions sent with every token (a copy).
func (s *TokenSource) Extensions() map[string]string { return maps.Clone(s.extensions) }

// Token returns the cached token, fetching a new one when 80% of its
// lifetime has passed or it has none. When a fetch fails the current token
// is returned while it is still valid; without one the error is returned.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	// sarama passes context.Background(): a fetch that does not keep its
	// deadline must still not hold a caller, so none waits longer than
	// twice the fetch's timeout, by when a fetch that keeps it has failed.
	bound := 2 * s.timeout
	ctx, cancel := context.WithTimeoutCause(ctx, bound, fmt.Errorf("no token within %s", bound))
	defer cancel()
	for {
		s.mu.Lock()
		now := s.now()
		valid := s.cur.Value != "" && (s.cur.Expiry.IsZero() || now.Before(s.cur.Expiry))
		switch {
		case valid && (now.Before(refreshAt(s.cur)) || now.Before(s.retryAt)):
			v := s.cur.Value
			s.mu.Unlock()
			return v, nil
		case !valid && now.Before(s.retryAt):
			err := s.lastErr
			s.mu.Unlock()
			return "", err
		}
		// Past 80% the caller waits for the new token even though the
		// current one is valid: a broker sets the session of a
		// (re-)authentication to end with its token, and a nearly spent
		// token would make that session end at once.
		if s.inflight == nil {
			s.inflight = make(chan struct{})
			go s.refresh(s.inflight, now)
		}
		done, fallback := s.inflight, s.cur.Value
		s.mu.Unlock()
		select {
		case <-done: // the fetch set a new token or a hold-off: look again
		case <-ctx.Done():
			if valid {
				return fallback, nil
			}
			return "", fmt.Errorf("%s: %w", s.what, context.Cause(ctx))
		}
	}
}

// refresh runs one fetch, bounded by the source's timeout rather than by
// any one caller, and records what it got.
func (s *TokenSource) refresh(done chan struct{}, issued time.Time) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	tok, err := s.fetch(ctx)
	tok.Issued = issued

	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight = nil
	now := s.now()
	if err == nil {
		err = checkExpiry(tok, now)
	}
	if err != nil {
		valid := s.cur.Value != "" && (s.cur.Expiry.IsZero() || now.Before(s.cur.Expiry))
		err = fmt.Errorf("%s: %w", s.what, err)
		if s.cur.Value != "" && !valid {
			err = fmt.Errorf("%w; the last token expired at %s", err, s.cur.Expiry.UTC().Format(time.RFC3339))
		}
		if s.lastErr == nil {
			// Once per change of state; every caller still gets the error.
			s.logger.Warn("Cannot get a Kafka SASL/OAUTHBEARER token", "err", err, "current_token_valid_until", expiryAttr(s.cur, valid))
		}
		s.lastErr, s.retryAt = err, now.Add(retryHoldOff)
		return
	}
	if s.lastErr != nil {
		s.logger.Info("Kafka SASL/OAUTHBEARER token fetched again", "source", s.what)
	}
	s.logger.Debug("Fetched a Kafka SASL/OAUTHBEARER token", "source", s.what, "expiry", tok.Expiry)
	s.cur, s.lastErr, s.retryAt = tok, nil, time.Time{}
}

// refreshAt is when a new token should be fetched in place of t.
func refreshAt(t Token) time.Time {
	if t.Expiry.IsZero() {
		return t.Issued.Add(unknownLifetime)
	}
	return t.Issued.Add(time.Duration(refreshFactor * float64(t.Expiry.Sub(t.Issued))))
}

// checkExpiry refuses a token that is expired when it arrives: a broker
// would refuse it too, with a less helpful message.
func checkExpiry(t Token, now time.Time) error {
	if !t.Expiry.IsZero() && !now.Before(t.Expiry) {
		return fmt.Errorf("the token it issued expired at %s, %s before it arrived (check the clocks of this host and of the identity provider)",
			t.Expiry.UTC().Format(time.RFC3339), now.Sub(t.Expiry).Round(time.Second))
	}
	return nil
}

func expiryAttr(t Token, valid bool) string {
	switch {
	case !valid:
		return "none"
	case t.Expiry.IsZero():
		return "unknown"
	}
	return t.Expiry.UTC().Format(time.RFC3339)
}
