package kafkaauth

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTokenWaitIsBoundedWithoutADeadline: sarama asks for a token with
// context.Background(); a fetch that ignores its own deadline must still
// not hold that caller, nor make a pile of fetches or waiters.
func TestTokenWaitIsBoundedWithoutADeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var fetches atomic.Int64
	stuck := func(ctx context.Context) (Token, error) {
		fetches.Add(1)
		<-release // ignores ctx, as a read of a named pipe does
		return Token{}, errors.New("released")
	}
	const timeout = 100 * time.Millisecond
	s := newTokenSource("stuck fetcher", stuck, timeout, nil)
	s.SetLogger(slog.New(slog.DiscardHandler))
	base := runtime.NumGoroutine()

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	within(t, 3*time.Second, "40 callers of sarama's Token while the fetch is stuck", func() {
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Sarama().Token()
				errs <- err
			}()
		}
		wg.Wait()
	})
	close(errs)
	for err := range errs {
		if err == nil || !strings.Contains(err.Error(), "stuck fetcher") {
			t.Fatalf("err %v, want one that names the source", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d fetches started, want the one all callers shared", n)
	}
	// Only the stuck fetch itself is left.
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > base+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+1 {
		t.Errorf("%d goroutines after the callers returned, want at most %d", n, base+1)
	}
}
