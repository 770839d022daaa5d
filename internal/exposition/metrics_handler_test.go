package exposition

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func scrape(t *testing.T, h http.Handler, target, acceptEncoding string) (body string, hdr http.Header) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("want 200, got %d: %s", rec.Code, rec.Body)
	}
	var r io.Reader = rec.Body
	if rec.Header().Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rec.Header()
}

func TestAcceptsGzip(t *testing.T) {
	for enc, want := range map[string]bool{
		"":                      false,
		"gzip":                  true,
		"gzip, deflate, br":     true,
		"identity":              false,
		"*":                     false, // identity wins the tie, as in promhttp
		"gzip;q=0":              false,
		"gzip;q=0.5, *;q=0.1":   true,
		"identity;q=0.9, gzip":  true,
		"identity, gzip":        false,
		"br":                    false,
		"gzip;q=0.2,identity;q": true, // a malformed part is skipped
	} {
		h := http.Header{}
		if enc != "" {
			h.Set("Accept-Encoding", enc)
		}
		if got := acceptsGzip(h); got != want {
			t.Errorf("Accept-Encoding %q: want gzip %v, got %v", enc, want, got)
		}
	}
}

type blockingGatherer struct{ started, release chan struct{} }

func (g blockingGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.started <- struct{}{}
	<-g.release
	return nil, nil
}

func TestMetricsHandlerInFlightLimit(t *testing.T) {
	g := blockingGatherer{make(chan struct{}), make(chan struct{})}
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 1, 1)
	done := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		done <- rec.Code
	}()
	<-g.started
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("want 503 over the limit, got %d", rec.Code)
	}
	close(g.release)
	if code := <-done; code != http.StatusOK {
		t.Errorf("want the first scrape served, got %d", code)
	}
}

// countingGatherer counts Gather calls and holds each until released.
type countingGatherer struct {
	calls   atomic.Int32
	release chan struct{}
}

func (g *countingGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.calls.Add(1)
	<-g.release
	name, help, v := "kafka_replication_exporter_build_info", "A metric.", 1.0
	return []*dto.MetricFamily{{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum(), Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: &v}}}}}, nil
}

// Requests that arrive while a body is rendered share it: one render per
// encoding however many clients ask, and the gzip body is the identity body
// compressed.
func TestConcurrentScrapesShareOneRendering(t *testing.T) {
	g := &countingGatherer{release: make(chan struct{})}
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 0, 1)
	const each = 5
	bodies := make(chan [2]string, 2*each)
	for _, enc := range []string{"", "gzip"} {
		for range each {
			go func() {
				body, hdr := scrape(t, h, "/metrics", enc)
				bodies <- [2]string{hdr.Get("Content-Encoding"), body}
			}()
		}
	}
	waitFor(t, "every request to join a render", 10*time.Second, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		refs := 0
		for _, r := range h.rendering {
			refs += len(r.writers)
		}
		return refs == 2*each
	})
	close(g.release)
	got := map[string]string{}
	for range 2 * each {
		b := <-bodies
		if prev, ok := got[b[0]]; ok && prev != b[1] {
			t.Errorf("two bodies for Content-Encoding %q", b[0])
		}
		got[b[0]] = b[1]
	}
	if n := g.calls.Load(); n != 2 {
		t.Errorf("want one render per encoding (2), got %d", n)
	}
	if got[""] != got["gzip"] || !strings.Contains(got[""], "kafka_replication_exporter_build_info 1\n") {
		t.Errorf("want the same body in both encodings, got %q and %q", got[""], got["gzip"])
	}
	// Once written, a body is not reused: the next scrape renders afresh.
	scrape(t, h, "/metrics", "")
	if n := g.calls.Load(); n != 3 {
		t.Errorf("want a new render for a later scrape, got %d renders", n)
	}
}

// stuckWriter is a ResponseWriter whose client never reads: Write blocks
// until the handler sets a write deadline in the past.
type stuckWriter struct {
	hdr     http.Header
	writing chan struct{} // closed at the first Write
	cut     chan struct{} // closed by SetWriteDeadline
	once    sync.Once
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{hdr: http.Header{}, writing: make(chan struct{}), cut: make(chan struct{})}
}

func (w *stuckWriter) Header() http.Header { return w.hdr }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Write(p []byte) (int, error) {
	select {
	case <-w.writing:
	default:
		close(w.writing)
	}
	<-w.cut
	return 0, errors.New("i/o timeout")
}

func (w *stuckWriter) SetWriteDeadline(time.Time) error {
	w.once.Do(func() { close(w.cut) })
	return nil
}

// Clients that never read, arriving one after another, each get a body of
// their own; the handler keeps at most two bodies being written and cuts
// off the clients of older ones.
func TestStuckClientsHoldAtMostTwoBodies(t *testing.T) {
	g := &countingGatherer{release: make(chan struct{})}
	close(g.release)
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 0, 1)
	var ws []*stuckWriter
	done := make(chan struct{}, 10)
	for i := range 6 {
		w := newStuckWriter()
		ws = append(ws, w)
		go func() {
			h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
			done <- struct{}{}
		}()
		<-w.writing
		h.mu.Lock()
		n := len(h.written)
		h.mu.Unlock()
		if n > 2 {
			t.Fatalf("after %d stuck clients, %d bodies are being written", i+1, n)
		}
	}
	for i, w := range ws {
		select {
		case <-w.cut:
			if i >= len(ws)-2 {
				t.Errorf("client %d of the two newest bodies was cut off", i)
			}
		default:
			if i < len(ws)-2 {
				t.Errorf("client %d of an old body was not cut off", i)
			}
		}
	}
	for _, w := range ws {
		if err := w.SetWriteDeadline(time.Now()); err != nil {
			t.Error(err)
		}
	}
	for range ws {
		<-done
	}
	if len(h.written) != 0 {
		t.Errorf("bodies left after every client is gone: %d", len(h.written))
	}
}

// overlapGatherer counts the renders under way (a render starts with
// Gather) and the most at once, holding each until released.
type overlapGatherer struct {
	calls, now, most atomic.Int32
	release          chan struct{}
}

func (g *overlapGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.calls.Add(1)
	n := g.now.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	<-g.release
	g.now.Add(-1)
	return nil, nil
}

// Requests that cannot share a body (another encoding or name[]) wait for
// their turn to render: memory holds one render's buffers, not one per
// distinct query in flight.
func TestDistinctScrapesRenderOneAtATime(t *testing.T) {
	g := &overlapGatherer{release: make(chan struct{})}
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 0, 1)
	const distinct = 4
	codes := make(chan int, distinct)
	for i := range distinct {
		go func() {
			req := httptest.NewRequest("GET", "/metrics?name[]=kafka_replication_up&name[]=x"+strconv.Itoa(i), nil)
			if i%2 == 1 {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	// Give them time to start renders of their own, if they can.
	deadline := time.Now().Add(time.Second)
	for g.calls.Load() < distinct && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(g.release)
	for range distinct {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("want every scrape served in its turn, got %d", code)
		}
	}
	if most := g.most.Load(); most != 1 {
		t.Errorf("%d distinct scrapes rendered %d bodies at once, want 1", distinct, most)
	}
	if n := g.calls.Load(); n != distinct {
		t.Errorf("want one render per distinct scrape (%d), got %d", distinct, n)
	}
}

// A client that never reads holds its body, not the turn to render: the
// next scrape renders and is served while it is stuck.
func TestStuckClientDoesNotHoldTheRender(t *testing.T) {
	g := &countingGatherer{release: make(chan struct{})}
	close(g.release)
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 0, 1)
	w := newStuckWriter()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		close(done)
	}()
	<-w.writing
	served := make(chan struct{})
	go func() {
		scrape(t, h, "/metrics?name[]=kafka_replication_exporter_build_info", "gzip")
		close(served)
	}()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("a scrape waited for a client that never reads")
	}
	_ = w.SetWriteDeadline(time.Now())
	<-done
}

// A request whose client went away while it waited for its turn renders
// nothing.
func TestAbandonedScrapeIsNotRendered(t *testing.T) {
	g := &countingGatherer{release: make(chan struct{})}
	h := NewMetricsHandler(g, nil, slog.New(slog.DiscardHandler), 0, 1)
	first := make(chan struct{})
	go func() {
		scrape(t, h, "/metrics", "")
		close(first)
	}()
	waitFor(t, "the first render", 10*time.Second, func() bool { return g.calls.Load() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics?name[]=kafka_replication_up", nil).WithContext(ctx))
		close(gone)
	}()
	waitFor(t, "the second request to wait", 10*time.Second, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.rendering) == 2
	})
	cancel()
	time.Sleep(50 * time.Millisecond) // it may see that before its turn
	close(g.release)
	<-gone
	<-first
	if n := g.calls.Load(); n != 1 {
		t.Errorf("want the abandoned scrape not rendered, got %d renders", n)
	}
}

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
